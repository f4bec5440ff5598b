"""``bgbench download in9`` / ``bgbench download rival10``: fetch an official release and
convert it for scoring."""

from __future__ import annotations

import argparse
from pathlib import Path

from hf_bgbench.benchmarks.in9.download import DEFAULT_IN9_URL
from hf_bgbench.benchmarks.rival10.download import DEFAULT_RIVAL10_URL
from hf_bgbench.cli._common import add_progress_argument, non_negative_int


def run(args: argparse.Namespace) -> int:
    if args.dataset == "rival10":
        from hf_bgbench.benchmarks.rival10.download import describe_rival10 as describe
        from hf_bgbench.benchmarks.rival10.download import download_rival10 as download

        extra = {"workers": args.workers}
    else:
        from hf_bgbench.benchmarks.in9.download import describe
        from hf_bgbench.benchmarks.in9.download import download_in9 as download

        extra = {}
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


def _add_common(p: argparse.ArgumentParser, url: str, dirname: str, what: str) -> None:
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
    _add_common(in9, DEFAULT_IN9_URL, "in9-release", "archive.tar.gz")
    in9.set_defaults(func=run)
    rival = datasets.add_parser(
        "rival10",
        help="the RIVAL10 release (rival10.zip; non-commercial research only), converted",
        description="Download the authors' rival10.zip (resuming a partial download), record "
        "its sha256, unzip it safely (no absolute paths, '..' or links), check the layout "
        "(RIVAL10/{train,test}/ordinary/...) and convert it with `bgbench convert rival10` "
        "into a Hub-layout folder in the cache. A finished conversion is reused. The licence "
        "allows non-commercial research only and forbids redistribution.",
    )
    _add_common(rival, DEFAULT_RIVAL10_URL, "rival10-release", "rival10.zip")
    rival.add_argument(
        "--workers", type=non_negative_int, default=1, help="conversion worker processes"
    )
    rival.set_defaults(func=run)
