"""Tasks: the protocols that run a model over a benchmark, as a registry.

A task is a :class:`~hf_bgbench.tasks.task.Task`: a typed options class
(:mod:`hf_bgbench.tasks.options`) and three hooks -- prepare its data and the model step,
compute over the data, summarise into numbers and a report -- run by the one runner
(:func:`hf_bgbench.tasks.runner.execute`), which owns the rest: device, processes, batching,
progress, timing, the results header and the atomic run folder. It runs over any benchmark
whose spec lists it (``BenchmarkSpec.tasks``); its results document
(:mod:`hf_bgbench.results`) is drawn by the one renderer (:mod:`hf_bgbench.render`). The
command line (one ``bgbench <task>`` per registered task), the Space, the report card and
``bgbench compare`` are generated from the registry and what each :class:`Task` declares,
so none of them names a task.

Adding a protocol = one folder ``tasks/<task>/`` whose ``__init__`` defines ``TASK``, and its
name in :data:`BUILTIN` (or :func:`register_task` for one defined elsewhere); see
ARCHITECTURE.md.
"""

from __future__ import annotations

import importlib
from typing import Any

from hf_bgbench.benchmarks import BenchmarkSpec, add_spec_check, get_benchmark
from hf_bgbench.tasks.options import default_benchmark
from hf_bgbench.tasks.protocol_settings import check_protocols, check_settings_class
from hf_bgbench.tasks.task import Task

__all__ = ["BUILTIN", "Task", "all_tasks", "get_task", "list_tasks", "register_task", "run_task"]

BUILTIN = ("evaluate", "challenge", "noise", "saliency", "graying", "attribution")
"""The task folders shipped with the package (each one's ``__init__`` defines ``TASK``), in
the order front ends list them."""

_TASKS: dict[str, Task] = {}
_LOADED = False


def register_task(task: Task) -> Task:
    if task.name in _TASKS and _TASKS[task.name] is not task:
        raise ValueError(f"Task {task.name!r} is already registered.")
    check_settings_class(task.settings, task.name)
    _TASKS[task.name] = task
    return task


def _load_builtin() -> None:
    # by name, so importing the registry imports no task module
    global _LOADED
    if not _LOADED:
        for name in BUILTIN:
            register_task(importlib.import_module(f"{__name__}.{name}").TASK)
        _LOADED = True


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


def all_tasks() -> list[Task]:
    """Every registered task, the built-in ones first in :data:`BUILTIN` order."""
    _load_builtin()
    return list(_TASKS.values())


def tasks_for(spec: BenchmarkSpec | str) -> list[Task]:
    """The tasks a benchmark declares, in its order."""
    spec = get_benchmark(spec) if isinstance(spec, str) else spec
    return [get_task(name) for name in spec.tasks]


def run_task(name: str, model: Any, *, benchmark: str | None = None, **options: Any) -> dict:
    """Run task ``name`` of ``benchmark`` (default: the first registered; checked against its
    spec) with ``options`` (the fields of the task's options class)."""
    from hf_bgbench.tasks.runner import execute  # the model and data stack: at first run

    get_benchmark(benchmark or default_benchmark()).check_task(name)
    return execute(get_task(name), model, benchmark=benchmark, **options)


# every benchmark's protocol settings, typed by its tasks' settings classes as it registers
add_spec_check("protocol settings", lambda spec: check_protocols(spec, get_task))
