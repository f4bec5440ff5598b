"""``bgbench noise MODEL --benchmark NAME``: noise on the object vs the background (RFS), the
``noise`` task's command, generated from its options
(:class:`hf_bgbench.tasks.noise.NoiseOptions`)."""

from __future__ import annotations

import argparse

from hf_bgbench.cli._common import add_task_parser, run_task_command


def register(sub: argparse._SubParsersAction) -> None:
    from hf_bgbench.tasks.noise import TASK

    help = "noise analysis: Gaussian noise on the object vs the background (RFS, iRFS)"
    add_task_parser(sub, TASK, help, run)


def run(args: argparse.Namespace) -> int:
    from hf_bgbench.render import render_table
    from hf_bgbench.tasks.noise import NOISE_OUTPUTS, TASK

    results = run_task_command(args, TASK)
    if results is not None:  # the main process wrote the outputs
        print(render_table(results))
        print(f"\nwrote {args.output / NOISE_OUTPUTS[0]}, " + ", ".join(NOISE_OUTPUTS[1:]))
    return 0
