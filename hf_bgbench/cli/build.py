"""``bgbench build NAME ...``: build a benchmark dataset from source photos. Each benchmark
that can be built adds its own sub-command (its spec's ``cli_build`` hook)."""

from __future__ import annotations

import argparse

from hf_bgbench.cli.benchmark_commands import add_benchmark_commands


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("build", help="build a benchmark dataset from source photos")
    datasets = p.add_subparsers(dest="dataset", required=True, metavar="DATASET")
    add_benchmark_commands(datasets, "cli_build")
