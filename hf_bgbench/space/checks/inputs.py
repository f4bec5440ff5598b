"""What a visitor picks in the Space: the checks on a model and a dataset before anything
loads (:func:`checked_inputs`), on the other picks of a scoring job (:func:`check_picks`), and
the choices the controls offer.

A control's choices at build time are what "Use via API" accepts (Gradio checks a value
against them): every benchmark's tasks, variants and datasets (:func:`every_task`); the page
narrows them to the benchmark shown when it loads (:func:`task_choices`,
:func:`variants_of`). No Gradio here.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from hf_bgbench.benchmarks import get_benchmark, list_benchmarks
from hf_bgbench.models.vlm.settings import VLM_PROTOCOLS
from hf_bgbench.report.paired import comparable_tasks
from hf_bgbench.space.checks.allowlist import AllowedDataset, allowed_data, resolve_dataset
from hf_bgbench.space.checks.messages import SpaceRefusal
from hf_bgbench.space.checks.model_id import check_model_id
from hf_bgbench.space.checks.model_weights import check_model_cached, check_model_size
from hf_bgbench.space.settings import allowed, model_limits, takes_variants, task_label
from hf_bgbench.spec import BenchmarkSpec
from hf_bgbench.tasks import all_tasks
from hf_bgbench.tasks.options import LABEL_MAPS, default_benchmark


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


def check_picks(
    spec: BenchmarkSpec, task: str, variants: Sequence[str], label_map: str, vlm_rule: str
) -> None:
    """The picks of a scoring job beside the model and the dataset, refused unless ``spec``
    offers them: its task, at least one of its variants (for a task that scores variants),
    a label map and a VLM rule among the named ones (an API caller's values; the page offers
    only these)."""
    spec.check_task(task)
    if takes_variants(task):
        if not variants:
            raise SpaceRefusal("Pick at least one variant.")
        spec.check_variants(list(variants))
    if label_map not in LABEL_MAPS:
        raise SpaceRefusal(f"Pick a label map among {', '.join(LABEL_MAPS)}.")
    if vlm_rule not in VLM_PROTOCOLS:
        raise SpaceRefusal(f"Pick a VLM rule among {', '.join(VLM_PROTOCOLS)}.")


def label_maps() -> list[str]:
    """The label maps a visitor may pick: the tasks' ``--label-map`` choices, ``auto`` (the
    benchmark's published protocol) first."""
    return list(LABEL_MAPS)


def requested_benchmark(benchmark: str | None) -> str:
    """The benchmark a call asks for: the one it names, else the one a task runs on when
    none is named (the first registered, as on the command line)."""
    return benchmark or default_benchmark()


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
