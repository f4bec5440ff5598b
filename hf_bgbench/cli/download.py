"""``bgbench download NAME``: fetch a benchmark's official release and convert it for
scoring. Each benchmark with a download adds its own sub-command (its spec's
``cli_download`` hook)."""

from __future__ import annotations

import argparse

from hf_bgbench.cli.benchmark_commands import add_benchmark_commands


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "download",
        help="download a benchmark's official release and convert it for scoring",
    )
    datasets = p.add_subparsers(dest="dataset", required=True, metavar="DATASET")
    add_benchmark_commands(datasets, "cli_download")
