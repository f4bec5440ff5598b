"""Tasks: the protocols that run a model over a benchmark, as a registry.

A task says which columns it needs beyond image/label/id, runs over any benchmark whose spec
lists it (``BenchmarkSpec.tasks``) through the public model step, summarises with the pure
metric core and returns one results document (:mod:`hf_bgbench.results`) that the one
renderer (:mod:`hf_bgbench.render`) turns into the terminal table, Markdown, plots, LaTeX and
the model-index. The CLI and the Space enumerate tasks from here.

Adding a protocol = one module defining a :class:`Task` and registering it below.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hf_bgbench.benchmarks import BenchmarkSpec, get_benchmark


@dataclass(frozen=True)
class Task:
    """A protocol. ``run(model, benchmark=..., data=..., output_dir=..., **options)`` returns
    the results document; ``outputs`` are the files it writes into ``output_dir``."""

    name: str
    description: str
    run: Callable[..., dict[str, Any]]
    columns: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()


_TASKS: dict[str, Task] = {}
_BUILTIN = (
    "hf_bgbench.tasks.evaluate",
    "hf_bgbench.tasks.challenge",
    "hf_bgbench.tasks.noise",
    "hf_bgbench.tasks.saliency",
)


def register_task(task: Task) -> Task:
    if task.name in _TASKS and _TASKS[task.name] is not task:
        raise ValueError(f"Task {task.name!r} is already registered.")
    _TASKS[task.name] = task
    return task


def _load_builtin() -> None:
    for module in _BUILTIN:
        importlib.import_module(module)


def get_task(name: str) -> Task:
    _load_builtin()
    try:
        return _TASKS[name]
    except KeyError:
        raise ValueError(
            f"Unknown task {name!r}. Available: {', '.join(sorted(_TASKS))}."
        ) from None


def list_tasks() -> list[str]:
    _load_builtin()
    return sorted(_TASKS)


def tasks_for(spec: BenchmarkSpec | str) -> list[Task]:
    """The tasks a benchmark declares, in its order."""
    spec = get_benchmark(spec) if isinstance(spec, str) else spec
    return [get_task(name) for name in spec.tasks]


def run_task(name: str, model: Any, *, benchmark: str, **options: Any) -> dict[str, Any]:
    """Run task ``name`` of ``benchmark`` (checked against the spec)."""
    get_benchmark(benchmark).check_task(name)
    return get_task(name).run(model, benchmark=benchmark, **options)
