"""A task's Python entry point (``run_noise(model, data=None, **options)``), generated from
its :class:`~hf_bgbench.tasks.task.Task`: importing it loads no torch; the runner is imported
at the first call."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hf_bgbench.tasks.options import entry_signature
from hf_bgbench.tasks.task import Task


def entry_point(task: Task, name: str, doc: str, **leading: Any) -> Callable[..., dict[str, Any]]:
    """The Python entry point ``name`` of ``task`` (``run_noise(model, data=None, *,
    trials=10, ...)``), documented by ``doc``: the ``leading`` parameters (name=default,
    :data:`~hf_bgbench.tasks.options.REQUIRED` for a required one), then every option of the
    task as a keyword (:func:`~hf_bgbench.tasks.options.entry_signature`). It runs the task
    through the runner, which it imports at its first call (the model and data stack)."""
    signature = entry_signature(task.options, **leading)

    def run(*args: Any, **options: Any) -> dict[str, Any]:
        from hf_bgbench.tasks.runner import execute  # the model and data stack: at first call

        given = signature.bind(*args, **options).arguments  # an unknown option: TypeError
        for key, default in leading.items():
            given.setdefault(key, default)
        model = given.pop("model")
        return execute(task, model, **given)

    run.__name__ = run.__qualname__ = name
    run.__doc__, run.__signature__ = doc, signature  # type: ignore[attr-defined]
    run.__module__ = task.prepare.__module__.rpartition(".")[0] or run.__module__
    return run
