"""The Space's report card: :func:`hf_bgbench.report.card.run_report` over the operator's
allow-listed datasets, at the Space's caps.

Each benchmark with report headlines is scored on the first allow-listed dataset of that
benchmark (a Hub id through a Hub-only reader, never a server folder of the same name); a
benchmark with none is listed as not run. Every task runs at the caps the Space puts on it
(``Option.space_cap``: seeded subsets, recorded in each task's results), so the page says
when a number is an estimate from a subset.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hf_bgbench.benchmarks import all_specs
from hf_bgbench.space.checks.allowlist import AllowedDataset, allowed_data
from hf_bgbench.space.settings import task_options


def _report_entries(allowed: Sequence[AllowedDataset]) -> dict[str, tuple[Any, AllowedDataset]]:
    """Benchmark name -> (spec, its first allow-listed dataset), for each benchmark with
    report headlines that the allow-list has data for."""
    found = {}
    for spec in all_specs():
        if not spec.report:
            continue
        entry = next((e for e in allowed if e.benchmark == spec.name), None)
        if entry is not None:
            found[spec.name] = (spec, entry)
    return found


def report_datasets(allowed: Sequence[AllowedDataset]) -> dict[str, AllowedDataset]:
    """Benchmark name -> the allow-listed dataset a report card over ``allowed`` scores it
    on (nothing is read)."""
    return {name: entry for name, (_, entry) in _report_entries(allowed).items()}


def report_benchmarks(allowed: Sequence[AllowedDataset]) -> list[str]:
    """The benchmarks a report card over ``allowed`` scores (nothing is read)."""
    return list(_report_entries(allowed))


def report_data(allowed: Sequence[AllowedDataset]) -> dict[str, Any]:
    """Benchmark name -> what its report tasks read: the first allow-listed dataset of it."""
    return {name: allowed_data(e, spec) for name, (spec, e) in _report_entries(allowed).items()}


def report_caps(benchmarks: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Task name -> the Space's caps on it (no variants picked: a task scores them all)."""
    caps: dict[str, dict[str, Any]] = {}
    for spec in all_specs():
        if spec.name not in benchmarks:
            continue
        for task in spec.report_tasks:
            capped = task_options(task, list(spec.variants), restrict=False, shared_caps=False)
            for name in ("variants", "restrict_to_benchmark", "progress"):
                capped.pop(name, None)
            caps.setdefault(task, {}).update(capped)
    return caps


def report_reproduce_section(model_id: str, allowed: Sequence[AllowedDataset]) -> str:
    """The report card's "Reproduce this" section: the ``bgbench report`` command that makes
    the same report (the same datasets, the Space's caps as ``--task-option``), with the
    note on each server folder it names."""
    from hf_bgbench.space.views.reproduce import data_argument, report_command, reproduce_markdown

    datasets = report_datasets(allowed)
    command = report_command(model_id, datasets, report_caps(list(datasets)))
    notes = [data_argument(entry)[1] for entry in datasets.values()]
    return reproduce_markdown([command], notes, document="report.json")


def space_report(
    model_id: str, allowed: Sequence[AllowedDataset], output_dir: str | Path
) -> dict[str, Any]:
    """The report of ``model_id`` over the allow-listed datasets, written to ``output_dir``
    (report.md, report.json, reliance_profile.png, .eval_results/); the report document."""
    from hf_bgbench.report.card import run_report

    data = report_data(allowed)
    return run_report(
        model_id,
        output_dir,
        data=data,
        benchmarks=list(data) or None,
        task_options=report_caps(list(data)),
        progress=True,
    )
