"""``bgbench convert in9-release SRC DIR``: the official release -> the Hub layout."""

from __future__ import annotations

import argparse
from pathlib import Path


def run_in9_release(args: argparse.Namespace) -> int:
    from hf_bgbench.builders.convert import convert_in9_release

    report = convert_in9_release(args.src, args.output, overwrite=args.overwrite)
    counts = ", ".join(f"{k} {v}" for k, v in report["per_class"].items())
    print(f"converted {report['kept']} images per variant ({counts}) into {args.output}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("convert", help="convert a downloaded release into the Hub layout")
    sources = p.add_subparsers(dest="source", required=True, metavar="SOURCE")
    rel = sources.add_parser(
        "in9-release",
        help="the official Backgrounds Challenge release (bg_challenge/<variant>/val/...)",
        description="Convert bg_challenge/<variant>/val/<class-dir>/<stem>.JPEG and "
        "bg_challenge/fg_mask/val/<class-dir>/<stem>.npy into a Hub dataset repo folder "
        "(image bytes unchanged, masks as PNG, one config per variant, split 'test').",
    )
    rel.add_argument("src", type=Path, help="the release folder (bg_challenge or its parent)")
    rel.add_argument("output", metavar="OUTPUT", type=Path, help="the Hub repo folder to write")
    rel.add_argument("--overwrite", action="store_true", help="replace data/ in the output")
    rel.set_defaults(func=run_in9_release)
