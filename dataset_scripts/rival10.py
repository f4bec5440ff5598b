#!/usr/bin/env python
"""Convert the official RIVAL10 release into a Hub dataset folder.

The same as ``bgbench convert rival10``; kept as a script because that is where dataset
users look. Example (``rival10.zip`` from the authors, unzipped to ``RIVAL10/``)::

    python dataset_scripts/rival10.py RIVAL10/ rival10 --workers 8
    bgbench validate rival10
    bgbench publish rival10 --repo-id <you>/rival10 --private   # never public: see the card

The folder holds config ``ordinary`` (splits train and test) with object masks, 18 named
attributes, attribute masks and merged masks; ``build_report.json`` lists skipped images.
"""

from __future__ import annotations

import argparse
import sys

from hf_bgbench.benchmarks import all_specs, get_benchmark
from hf_bgbench.benchmarks.rival10.cli import CONVERT
from hf_bgbench.cli.benchmark_commands import add_command_arguments


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rival10.py", description=__doc__.split("\n\n")[0])
    add_command_arguments(parser, CONVERT, get_benchmark("rival10"), all_specs())
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, OSError) as err:
        print(f"rival10.py: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
