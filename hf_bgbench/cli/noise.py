"""``bgbench noise MODEL --benchmark rival10|in9``: noise on the object vs the background (RFS)."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from hf_bgbench.cli._common import add_model_arguments, model_options, positive_int, variant_list


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "noise",
        help="noise analysis: Gaussian noise on the object vs the background (RFS, iRFS)",
        description=(
            "RIVAL10's noise analysis on any benchmark with object masks (RIVAL10 ordinary / "
            "object_mask, IN-9 original / mask, test split): each image gets Gaussian noise "
            "on the object only (accuracy a_fg) and on the background only (a_bg), --trials "
            "draws per level. Relative foreground sensitivity RFS = (a_bg - a_fg) / "
            "(2 min(ā, 1 - ā)) per level, per class and overall, iRFS per image, with 95% "
            "intervals. Writes noise.json, noise.md, noise_model_index.yaml, "
            "noise_images.parquet (per image and level) and four plots to --output."
        ),
    )
    p.add_argument(
        "--data",
        default=None,
        help="release folder (RIVAL10/ or bg_challenge/ with fg_mask), Hub-layout folder or Hub "
        "dataset id whose mask variant has its mask column (default: the benchmark's Hub repo, "
        "else a `bgbench download`)",
    )
    p.add_argument(
        "--norm",
        choices=("linf", "l2"),
        default="linf",
        help="linf: noise N(0, σ²) with σ = level/255 (the paper's main setting); l2: each "
        "region's noise scaled to ℓ2 norm ε = level (pixels in [0, 1], whole image tensor)",
    )
    p.add_argument(
        "--levels",
        nargs="+",
        default=None,
        metavar="LEVEL",
        help="noise levels, space- or comma-separated (default: linf 30 60 90 120 150 180 210, "
        "i.e. σ = 30/255 ...; l2 25 50 ... 200)",
    )
    p.add_argument(
        "--trials", type=positive_int, default=10, help="noise draws per image and level"
    )
    p.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of the noise (per image and level, on the device), the bootstrap and "
        "--max-images (recorded)",
    )
    p.add_argument(
        "--max-images", type=positive_int, default=None, help="seeded random subset of images"
    )
    p.add_argument("--output", type=Path, default=Path("bgbench_noise"), help="output folder")
    from hf_bgbench.tasks.noise import ACCELERATOR_BATCH_SIZE

    add_model_arguments(p, gpu_batch_size=ACCELERATOR_BATCH_SIZE)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from hf_bgbench.render import render_table
    from hf_bgbench.tasks.noise import NOISE_OUTPUTS, run_noise

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s: %(message)s")
    results = run_noise(
        args.model,
        args.data,
        benchmark=args.benchmark,
        levels=variant_list(args.levels),
        trials=args.trials,
        norm=args.norm,
        seed=args.seed,
        max_images=args.max_images,
        **model_options(args),
        output_dir=args.output,
    )
    print(render_table(results))
    print(f"\nwrote {args.output / NOISE_OUTPUTS[0]}, " + ", ".join(NOISE_OUTPUTS[1:]))
    return 0
