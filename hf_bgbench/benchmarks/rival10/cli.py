"""RIVAL10's sub-commands, declared (the spec's CLI hooks name them): ``bgbench convert
rival10`` and ``bgbench download rival10``."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from hf_bgbench.benchmarks.rival10.download import DATASET_DIRNAME, DEFAULT_RIVAL10_URL
from hf_bgbench.builders.arguments import keywords, non_negative_int, option, positive_int
from hf_bgbench.builders.commands import (
    Command,
    DownloadOptions,
    cache_folder,
    output_argument,
    progress_option,
    release_folder,
    release_url,
)
from hf_bgbench.spec import BenchmarkSpec


@dataclass(frozen=True, kw_only=True)
class Rival10Release:
    """Convert RIVAL10/{train,test}/ordinary/ (images, _attr_labels.npy, _merged_mask.JPEG,
    _attr_dict.pkl) into a Hub dataset repo folder: config 'ordinary' (default) with splits
    train and test; image bytes unchanged; object, attribute and merged masks as 0/255 PNGs at
    the image's size (foreground = any channel != 0); 18 named attributes. Unreadable images
    are skipped and reported; a pickle that asks for code stops the conversion. Interrupted
    conversions resume.

    The same options serve dataset_scripts/rival10.py."""

    src: Path = release_folder("RIVAL10, or its parent")
    output: Path = output_argument()
    workers: int | None = option(
        None,
        "worker processes, one shard each (default: one per CPU, at most 4)",
        parse=non_negative_int,
    )
    shard_size: int = option(1000, "rows per Parquet shard", parse=positive_int)
    overwrite: bool = option(
        False,
        "replace another conversion or build in OUTPUT (an interrupted conversion of the "
        "same release resumes without it)",
    )
    keep_work: bool = option(
        False, "keep OUTPUT/.bgbench-work/rival10 (per-shard reports) after success"
    )
    progress: bool = progress_option()


def convert(options: Rival10Release, spec: BenchmarkSpec, specs: Sequence[BenchmarkSpec]) -> int:
    from hf_bgbench.benchmarks.rival10.convert import convert_rival10_release, summary_lines

    workers = options.workers or min(4, os.cpu_count() or 1)
    report = convert_rival10_release(**(keywords(options) | {"workers": workers}), spec=spec)
    for line in summary_lines(report):
        print(line)
    print(f"wrote {options.output} (card: README.md, report: build_report.json)")
    return 0


CONVERT = Command(
    "rival10",
    "the official RIVAL10 release (RIVAL10/{train,test}/ordinary/...)",
    Rival10Release,
    convert,
)


@dataclass(frozen=True, kw_only=True)
class Rival10Download(DownloadOptions):
    """Download the authors' rival10.zip (resuming a partial download), record its sha256,
    unzip it safely (no absolute paths, '..' or links), check the layout
    (RIVAL10/{train,test}/ordinary/...) and convert it with `bgbench convert rival10` into a
    Hub-layout folder in the cache. A finished conversion is reused. The licence allows
    non-commercial research only and forbids redistribution."""

    url: str = release_url(DEFAULT_RIVAL10_URL, "rival10.zip")
    cache_dir: Path | None = cache_folder(DATASET_DIRNAME)
    workers: int = option(1, "conversion worker processes", parse=non_negative_int)


def download(options: Rival10Download, spec: BenchmarkSpec, specs: Sequence[BenchmarkSpec]) -> int:
    from hf_bgbench.benchmarks.rival10.download import describe_rival10, download_rival10

    print(describe_rival10(download_rival10(**keywords(options), spec=spec)))
    return 0


DOWNLOAD = Command(
    "rival10",
    "the RIVAL10 release (rival10.zip; non-commercial research only), converted",
    Rival10Download,
    download,
)
