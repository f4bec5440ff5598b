"""``bgbench attribution MODEL --benchmark NAME``: neural-feature attribution, the
``attribution`` task's command, generated from its options
(:class:`hf_bgbench.tasks.attribution.options.AttributionOptions`)."""

from __future__ import annotations

import argparse

from hf_bgbench.cli._common import add_task_parser, run_task_command


def register(sub: argparse._SubParsersAction) -> None:
    from hf_bgbench.tasks.attribution import TASK

    add_task_parser(
        sub, TASK, "neural-feature attribution: best feature per attribute, train vs test", run
    )


def run(args: argparse.Namespace) -> int:
    from hf_bgbench.render import render_table
    from hf_bgbench.tasks.attribution import TASK
    from hf_bgbench.tasks.attribution.summary import OUTPUTS

    results = run_task_command(args, TASK)
    if results is not None:  # the main process wrote the outputs
        print(render_table(results))
        written = [name for name in OUTPUTS if (args.output / name).exists()]
        print(f"\nwrote {', '.join(str(args.output / name) for name in written)}")
    return 0
