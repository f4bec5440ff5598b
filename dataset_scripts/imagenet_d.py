#!/usr/bin/env python
"""Convert the ImageNet-D release into a Hub dataset folder.

The same as ``bgbench convert imagenet-d``; kept as a script because that is where dataset
users look. Example (the Hub dataset zcs15/ImageNet-D cloned to ``ImageNet-D/``)::

    git lfs clone https://huggingface.co/datasets/zcs15/ImageNet-D
    python dataset_scripts/imagenet_d.py ImageNet-D/ imagenet-d [--clean IMAGENET_VAL]
    bgbench validate imagenet-d
    bgbench evaluate tf_efficientnet_lite0 --benchmark imagenet-d --data imagenet-d

The release holds ``background/``, ``texture/`` and ``material/`` of class folders (PNG) and
``questions/<subset>.csv``; the output holds one config per subset (split ``test``), plus
``clean`` with --clean; dataset_scripts/README.md ("ImageNet-D") has the columns.
"""

from __future__ import annotations

import argparse
import sys

from hf_bgbench.benchmarks import all_specs, get_benchmark
from hf_bgbench.benchmarks.imagenet_d.cli import CONVERT
from hf_bgbench.cli.benchmark_commands import add_command_arguments


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="imagenet_d.py", description=__doc__.split("\n\n")[0])
    add_command_arguments(parser, CONVERT, get_benchmark("imagenet-d"), all_specs())
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, OSError) as err:
        print(f"imagenet_d.py: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
