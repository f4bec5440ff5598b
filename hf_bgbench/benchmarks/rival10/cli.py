"""RIVAL10's sub-commands (the spec's CLI hooks): ``bgbench convert rival10`` and ``bgbench
download rival10``."""

from __future__ import annotations

import argparse
import functools
import os
from collections.abc import Sequence
from pathlib import Path

from hf_bgbench.builders.arguments import (
    add_download_arguments,
    add_progress_argument,
    non_negative_int,
    positive_int,
    run_download,
)
from hf_bgbench.spec import BenchmarkSpec


def run_rival10(args: argparse.Namespace, spec: BenchmarkSpec) -> int:
    from hf_bgbench.benchmarks.rival10.convert import convert_rival10_release, summary_lines

    workers = args.workers or min(4, os.cpu_count() or 1)
    report = convert_rival10_release(
        args.src,
        args.output,
        spec=spec,
        workers=workers,
        shard_size=args.shard_size,
        overwrite=args.overwrite,
        progress=not args.quiet,
        keep_work=args.keep_work,
    )
    for line in summary_lines(report):
        print(line)
    print(f"wrote {args.output} (card: README.md, report: build_report.json)")
    return 0


def add_rival10_arguments(p: argparse.ArgumentParser) -> None:
    """SRC, OUTPUT and the options of ``bgbench convert rival10`` (also dataset_scripts)."""
    p.add_argument("src", type=Path, help="the release folder (RIVAL10, or its parent)")
    p.add_argument("output", metavar="OUTPUT", type=Path, help="the Hub repo folder to write")
    p.add_argument(
        "--workers",
        type=non_negative_int,
        default=None,
        help="worker processes, one shard each (default: one per CPU, at most 4)",
    )
    p.add_argument("--shard-size", type=positive_int, default=1000, help="rows per Parquet shard")
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace another conversion or build in OUTPUT (an interrupted conversion of the "
        "same release resumes without it)",
    )
    p.add_argument(
        "--keep-work",
        action="store_true",
        help="keep OUTPUT/.bgbench-work/rival10 (per-shard reports) after success",
    )
    add_progress_argument(p)


def register_convert(
    sub: argparse._SubParsersAction, spec: BenchmarkSpec, specs: Sequence[BenchmarkSpec]
) -> None:
    p = sub.add_parser(
        "rival10",
        help="the official RIVAL10 release (RIVAL10/{train,test}/ordinary/...)",
        description="Convert RIVAL10/{train,test}/ordinary/ (images, _attr_labels.npy, "
        "_merged_mask.JPEG, _attr_dict.pkl) into a Hub dataset repo folder: config "
        "'ordinary' (default) with splits train and test; image bytes unchanged; object, "
        "attribute and merged masks as 0/255 PNGs at the image's size (foreground = any "
        "channel != 0); 18 named attributes. Unreadable images are skipped and reported; a "
        "pickle that asks for code stops the conversion. Interrupted conversions resume.",
    )
    add_rival10_arguments(p)
    p.set_defaults(func=functools.partial(run_rival10, spec=spec))


def run_download_rival10(args: argparse.Namespace, spec: BenchmarkSpec) -> int:
    from hf_bgbench.benchmarks.rival10.download import describe_rival10, download_rival10

    return run_download(args, download_rival10, describe_rival10, spec=spec, workers=args.workers)


def register_download(
    sub: argparse._SubParsersAction, spec: BenchmarkSpec, specs: Sequence[BenchmarkSpec]
) -> None:
    from hf_bgbench.benchmarks.rival10.download import DATASET_DIRNAME, DEFAULT_RIVAL10_URL

    p = sub.add_parser(
        "rival10",
        help="the RIVAL10 release (rival10.zip; non-commercial research only), converted",
        description="Download the authors' rival10.zip (resuming a partial download), record "
        "its sha256, unzip it safely (no absolute paths, '..' or links), check the layout "
        "(RIVAL10/{train,test}/ordinary/...) and convert it with `bgbench convert rival10` "
        "into a Hub-layout folder in the cache. A finished conversion is reused. The licence "
        "allows non-commercial research only and forbids redistribution.",
    )
    add_download_arguments(p, DEFAULT_RIVAL10_URL, DATASET_DIRNAME, "rival10.zip")
    p.add_argument(
        "--workers", type=non_negative_int, default=1, help="conversion worker processes"
    )
    p.set_defaults(func=functools.partial(run_download_rival10, spec=spec))
