"""Command-line options the benchmarks' own sub-commands share (``bgbench build``,
``convert`` and ``download`` sub-commands, registered by each benchmark folder's CLI hooks):
kept below the folders so their hooks can use them, with one spelling everywhere."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any


def default_workers() -> int:
    """The CPUs this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value


def add_progress_argument(p: argparse.ArgumentParser) -> None:
    """``--quiet`` (alias ``--no-progress``): no progress bars."""
    p.add_argument(
        "--quiet", "--no-progress", dest="quiet", action="store_true", help="no progress bars"
    )


def add_download_arguments(p: argparse.ArgumentParser, url: str, dirname: str, what: str) -> None:
    """The options of every ``bgbench download`` sub-command: where the archive comes from
    (``url``: the authors' release; ``what``: the archive's file name), the cache
    (``<cache>/datasets/<dirname>``), its checksum, --force and --delete-archive."""
    p.add_argument(
        "--url",
        default=url,
        help=f"where to get the archive: http(s)://, file:///path/to/{what} or a local path "
        "(default: the authors' release, %(default)s)",
    )
    p.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        help="cache root (default: $HF_BGBENCH_CACHE, else ~/.cache/hf_bgbench); the dataset "
        f"goes to <cache-dir>/datasets/{dirname}",
    )
    p.add_argument(
        "--sha256",
        default=None,
        help="expected sha256 of the archive; a mismatch deletes the download and fails "
        "(the authors publish none; the sha256 of what was downloaded is always recorded)",
    )
    add_progress_argument(p)
    p.add_argument("--force", action="store_true", help="download and convert again even if cached")
    p.add_argument(
        "--delete-archive",
        action="store_true",
        help="delete the archive once converted (its sha256 stays recorded)",
    )


def run_download(
    args: argparse.Namespace,
    download: Callable[..., Any],
    describe: Callable[[Any], str],
    **extra: Any,
) -> int:
    """Run a ``bgbench download`` sub-command: ``download`` with the options of
    :func:`add_download_arguments` (plus ``extra``), then print ``describe`` of the result."""
    result = download(
        args.url,
        args.cache_dir,
        sha256=args.sha256,
        progress=not args.quiet,
        force=args.force,
        keep_archive=not args.delete_archive,
        **extra,
    )
    print(describe(result))
    return 0
