"""The sub-commands each benchmark brings (its spec's ``cli_*`` hooks), added to ``bgbench``
in registration order: no command module names a benchmark."""

from __future__ import annotations

import argparse


def add_benchmark_commands(sub: argparse._SubParsersAction, hook: str) -> None:
    """Let every registered benchmark with a ``hook`` (``cli_build``, ``cli_convert``,
    ``cli_download``, ``cli_commands``) add its sub-commands to ``sub``."""
    from hf_bgbench.benchmarks import all_specs

    specs = all_specs()
    for spec in specs:
        register = spec.hook(hook)
        if register is not None:
            register(sub, spec, specs)
