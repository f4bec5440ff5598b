"""What a visitor picks in the Space: the choices its controls offer, the checks on a model
and a dataset before anything loads, and the command that reproduces a run of them.

A control's choices at build time are what "Use via API" accepts (Gradio checks a value
against them): every benchmark's tasks, variants and datasets (:func:`every_task`); the page
narrows them to the benchmark shown when it loads (:func:`task_choices`,
:func:`offer_datasets`, :func:`variants_of`).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import gradio as gr

from hf_bgbench.benchmarks import get_benchmark, list_benchmarks
from hf_bgbench.report.paired import comparable_tasks
from hf_bgbench.space.reproduce import data_argument, reproduce_markdown, task_command
from hf_bgbench.space.safety import (
    AllowedDataset,
    SpaceRefusal,
    allowed_data,
    check_model_cached,
    check_model_id,
    check_model_size,
    datasets_for,
    resolve_dataset,
)
from hf_bgbench.space.settings import allowed, model_limits, task_label
from hf_bgbench.tasks import all_tasks

MODEL_LABEL = "Model (Hub repo owner/name, or the bundled tf_efficientnet_lite0)"


def checked_inputs(
    model_text: str, dataset: str, benchmark: str
) -> tuple[Any, AllowedDataset, str]:
    """The visitor's model and dataset, refused unless safe: (model, dataset entry, note on
    the size check)."""
    model = check_model_id(model_text)
    get_benchmark(benchmark)
    entry = resolve_dataset(dataset, benchmark, allowed())
    check_model_cached(model.repo_id)
    note = check_model_size(model.repo_id, *model_limits())
    return model, entry, note


def hidden_paths(entry: AllowedDataset | None) -> dict[str, str]:
    """Server paths of ``entry`` -> its allow-list name, for messages."""
    if entry is None:
        return {}
    return {entry.target: entry.name, str(Path(entry.target).expanduser()): entry.name}


@functools.lru_cache(maxsize=16)
def _held(entry: AllowedDataset, benchmark: str) -> tuple[str, ...]:
    """The variants the dataset holds, in the benchmark's order (the benchmark's own when
    the dataset cannot be read now)."""
    spec = get_benchmark(benchmark)
    try:
        data = allowed_data(entry, spec)
        if not hasattr(data, "variants"):
            from hf_bgbench.data.sources import resolve_source

            data = resolve_source(data, spec)
        held = set(data.variants)
    except Exception:
        return tuple(spec.variants)
    return tuple(v for v in spec.variants if v in held) or tuple(spec.variants)


def variants_of(dataset: str | None, benchmark: str) -> list[str]:
    """The variants a visitor can pick for ``dataset``: those it holds."""
    try:
        entry = resolve_dataset(dataset, benchmark, allowed())
    except SpaceRefusal:
        return list(get_benchmark(benchmark).variants)
    return list(_held(entry, benchmark))


def default_variants(dataset: str | None, benchmark: str) -> list[str]:
    """The variants ticked when a dataset is picked: the benchmark's headline variants it
    holds (:attr:`hf_bgbench.spec.BenchmarkSpec.headline_variants`; every variant it holds
    when it holds none of them). On the Space's 2 vCPU the three IN-9 variants BG-GAP reads
    take about 6 minutes for the bundled model, all eight about 15 -- past the 60 % of the
    20-minute limit a default run keeps as margin (bench/space_defaults.py); a visitor
    ticks the others when they want them, and the leaderboard takes either run."""
    held = variants_of(dataset, benchmark)
    headline = set(get_benchmark(benchmark).headline_variants)
    return [v for v in held if v in headline] or held


def run_command(
    task: str, model_id: str, entry: AllowedDataset, options: dict[str, Any], output: str = ""
) -> str:
    """The exact ``bgbench`` command of a run (the data as :func:`data_argument` names it)."""
    data, _ = data_argument(entry)
    return task_command(task, model_id, options["benchmark"], data, options, output or None)


def reproduce_section(
    task: str, model_id: str, entry: AllowedDataset, options: dict[str, Any], output: str = ""
) -> str:
    """The "Reproduce this" section of a run: its exact ``bgbench`` command."""
    command = run_command(task, model_id, entry, options, output)
    return reproduce_markdown([command], [data_argument(entry)[1]])


def default_task(benchmark: str) -> str:
    """The task of a call that names none: the benchmark's first ("" for a benchmark that is
    not registered, which the job's own checks then refuse)."""
    try:
        return get_benchmark(benchmark).tasks[0]
    except ValueError:
        return ""


def task_choices(benchmark: str, comparable: bool = False) -> list[tuple[str, str]]:
    """(label, name) of the tasks ``benchmark`` declares (``comparable``: only those
    ``bgbench compare`` pairs): what its page offers."""
    tasks = get_benchmark(benchmark).tasks
    return [
        (task_label(t, benchmark), t) for t in tasks if not comparable or t in comparable_tasks()
    ]


def every_task(comparable: bool = False) -> list[tuple[str, str]]:
    """(description, name) of every task some benchmark declares (``comparable``: only those
    ``bgbench compare`` pairs): the task controls' choices at build time."""
    declared = {t for b in list_benchmarks() for t in get_benchmark(b).tasks}
    return [
        (t.description, t.name)
        for t in all_tasks()
        if t.name in declared and (not comparable or t.name in comparable_tasks())
    ]


def offer_datasets(trigger: Any, benchmark: gr.Dropdown, dataset: gr.Dropdown) -> None:
    """When ``trigger`` fires (``benchmark.change``, ``demo.load``), ``dataset`` offers the
    allow-listed datasets of the benchmark ``benchmark`` shows, the first picked."""
    trigger(_datasets_update, benchmark, dataset, queue=False)


def _datasets_update(benchmark: str) -> Any:
    offered = datasets_for(allowed(), benchmark)
    return gr.update(choices=offered, value=offered[0] if offered else None)
