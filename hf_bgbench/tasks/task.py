"""What a task is, as data: :class:`Task` (its options, its hooks, what the code around the
tasks knows of it) and :class:`Summary` (what its ``summarise`` hook returns). Kept apart from
the runner (:mod:`hf_bgbench.tasks.runner`), which imports the model and data stack: the task
registry, and the command line built from it, need only this.

A hook may be given as the function, or as ``"module:function"`` (:class:`Hook`), imported at
its first call: a built-in task names its hooks so, and importing the registry loads no
torch."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hf_bgbench.spec import resolve_hook
from hf_bgbench.tasks.options import RunOptions

if TYPE_CHECKING:
    from hf_bgbench.results import Report

Run = Any  # hf_bgbench.tasks.runner.Run, which imports this module


class Hook:
    """A function named ``"module:function"``, imported at its first call."""

    def __init__(self, path: str):
        self.path = path
        self.__module__ = path.partition(":")[0]  # where it is defined, as a function says
        self._function: Callable[..., Any] | None = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._function is None:
            self._function = resolve_hook(self.path)
        return self._function(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Hook({self.path!r})"


Writers = Mapping[str, Callable[[Path], None]]


@dataclass
class Summary:
    """What a task's ``summarise`` hook returns: the results ``body`` (:meth:`Run.body`), its
    ``report``, the keys a reader wants first (``head``) and, called only when a run folder
    is written, the writers of the task's own files (besides <stem>.json/.md/.yaml and the
    report's figures)."""

    body: dict[str, Any]
    report: Report
    head: Sequence[str] = ()
    files: Callable[[], Writers] | None = None


@dataclass(frozen=True)
class Task:
    """A protocol as hooks over the runner (see the module docstring).

    ``options``: its options class (a :class:`~hf_bgbench.tasks.options.RunOptions` with the
    task's own fields, ``data``, ``output_dir`` and ``seed`` among them); ``prepare(run)``
    -> work, ``compute(run, work)`` -> out, ``summarise(run, work, out)`` -> :class:`Summary`;
    ``stem`` names its files; ``outputs`` lists every file it may write (stale ones of an
    earlier run are removed; those a run wrote, in this order, are what ``bgbench <name>``
    says it wrote); ``gpu_batch_size`` is its batch size on a GPU when none is given,
    ``batch_note`` why, if that needs saying (``--batch-size``'s help).

    What the code around the tasks knows of one, declared here so that it names no task:
    ``command_help``, its line in ``bgbench --help`` (default: ``description``);
    ``per_image(doc)``, split name -> the run folder's per-image file (relative path) of a
    results document, the splits ``bgbench publish-results`` declares (None: it has none);
    ``paired(doc, folder)``, score key -> per-image values (a float Series indexed by image
    id) that ``bgbench compare`` resamples (None: its runs are not compared), with
    ``paired_scores``, (key, label, unit, reliance) of each compared key that is neither a
    headline nor one of the document's scores; ``sample_option``, the option ``bgbench
    report --challenge-foregrounds N`` sets to N, and ``sample_deviation(doc)``, what a run
    so sampled records that it is."""

    name: str
    description: str
    options: type[RunOptions]
    prepare: Callable[[Run], Any]
    compute: Callable[[Run, Any], Any]
    summarise: Callable[[Run, Any, Any], Summary]
    outputs: tuple[str, ...]
    gpu_batch_size: int
    # its protocols' settings: a frozen dataclass (tasks/<task>/settings.py), which every
    # benchmark's protocols for the task are checked against when it registers
    settings: type
    stem: str = ""  # default: the task's name
    batch_note: str = ""
    command_help: str = ""
    per_image: Callable[[Mapping[str, Any]], dict[str, str]] | None = None
    paired: Callable[[Mapping[str, Any], Path], dict[str, Any]] | None = None
    paired_scores: tuple[tuple[str, str, str, int], ...] = ()
    sample_option: str = ""
    sample_deviation: Callable[[Mapping[str, Any]], str] | None = None
    # the kinds of model it can score (hf_bgbench.models.loader.MODEL_KINDS): another kind is
    # refused before the model or the data loads
    model_kinds: tuple[str, ...] = ("trained", "zero-shot", "generative")

    def __post_init__(self) -> None:
        if not self.stem:
            object.__setattr__(self, "stem", self.name)


def folder_hooks(package: str, *, paired: bool = False) -> dict[str, Hook]:
    """The hooks of the task folder ``package``, by the folder layout's names (imported at
    their first call): ``prepare``, ``compute`` and ``summarise`` from its ``hooks`` module;
    with ``paired``, ``per_image`` and ``paired`` from its ``paired`` module
    (``per_image_files``, ``paired_values``)."""
    hooks = {step: Hook(f"{package}.hooks:{step}") for step in ("prepare", "compute", "summarise")}
    if paired:
        hooks["per_image"] = Hook(f"{package}.paired:per_image_files")
        hooks["paired"] = Hook(f"{package}.paired:paired_values")
    return hooks
