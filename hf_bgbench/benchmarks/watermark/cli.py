"""The ``bgbench build watermark`` sub-command: :func:`register` is the spec's ``cli_build``
hook (``register(subparsers, spec, specs)``, called by ``bgbench build``).

``bgbench build watermark --images DIR [--metadata CSV] --output OUT``
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Sequence
from pathlib import Path

from hf_bgbench.builders.arguments import (
    add_progress_argument,
    default_workers,
    non_negative_int,
    positive_int,
)
from hf_bgbench.spec import BenchmarkSpec

HELP = "ImageNet photos with and without the ImageNet-W watermark"
DESCRIPTION = (
    "Build the watermark benchmark (ImageNet-W style, Li et al. 2023) from ImageNet photos: "
    "each photo resized to 256 and centre-cropped to 224 (config 'original') and the same "
    "crop with the watermark of the imagenet-w package (config 'watermark'), as a Hub dataset "
    'repo folder. Needs pip install "hf-bgbench[watermark]".'
)


def register(
    sub: argparse._SubParsersAction, spec: BenchmarkSpec, specs: Sequence[BenchmarkSpec]
) -> None:
    """Add ``bgbench build <spec.name>``."""
    p = sub.add_parser(spec.name, help=HELP, description=DESCRIPTION)
    add_arguments(p)
    p.set_defaults(func=functools.partial(run, spec=spec))


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--images",
        type=Path,
        required=True,
        help="ImageNet photos: ROOT/<wnid>/<stem>.JPEG, a flat folder of <wnid>_*.JPEG, "
        "or any folder with --metadata",
    )
    p.add_argument(
        "--metadata",
        type=Path,
        default=None,
        help="CSV with columns file (relative to --images) and wnid, for folders whose layout "
        "does not give the class",
    )
    p.add_argument("--output", type=Path, required=True, help="the Hub repo folder to write")
    p.add_argument(
        "--limit-per-class",
        type=positive_int,
        default=None,
        help="use a seeded random subset of at most N photos per class (quick builds)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the --limit-per-class subset")
    p.add_argument("--shard-size", type=positive_int, default=500, help="images per Parquet shard")
    p.add_argument(
        "--workers",
        type=non_negative_int,
        default=default_workers(),
        help="worker processes (0 or 1: in the main process; default: the CPUs available, "
        "%(default)s); the output is the same whatever the number",
    )
    p.add_argument("--overwrite", action="store_true", help="replace a different earlier build")
    add_progress_argument(p)


def run(args: argparse.Namespace, spec: BenchmarkSpec) -> int:
    from hf_bgbench.benchmarks.watermark.build import (
        WatermarkBuildOptions,
        build_watermark,
        summary_lines,
    )
    from hf_bgbench.builders.report import REPORT_NAME

    report = build_watermark(
        spec,
        WatermarkBuildOptions(
            images=args.images,
            output=args.output,
            metadata=args.metadata,
            seed=args.seed,
            limit_per_class=args.limit_per_class,
            shard_size=args.shard_size,
            workers=args.workers,
            overwrite=args.overwrite,
            progress=not args.quiet,
        ),
    )
    for line in summary_lines(report):
        print(line)
    print(f"wrote {args.output} (card README.md, {REPORT_NAME})")
    return 0
