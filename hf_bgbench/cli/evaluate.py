"""``bgbench evaluate MODEL --benchmark NAME --data ID_OR_PATH``: the ``evaluate`` task's
command, generated from its options (:class:`hf_bgbench.tasks.evaluate.EvaluateOptions`)."""

from __future__ import annotations

import argparse

from hf_bgbench.cli._common import add_task_parser, run_task_command


def register(sub: argparse._SubParsersAction) -> None:
    from hf_bgbench.tasks.evaluate import TASK

    add_task_parser(sub, TASK, "score a model on a benchmark's variants", run)


def run(args: argparse.Namespace) -> int:
    from hf_bgbench.render import render_table
    from hf_bgbench.tasks.evaluate import TASK

    results = run_task_command(args, TASK)
    if results is not None:  # the main process wrote the outputs
        print(render_table(results))
        print(
            f"\nwrote {args.output / 'results.json'}, results.md, results_model_index.yaml, "
            "accuracy.png, predictions/"
        )
    return 0
