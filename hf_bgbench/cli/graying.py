"""``bgbench graying MODEL --benchmark NAME``: background ablation by graying, the
``graying`` task's command, generated from its options
(:class:`hf_bgbench.tasks.graying.GrayingOptions`)."""

from __future__ import annotations

import argparse

from hf_bgbench.cli._common import add_task_parser, run_task_command


def register(sub: argparse._SubParsersAction) -> None:
    from hf_bgbench.tasks.graying import TASK

    add_task_parser(sub, TASK, "background ablation: accuracy with the background grayed", run)


def run(args: argparse.Namespace) -> int:
    from hf_bgbench.render import render_table
    from hf_bgbench.tasks.graying import GRAYING_OUTPUTS, TASK

    results = run_task_command(args, TASK)
    if results is not None:  # the main process wrote the outputs
        print(render_table(results))
        print(f"\nwrote {args.output / GRAYING_OUTPUTS[0]}, " + ", ".join(GRAYING_OUTPUTS[1:]))
    return 0
