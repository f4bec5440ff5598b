"""``bgbench download in9``: fetch the official release and convert it for scoring."""

from __future__ import annotations

import argparse
from pathlib import Path

from hf_bgbench.cli._common import add_progress_argument
from hf_bgbench.download import DEFAULT_IN9_URL


def run_in9(args: argparse.Namespace) -> int:
    from hf_bgbench.download import describe, download_in9

    result = download_in9(
        args.url,
        args.cache_dir,
        sha256=args.sha256,
        progress=not args.quiet,
        force=args.force,
        keep_archive=not args.delete_archive,
    )
    print(describe(result))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "download",
        help="download a benchmark's official release and convert it for scoring",
    )
    datasets = p.add_subparsers(dest="dataset", required=True, metavar="DATASET")
    in9 = datasets.add_parser(
        "in9",
        help="the Backgrounds Challenge test data (~1 GB), converted to the Hub layout",
        description="Download the authors' Backgrounds Challenge archive (resuming a partial "
        "download), record its sha256, unpack it safely, check the layout "
        "(bg_challenge/<variant>/val/<class-dir>/*.JPEG and fg_mask/val/.../*.npy) and "
        "convert it into a Hub-layout dataset folder in the cache. A finished conversion is "
        "reused. Needs about 3 GB of free disk.",
    )
    in9.add_argument(
        "--url",
        default=DEFAULT_IN9_URL,
        help="where to get the archive: http(s)://, file:///path/to/archive.tar.gz or a local "
        "path (default: the authors' release, %(default)s)",
    )
    in9.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        help="cache root (default: $HF_BGBENCH_CACHE, else ~/.cache/hf_bgbench); the dataset "
        "goes to <cache-dir>/datasets/in9-release",
    )
    in9.add_argument(
        "--sha256",
        default=None,
        help="expected sha256 of the archive; a mismatch deletes the download and fails "
        "(the authors publish none; the sha256 of what was downloaded is always recorded)",
    )
    add_progress_argument(in9)
    in9.add_argument(
        "--force", action="store_true", help="download and convert again even if cached"
    )
    in9.add_argument(
        "--delete-archive",
        action="store_true",
        help="delete the ~1 GB archive once converted (its sha256 stays recorded)",
    )
    in9.set_defaults(func=run_in9)
