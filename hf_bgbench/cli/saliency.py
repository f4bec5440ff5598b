"""``bgbench saliency MODEL --benchmark rival10|in9 --data DIR``: saliency alignment (Grad-CAM
vs the object mask)."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from hf_bgbench.cli._common import (
    add_model_arguments,
    model_options,
    non_negative_int,
    positive_int,
)


def register(sub: argparse._SubParsersAction) -> None:
    from hf_bgbench.inference.cam import METHODS

    p = sub.add_parser(
        "saliency",
        help="saliency alignment: does the model's Grad-CAM sit on the object?",
        description=(
            "Grad-CAM (grad-cam package) on the predicted or true class of every image of the "
            "benchmark's mask variant (IN-9: original + mask; RIVAL10: ordinary + object_mask), "
            "compared with the object mask: IoU after max-normalising and binarising at 0.5, "
            "share of saliency inside the mask, and delta density (mean saliency on the object "
            "minus on the background); per class, overall with bootstrap intervals, and on "
            "RIVAL10 per attribute. Writes saliency.json, saliency.md, saliency.png, "
            "saliency_gallery.png (the images with the lowest delta density) and "
            "saliency_per_image.parquet to --output."
        ),
    )
    p.add_argument(
        "--data",
        default=None,
        help="Hub-layout folder or Hub dataset id whose mask variant has object masks, or the "
        "official release (default: the benchmark's Hub repo, e.g. bgbench/in9)",
    )
    p.add_argument(
        "--target",
        choices=("predicted", "true"),
        default="predicted",
        help="class whose Grad-CAM is taken: the model's predicted class, or the true class "
        "(for a 1000-class model: the highest-scoring ImageNet class mapped to it)",
    )
    p.add_argument(
        "--target-layer",
        default=None,
        metavar="NAME",
        help="dotted module path of the layer to explain, e.g. layer4, blocks.-1.norm1 "
        "(default: chosen from the model: the last feature map of a CNN, the last block's "
        "norm1 of a ViT)",
    )
    p.add_argument("--method", choices=tuple(METHODS), default="gradcam", help="CAM method")
    p.add_argument(
        "--max-images", type=positive_int, default=None, help="seeded random subset (recorded)"
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the subset and the bootstrap")
    p.add_argument(
        "--gallery",
        type=non_negative_int,
        default=16,
        help="images with the lowest delta density drawn in saliency_gallery.png (0: none)",
    )
    p.add_argument("--output", type=Path, default=Path("bgbench_saliency"), help="output folder")
    from hf_bgbench.tasks.saliency import ACCELERATOR_BATCH_SIZE

    add_model_arguments(p, gpu_batch_size=ACCELERATOR_BATCH_SIZE)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from hf_bgbench.render import render_table
    from hf_bgbench.tasks.saliency import run_saliency

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s: %(message)s")
    results = run_saliency(
        args.model,
        args.data,
        benchmark=args.benchmark,
        target=args.target,
        target_layer=args.target_layer,
        method=args.method,
        max_images=args.max_images,
        seed=args.seed,
        gallery=args.gallery,
        **model_options(args),
        output_dir=args.output,
    )
    print(render_table(results))
    gallery = ", saliency_gallery.png" if results["gallery_ids"] else ""
    print(
        f"\nwrote {args.output / 'saliency.json'}, saliency.md, saliency_model_index.yaml, "
        f"saliency.png{gallery}, saliency_per_image.parquet"
    )
    return 0
