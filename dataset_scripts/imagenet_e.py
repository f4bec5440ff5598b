#!/usr/bin/env python
"""Convert the released ImageNet-E tree into a Hub dataset folder.

The same as ``bgbench convert imagenet-e``; kept as a script because that is where dataset
users look. Example (the archive from the authors, unpacked to ``ImageNet-E/``)::

    python dataset_scripts/imagenet_e.py ImageNet-E/ imagenet-e
    bgbench validate imagenet-e
    bgbench evaluate tf_efficientnet_lite0 --benchmark imagenet-e --data imagenet-e

The archive holds flat edit folders (``ori/``, ``rec/``, ``20_smooth/``, ``20_hard/``,
``20_adv/``, ``random_bg/``, ``full/``, ``01/``, ``008/``, ``005/``, ``rp/``, ``rd/``) and
``labels.txt`` (file name, TAB, ImageNet-1k index). The output holds one config per edit
(split ``test``) with the ids shared across edits; the layout, the folder-name table and the
sources it was verified against are in dataset_scripts/README.md ("ImageNet-E").
"""

from __future__ import annotations

import argparse
import sys

from hf_bgbench.benchmarks import all_specs, get_benchmark
from hf_bgbench.benchmarks.imagenet_e.cli import CONVERT
from hf_bgbench.cli.benchmark_commands import add_command_arguments


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="imagenet_e.py", description=__doc__.split("\n\n")[0])
    add_command_arguments(parser, CONVERT, get_benchmark("imagenet-e"), all_specs())
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, OSError) as err:
        print(f"imagenet_e.py: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
