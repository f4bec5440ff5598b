"""The sub-commands each benchmark brings (its spec's ``cli_*`` hooks name a declared
:class:`~hf_bgbench.builders.commands.Command`), added to ``bgbench`` in registration order:
no command module names a benchmark. The parser of each is made from its options'
declarations, and its function is called with the options read back, typed."""

from __future__ import annotations

import argparse
import functools
from collections.abc import Sequence

from hf_bgbench.builders.arguments import add_options, declared, read_options
from hf_bgbench.builders.commands import Command
from hf_bgbench.spec import BenchmarkSpec


def add_benchmark_commands(sub: argparse._SubParsersAction, hook: str) -> None:
    """Add the command of every registered benchmark with a ``hook`` (``cli_build``,
    ``cli_convert``, ``cli_download``, ``cli_commands``) to ``sub``."""
    from hf_bgbench.benchmarks import all_specs

    specs = all_specs()
    for spec in specs:
        command = spec.hook(hook)
        if command is not None:
            p = sub.add_parser(command.name, help=command.help, description=command.description)
            add_command_arguments(p, command, spec, specs)


def add_command_arguments(
    p: argparse.ArgumentParser,
    command: Command,
    spec: BenchmarkSpec,
    specs: Sequence[BenchmarkSpec],
) -> None:
    """The arguments of ``command`` (of ``spec``; ``specs``: every registered benchmark, for
    help texts that list them) and what runs it (``args.func``). The dataset scripts make
    their parsers with it too."""
    add_options(p, declared(command.options), specs)
    p.set_defaults(func=functools.partial(run_command, command=command, spec=spec, specs=specs))


def run_command(
    args: argparse.Namespace, command: Command, spec: BenchmarkSpec, specs: Sequence[BenchmarkSpec]
) -> int:
    """Run ``command`` with the options ``args`` holds (checked as the options are made)."""
    return command.run(command.options(**read_options(args)), spec, specs)
