"""``bgbench <task> MODEL ...``: one sub-command per registered task
(:func:`hf_bgbench.tasks.all_tasks`, in registry order), generated from the task: its line in
``bgbench --help`` (``Task.command_help``), its description and one argument per option (its
options class, :func:`hf_bgbench.cli._common.add_task_parser`). A task registered with
:func:`hf_bgbench.tasks.register_task` before the parser is built gets its command too."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from hf_bgbench.cli._common import add_task_parser, run_task_command, task_options


def register(sub: argparse._SubParsersAction) -> None:
    from hf_bgbench.tasks import all_tasks

    for task in all_tasks():
        add_task_command(sub, task)


def add_task_command(sub: argparse._SubParsersAction, task: Any) -> argparse.ArgumentParser:
    """The sub-command ``bgbench <task.name>``."""
    return add_task_parser(
        sub, task, task.command_help or task.description, lambda args: run(args, task)
    )


def run(args: argparse.Namespace, task: Any) -> int:
    """Run ``task`` as the command line asks; on the main process (the one that wrote the
    outputs), print its table and the files it wrote."""
    from hf_bgbench.render import render_table

    results = run_task_command(args, task)
    if results is not None:
        print(render_table(results))
        written = written_files(task, task_options(args).get("output_dir"))
        if written:
            print(f"\nwrote {', '.join(written)}")
    return 0


def written_files(task: Any, folder: str | Path | None) -> list[str]:
    """The task's ``outputs`` that its run left in ``folder`` (an earlier run's others were
    removed), in the task's order: the first with its folder, the rest by name."""
    if folder is None:
        return []
    folder = Path(folder)
    names = [name for name in task.outputs if (folder / name).exists()]
    return [str(folder / names[0]), *names[1:]] if names else []
