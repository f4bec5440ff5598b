"""IN-9's sub-commands (the spec's CLI hooks): ``bgbench build in9``, ``bgbench convert
in9-release`` and ``bgbench download in9``."""

from __future__ import annotations

import argparse
import functools
from collections.abc import Sequence
from pathlib import Path

from hf_bgbench.builders.arguments import (
    add_download_arguments,
    default_workers,
    non_negative_int,
    run_download,
)
from hf_bgbench.spec import BenchmarkSpec


def add_in9_arguments(p: argparse.ArgumentParser) -> None:
    """The IN-9 builder's options (shared with dataset_scripts/in9.py)."""
    p.add_argument(
        "--images",
        type=Path,
        required=True,
        help="ImageNet photos: ROOT/<wnid>/<stem>.JPEG, a flat folder of <wnid>_*.JPEG, "
        "or any folder with --metadata",
    )
    p.add_argument(
        "--boxes",
        type=Path,
        default=None,
        help="PASCAL-VOC XML boxes (ROOT/<wnid>/<stem>.xml or ROOT/<stem>.xml, the ILSVRC "
        "Annotation layout) or a CSV with columns file,xmin,ymin,xmax,ymax (one row per box)",
    )
    p.add_argument(
        "--no-boxes",
        action="store_true",
        help="estimate a box (spectral-residual saliency) for photos without one; such rows "
        "are flagged box_estimated=True",
    )
    p.add_argument(
        "--metadata",
        type=Path,
        default=None,
        help="CSV with columns file (relative to --images) and wnid, for folders whose layout "
        "does not give the class",
    )
    p.add_argument("--output", type=Path, required=True, help="the Hub repo folder to write")
    p.add_argument("--seed", type=int, default=0, help="seed of every random choice (default 0)")
    p.add_argument(
        "--workers",
        type=non_negative_int,
        default=default_workers(),
        help="worker processes (default: the CPUs available, %(default)s)",
    )
    p.add_argument(
        "--label-space",
        choices=("in9", "imagenet"),
        default="in9",
        help="in9: the 9 IN-9 classes; imagenet: Full-IN, all 1000 classes (benchmark in9_full)",
    )
    p.add_argument(
        "--split",
        choices=("val", "train"),
        default="val",
        help="val: photos are ImageNet val, written as split 'test'; train: written as split "
        "'train', plus the in9l config (IN-9L; --label-space in9 only)",
    )
    p.add_argument(
        "--image-format",
        choices=("jpeg", "png"),
        default="jpeg",
        help="encoding of the variant images: jpeg (quality 95, 4:4:4) or png (lossless)",
    )
    p.add_argument("--shard-size", type=int, default=1000, help="images per Parquet shard")
    p.add_argument(
        "--limit-per-class",
        type=int,
        default=None,
        help="use a seeded random subset of at most N photos per class (quick builds)",
    )
    p.add_argument(
        "--variants",
        default=None,
        help="comma-separated variants to write (default: all eight)",
    )
    p.add_argument("--overwrite", action="store_true", help="replace an earlier build of the split")
    p.add_argument("--keep-work", action="store_true", help="keep the stage-1 cache afterwards")
    p.add_argument(
        "--quiet", "--no-progress", dest="quiet", action="store_true", help="no progress bars"
    )


def run_in9(args: argparse.Namespace, specs: Sequence[BenchmarkSpec]) -> int:
    """``bgbench build in9``: the spec ``--label-space`` names, taken from ``specs``."""
    from hf_bgbench.benchmarks.in9.build import (
        LABEL_SPACES,
        REPORT_NAME,
        BuildOptions,
        build_in9,
        summary_lines,
    )
    from hf_bgbench.benchmarks.in9.variants import IN9_VARIANTS

    spec = next(s for s in specs if s.name == LABEL_SPACES[args.label_space])
    variants = tuple(v.strip() for v in args.variants.split(",")) if args.variants else IN9_VARIANTS
    report = build_in9(
        BuildOptions(
            images=args.images,
            output=args.output,
            boxes=args.boxes,
            no_boxes=args.no_boxes,
            metadata=args.metadata,
            seed=args.seed,
            workers=args.workers,
            split=args.split,
            image_format=args.image_format,
            shard_size=args.shard_size,
            limit_per_class=args.limit_per_class,
            variants=variants,
            keep_work=args.keep_work,
            overwrite=args.overwrite,
            progress=not args.quiet,
        ),
        spec,
    )
    for line in summary_lines(report):
        print(line)
    print(f"wrote {args.output} (card README.md, {REPORT_NAME})")
    return 0


def register_build(
    sub: argparse._SubParsersAction, spec: BenchmarkSpec, specs: Sequence[BenchmarkSpec]
) -> None:
    p = sub.add_parser(
        "in9",
        help="the eight IN-9 variants from ImageNet photos and boxes",
        description="Build the eight ImageNet-9 Backgrounds Challenge variants (and their "
        "foreground masks) from ImageNet photos and boxes, as a Hub dataset repo folder.",
    )
    add_in9_arguments(p)
    p.set_defaults(func=functools.partial(run_in9, specs=specs))


def run_in9_release(args: argparse.Namespace, spec: BenchmarkSpec) -> int:
    from hf_bgbench.benchmarks.in9.convert import convert_in9_release

    report = convert_in9_release(args.src, args.output, spec, overwrite=args.overwrite)
    counts = ", ".join(f"{k} {v}" for k, v in report["per_class"].items())
    print(f"converted {report['kept']} images per variant ({counts}) into {args.output}")
    return 0


def register_convert(
    sub: argparse._SubParsersAction, spec: BenchmarkSpec, specs: Sequence[BenchmarkSpec]
) -> None:
    p = sub.add_parser(
        "in9-release",
        help="the official Backgrounds Challenge release (bg_challenge/<variant>/val/...)",
        description="Convert bg_challenge/<variant>/val/<class-dir>/<stem>.JPEG and "
        "bg_challenge/fg_mask/val/<class-dir>/<stem>.npy into a Hub dataset repo folder "
        "(image bytes unchanged, masks as PNG, one config per variant, split 'test').",
    )
    p.add_argument("src", type=Path, help="the release folder (bg_challenge or its parent)")
    p.add_argument("output", metavar="OUTPUT", type=Path, help="the Hub repo folder to write")
    p.add_argument("--overwrite", action="store_true", help="replace data/ in the output")
    p.set_defaults(func=functools.partial(run_in9_release, spec=spec))


def run_download_in9(args: argparse.Namespace, spec: BenchmarkSpec) -> int:
    from hf_bgbench.benchmarks.in9.download import describe, download_in9

    return run_download(args, download_in9, describe, spec=spec)


def register_download(
    sub: argparse._SubParsersAction, spec: BenchmarkSpec, specs: Sequence[BenchmarkSpec]
) -> None:
    from hf_bgbench.benchmarks.in9.download import DATASET_DIRNAME, DEFAULT_IN9_URL

    p = sub.add_parser(
        "in9",
        help="the Backgrounds Challenge test data (~1 GB), converted to the Hub layout",
        description="Download the authors' Backgrounds Challenge archive (resuming a partial "
        "download), record its sha256, unpack it safely, check the layout "
        "(bg_challenge/<variant>/val/<class-dir>/*.JPEG and fg_mask/val/.../*.npy) and "
        "convert it into a Hub-layout dataset folder in the cache. A finished conversion is "
        "reused. Needs about 3 GB of free disk.",
    )
    add_download_arguments(p, DEFAULT_IN9_URL, DATASET_DIRNAME, "archive.tar.gz")
    p.set_defaults(func=functools.partial(run_download_in9, spec=spec))
