"""``bgbench challenge MODEL --data DIR``: the Backgrounds Challenge (adversarial backgrounds),
the ``challenge`` task's command, generated from its options
(:class:`hf_bgbench.tasks.challenge.ChallengeOptions`)."""

from __future__ import annotations

import argparse

from hf_bgbench.cli._common import add_task_parser, run_task_command


def register(sub: argparse._SubParsersAction) -> None:
    from hf_bgbench.tasks.challenge import TASK

    help = "Backgrounds Challenge: paste every foreground on every background"
    add_task_parser(sub, TASK, help, run)


def run(args: argparse.Namespace) -> int:
    from hf_bgbench.render import render_table
    from hf_bgbench.tasks.challenge import TASK

    results = run_task_command(args, TASK)
    if results is not None:  # the main process wrote the outputs
        print(render_table(results))
        extra = ", fooling_matrix.npz" if args.full_matrix else ""
        print(
            f"\nwrote {args.output / 'challenge.json'}, challenge.md, "
            f"challenge_model_index.yaml, vulnerable.parquet{extra}, challenge.png"
        )
    return 0
