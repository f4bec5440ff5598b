#!/usr/bin/env python
"""Build the ImageNet-9 Backgrounds Challenge variants from ImageNet photos and boxes.

The same as ``bgbench build in9``; kept as a script because that is where dataset users
look. Example (the official test set from ImageNet val)::

    python dataset_scripts/in9.py --images ILSVRC/Data/CLS-LOC/val_by_class \
        --boxes ILSVRC/Annotations/CLS-LOC/val --output in9 --seed 0 --workers 8
    bgbench validate in9
    bgbench publish in9 --repo-id bgbench/in9

Any labelled photo folder works with ``--no-boxes`` (boxes estimated, rows flagged).
"""

from __future__ import annotations

import argparse
import sys

from hf_bgbench.benchmarks import all_specs, get_benchmark
from hf_bgbench.benchmarks.in9.cli import BUILD
from hf_bgbench.cli.benchmark_commands import add_command_arguments


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="in9.py", description=__doc__.split("\n\n")[0])
    add_command_arguments(parser, BUILD, get_benchmark("in9"), all_specs())
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, OSError) as err:
        print(f"in9.py: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
