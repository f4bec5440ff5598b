"""``bgbench convert SOURCE SRC DIR``: an official release -> the Hub layout. Each benchmark
with a release converter adds its own sub-command (its spec's ``cli_convert`` hook)."""

from __future__ import annotations

import argparse

from hf_bgbench.cli.benchmark_commands import add_benchmark_commands


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("convert", help="convert a downloaded release into the Hub layout")
    sources = p.add_subparsers(dest="source", required=True, metavar="SOURCE")
    add_benchmark_commands(sources, "cli_convert")
