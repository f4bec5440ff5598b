"""The ``bgbench`` command line. Each sub-command lives in its own module with a
``register(subparsers)`` function; add new ones to ``COMMANDS``."""

from __future__ import annotations

import argparse
import importlib
import sys

COMMANDS = [
    "evaluate",
    "build",
    "convert",
    "publish",
    "validate",
    "publish_metrics",
    "challenge",
    "download",
    "list_benchmarks",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bgbench",
        description="Measure how much an image classifier relies on the background.",
    )
    from hf_bgbench import __version__

    parser.add_argument("--version", action="version", version=f"bgbench {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"hf_bgbench.cli.{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt as stop:
        cached = getattr(stop, "cached", None)
        done = (
            f"; {cached} image(s) cached, re-run the same command to resume"
            if cached
            else "; nothing was cached"
        )
        print(f"\nbgbench {args.command}: interrupted{done}.", file=sys.stderr)
        return 130
    except (ValueError, FileNotFoundError, OSError, RuntimeError) as err:
        # Our errors are written to be read by a person: print them without a traceback.
        print(f"bgbench {args.command}: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
