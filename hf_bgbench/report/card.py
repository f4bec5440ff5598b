"""``bgbench report MODEL``: run every benchmark's report tasks and write one report card.

For each registered benchmark whose spec lists headlines (:attr:`BenchmarkSpec.report`):
its data (``data[name]``, else the Hub dataset, else an earlier ``bgbench download``; a
benchmark without data is listed as "not run" with the command that fetches it), then each
task its headlines come from, through the one runner, into ``<output>/<benchmark>/<task>/``
(the tasks' own caches make a re-run resume). The report's files are written last:
``report.json`` (:data:`REPORT_SCHEMA`; every task's results document embedded),
``report.md``, ``reliance_profile.png`` and ``.eval_results/<benchmark>.yaml``.
"""

from __future__ import annotations

import dataclasses
import logging
import sys
import time
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from hf_bgbench.benchmarks import BenchmarkSpec, all_specs, get_benchmark
from hf_bgbench.data.pipeline import shared_pipeline
from hf_bgbench.data.sources import DataSourceError, Reader
from hf_bgbench.files import output_in_data, output_lock
from hf_bgbench.inference.engine import default_num_workers
from hf_bgbench.models.devices import resolve_device
from hf_bgbench.report.eval_results import write_eval_results
from hf_bgbench.report.headlines import headline_rows, protocol_of, reference_rows
from hf_bgbench.report.markdown import report_markdown, shown_rows
from hf_bgbench.report.profile import draw_profile
from hf_bgbench.results import check_writable, write_json, write_run_folder
from hf_bgbench.tasks import get_task
from hf_bgbench.tasks.run_data import open_data
from hf_bgbench.tasks.run_model import load_model, vlm_settings, zero_shot_classnames
from hf_bgbench.tasks.runner import execute
from hf_bgbench.version import __version__, software_versions

log = logging.getLogger(__name__)

REPORT_SCHEMA = "report-1.0"
REPORT_FILES = ("report.json", "report.md", "reliance_profile.png", ".eval_results")


class ReportError(ValueError):
    """The report cannot run as asked (the message says what to change)."""


def report_specs(names: Sequence[str] | None = None) -> list[BenchmarkSpec]:
    """The benchmarks a report covers: every registered one with headlines, or ``names``
    (each checked: known, and with something to report)."""
    if not names:
        return [s for s in all_specs() if s.report]
    specs = []
    for name in names:
        spec = get_benchmark(name)
        if not spec.report:
            offered = ", ".join(s.name for s in all_specs() if s.report)
            raise ReportError(
                f"--benchmarks {name}: that benchmark has no report headlines; choose from "
                f"{offered}."
            )
        specs.append(spec)
    return specs


def parse_data_pairs(pairs: Sequence[str] | None) -> dict[str, str]:
    """``--data NAME=PATH`` (repeatable) -> {benchmark: data}; each name checked."""
    known = {s.name for s in all_specs()}
    out: dict[str, str] = {}
    for pair in pairs or ():
        name, sep, value = pair.partition("=")
        if not sep or not name or not value:
            raise ReportError(
                f"--data {pair!r}: give BENCHMARK=PATH_OR_HUB_ID, e.g. "
                f"--data {next(iter(sorted(known)))}=./my_build."
            )
        if name not in known:
            raise ReportError(
                f"--data {pair!r}: unknown benchmark {name!r}; known: {', '.join(sorted(known))}."
            )
        if name in out:
            raise ReportError(f"--data names {name} twice; give one folder or id per benchmark.")
        out[name] = value
    return out


def _fetch_command(spec: BenchmarkSpec) -> str:
    if spec.download_command:
        return f"{spec.download_command} (then re-run; or --data {spec.name}=PATH)"
    return f"bgbench build {spec.name} ... (then --data {spec.name}=PATH)"


def _task_options(task_name: str, common: Mapping[str, Any]) -> dict[str, Any]:
    """``common`` restricted to the fields ``task_name``'s options class has."""
    fields = {f.name for f in dataclasses.fields(get_task(task_name).options)}
    return {k: v for k, v in common.items() if k in fields}


def _model_vlm_settings(model_options: Mapping[str, Any], spec: Any) -> Any:
    """How a generative VLM is scored and reached under ``model_options``, as the tasks will
    (their options' defaults otherwise)."""
    from hf_bgbench.tasks.options import RunOptions  # every task's options hold them

    return vlm_settings(RunOptions(**model_options), spec)


def run_report(
    model: Any,
    output_dir: str | Path,
    *,
    data: Mapping[str, Any] | None = None,
    benchmarks: Sequence[str] | None = None,
    challenge_foregrounds: int | None = None,
    seed: int = 0,
    checkpoint: str | None = None,
    device: str | None = None,
    batch_size: int | None = None,
    num_workers: int | None = None,
    progress: bool = True,
    task_options: Mapping[str, Mapping[str, Any]] | None = None,
    zero_shot_classes: str = "imagenet",
    templates: str = "openai",
    model_options: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Run the report of ``model`` (a model id, or a loaded classifier) into ``output_dir``
    and return the report document.

    ``data``: benchmark name -> folder or Hub id (others: the Hub dataset, else a cached
    download, else "not run"); ``benchmarks``: only these; ``challenge_foregrounds``: score
    a seeded sample of that many challenge foregrounds (each still against every
    background), an unbiased estimate with a binomial interval; ``task_options``: task name
    -> extra options of that task (e.g. the Space's caps, ``{"noise": {"max_images": 200}}``;
    each is recorded in that task's results); ``zero_shot_classes`` and ``templates``: a
    zero-shot model's head (CLIP, SigLIP, open_clip), for every task as the tasks' options of
    the same names; ``model_options``: how the model is reached and scored, for every task
    (a VLM's rule, a served model's endpoint: the tasks' options of those names). A task
    that fails is recorded with its message and the others still run."""
    data, specs, per_task = _checked_request(
        data, benchmarks, output_dir, challenge_foregrounds, task_options
    )
    knobs = _ReportKnobs(seed, checkpoint, device, num_workers, progress, challenge_foregrounds)
    if isinstance(model, str):  # an unknown or unreachable model fails here, once, clearly
        _load_model_once(model, specs[0], knobs, zero_shot_classes, templates, model_options)
    common = _common_task_options(
        seed, checkpoint, device, batch_size, num_workers, progress, zero_shot_classes, templates
    )
    common.update(model_options or {})
    out = check_writable(output_dir)
    return _run_and_write(model, specs, data, out, common, per_task, knobs)


@dataclasses.dataclass(frozen=True)
class _ReportKnobs:
    """The arguments of :func:`run_report` that its steps read besides the tasks' options."""

    seed: int
    checkpoint: str | None
    device: str | None
    num_workers: int | None
    progress: bool
    challenge_foregrounds: int | None


def _checked_request(
    data: Mapping[str, Any] | None,
    benchmarks: Sequence[str] | None,
    output_dir: str | Path,
    challenge_foregrounds: int | None,
    task_options: Mapping[str, Mapping[str, Any]] | None,
) -> tuple[dict[str, Any], list[BenchmarkSpec], dict[str, dict[str, Any]]]:
    """(data by benchmark, the benchmarks, each task's extra options) of a report, checked
    before any work: a ReportError for data of no benchmark of the report, a sample size
    below 1, an unknown or doubly set task option, or an output inside the data."""
    data = dict(data or {})
    specs = report_specs(benchmarks)
    unknown = sorted(set(data) - {s.name for s in specs})
    if unknown:
        raise ReportError(
            f"--data names {', '.join(unknown)}, which this report does not cover "
            f"(it covers {', '.join(s.name for s in specs)})."
        )
    if challenge_foregrounds is not None and challenge_foregrounds < 1:
        raise ReportError(f"--challenge-foregrounds must be >= 1, got {challenge_foregrounds}.")
    per_task = _checked_task_options(task_options, challenge_foregrounds)
    for name, given in data.items():
        inside = output_in_data(output_dir, given, data_flag=f"--data {name}")
        if inside:
            raise ReportError(inside)
    return data, specs, per_task


def _checked_task_options(
    task_options: Mapping[str, Mapping[str, Any]] | None, challenge_foregrounds: int | None
) -> dict[str, dict[str, Any]]:
    """Each task's extra options, every one an option of its task and none also set by
    ``--challenge-foregrounds``; a ReportError otherwise."""
    per_task = {task: dict(extra) for task, extra in (task_options or {}).items()}
    for task, extra in per_task.items():  # before any work, not after the first tasks
        unknown = sorted(set(extra) - set(_task_options(task, extra)))
        if unknown:
            raise ReportError(f"The {task} task has no option(s) {', '.join(unknown)}.")
        sample = get_task(task).sample_option
        if challenge_foregrounds is not None and sample and sample in extra:
            raise ReportError(
                f"--challenge-foregrounds and --task-option {task}.{sample.replace('_', '-')} both "
                f"set the {task} task's {sample}; give one of them."
            )
    return per_task


def _load_model_once(
    model: str,
    spec: BenchmarkSpec,
    knobs: _ReportKnobs,
    zero_shot_classes: str,
    templates: str,
    model_options: Mapping[str, Any] | None,
) -> None:
    """Load model id ``model`` as the tasks will, so that a model that cannot load fails
    before any task runs."""
    # with the head the tasks use: a zero-shot model's text embeddings are computed once
    # here (then cached for every task), never for prompts no task asked for
    load_model(
        model,
        knobs.checkpoint,
        knobs.device,
        classnames=zero_shot_classnames(zero_shot_classes, spec),
        templates=templates,
        progress=knobs.progress,
        vlm=_model_vlm_settings(model_options or {}, spec),  # the tasks' own
    )


def _common_task_options(
    seed: int,
    checkpoint: str | None,
    device: str | None,
    batch_size: int | None,
    num_workers: int | None,
    progress: bool,
    zero_shot_classes: str,
    templates: str,
) -> dict[str, Any]:
    """The options every task of a report is run with (before the model options)."""
    return {
        "seed": seed,
        "checkpoint": checkpoint,
        "device": device,
        "batch_size": batch_size,
        "num_workers": num_workers,
        "progress": progress,
        "zero_shot_classes": zero_shot_classes,
        "templates": templates,
    }


def _run_and_write(
    model: Any,
    specs: list[BenchmarkSpec],
    data: dict[str, Any],
    out: Path,
    common: Mapping[str, Any],
    per_task: Mapping[str, Mapping[str, Any]],
    knobs: _ReportKnobs,
) -> dict[str, Any]:
    """Every benchmark's tasks run into ``out`` (locked, one decode pipeline for all); the
    report document written there and returned."""
    started = time.perf_counter()
    # data opened before any task runs: the progress counts only tasks that will run
    readers = {spec.name: _open_benchmark_data(spec, data.get(spec.name)) for spec in specs}
    steps = [
        (spec, task)
        for spec in specs
        if not isinstance(readers[spec.name], str)  # a str: why there is no data
        for task in spec.report_tasks
    ]
    benchmarks_out: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    board: list[dict[str, Any]] = []  # the leaderboard numbers: what .eval_results may hold
    # one decode pipeline for every task of the card: its workers start once
    cap = default_num_workers(resolve_device(knobs.device))
    with output_lock(out), shared_pipeline(knobs.num_workers, cap):
        for spec in specs:
            done = sum(len(entry["tasks"]) for entry in benchmarks_out)
            given = (data.get(spec.name), readers[spec.name])
            entry = _run_benchmark(
                spec,
                model,
                given,
                out,
                common,
                steps,
                done,
                knobs.challenge_foregrounds,
                knobs.progress,
                per_task,
            )
            benchmarks_out.append(entry)
            docs = {t: r.get("results") for t, r in entry["tasks"].items()}
            rows += headline_rows(spec, docs)
            board += headline_rows(spec, docs, spec.leaderboard)
        doc = _report_document(model, specs, benchmarks_out, rows, board, knobs, started)
        write_report_files(doc, out)
    return doc


def _report_document(
    model: Any,
    specs: list[BenchmarkSpec],
    benchmarks_out: list[dict[str, Any]],
    rows: list[dict[str, Any]],
    board: list[dict[str, Any]],
    knobs: _ReportKnobs,
    started: float,
) -> dict[str, Any]:
    """The report document: the model, the software, the settings, the headline and
    leaderboard rows, every benchmark's entry and the references."""
    settings = {
        "challenge_foregrounds": knobs.challenge_foregrounds,
        "checkpoint": knobs.checkpoint,
    }
    return {
        "schema_version": REPORT_SCHEMA,
        "kind": "bgbench-report",
        "model": model
        if isinstance(model, str)
        else _first(benchmarks_out, "model") or getattr(model, "model_id", type(model).__name__),
        "model_resolved": _first(benchmarks_out, "model_resolved"),
        "hf_bgbench_version": __version__,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "software": software_versions(),
        "seed": knobs.seed,
        "settings": settings,
        "headlines": rows,
        "leaderboard": board,
        "benchmarks": benchmarks_out,
        "references": [r for spec in specs for r in reference_rows(spec)],
        "seconds": round(time.perf_counter() - started, 1),
    }


def _first(entries: list[dict[str, Any]], key: str) -> str | None:
    for entry in entries:
        for task in entry["tasks"].values():
            if task.get("results"):
                return task["results"].get(key)
    return None


def _open_benchmark_data(spec: BenchmarkSpec, data: Any) -> Reader | str:
    """The reader of ``spec``'s data (``data``: a folder, id or reader; None: the default
    source), or why there is none."""
    # report has no --benchmark: data of another benchmark is named as --data NAME=PATH
    given = str(data).replace("{", "{{").replace("}", "}}")
    try:
        return open_data(data, spec, choose=f"--data {{name}}={given}")
    except (DataSourceError, ValueError, OSError) as err:
        return str(err)


def _run_benchmark(
    spec: BenchmarkSpec,
    model: Any,
    data_and_reader: tuple[Any, Reader | str],
    out: Path,
    common: Mapping[str, Any],
    steps: list[tuple[BenchmarkSpec, str]],
    done: int,
    challenge_foregrounds: int | None,
    progress: bool,
    task_options: Mapping[str, Mapping[str, Any]],
) -> dict[str, Any]:
    """The entry of benchmark ``spec`` in the report: its data and each of its tasks run
    (tasks ``done + 1``... of ``steps``), a failed one recorded with its message."""
    entry: dict[str, Any] = {
        "name": spec.name,
        "title": spec.short_name,
        "hub_repo": spec.hub_repo,
        "status": "run",
        "reason": "",
        "command": "",
        "data": None,
        "tasks": {},
    }
    data, reader = data_and_reader
    if isinstance(reader, str):
        # said once, by the summary, with the command that fetches the data
        entry.update(status="not run", reason=reader, command=_fetch_command(spec))
        return entry
    location = str(reader.location)
    entry["data"] = {
        "given": str(data) if data is not None else None,
        "location": location,
        "kind": reader.kind,
    }
    # a reader given as data is used as it is (a Space's Hub-only reader never falls back
    # to a server folder of the same name); a folder or id, by the location it resolved to
    task_data = data if isinstance(data, Reader) else location
    for i, task in enumerate(spec.report_tasks, start=done + 1):
        _say(progress, f"[{i}/{len(steps)}] {spec.short_name} · {task}")
        options = _task_options(task, {**common, **task_options.get(task, {})})
        sample = get_task(task).sample_option  # what --challenge-foregrounds N sets to N
        if sample and challenge_foregrounds is not None:
            options[sample] = challenge_foregrounds
        entry["tasks"][task] = _run_task(
            spec, task, model, task_data, out, options, challenge_foregrounds, progress
        )
        if entry["tasks"][task]["status"] == "failed":
            entry["status"] = "failed"
    return entry


def _run_task(
    spec: BenchmarkSpec,
    task: str,
    model: Any,
    task_data: Any,
    out: Path,
    options: dict[str, Any],
    challenge_foregrounds: int | None,
    progress: bool,
) -> dict[str, Any]:
    """Run one task of the report into its folder of ``out``; its entry (its results, or
    why it failed when it raised a ValueError, OSError or RuntimeError)."""
    folder = out / spec.name / task
    try:
        results = execute(
            get_task(task),
            model,
            benchmark=spec.name,
            data=task_data,
            output_dir=folder,
            **options,
        )
    except KeyboardInterrupt:
        raise
    except (ValueError, OSError, RuntimeError) as err:
        _say(progress, f"{spec.short_name} · {task}: failed -- {err}")
        return {"status": "failed", "reason": str(err), "folder": None}
    return {
        "status": "run",
        "folder": str(folder.relative_to(out)),
        "protocol": protocol_of(results)[0],
        "deviations": _deviations(task, results, challenge_foregrounds),
        "results": results,
    }


def _deviations(task: str, results: Mapping[str, Any], sampled: int | None) -> list[str]:
    found = protocol_of(results)[1]
    subset = results.get("subset") or {}
    spec = get_task(task)
    if spec.sample_deviation and sampled is not None and subset.get(spec.sample_option):
        found.append(spec.sample_deviation(results))
    return found


def _say(progress: bool, line: str) -> None:
    if progress:
        print(line, file=sys.stderr, flush=True)


def write_report_files(doc: dict[str, Any], out: Path) -> list[str]:
    """Write report.json, report.md, reliance_profile.png and .eval_results/ into ``out``
    atomically; returns the eval-results files written (relative to ``out``). Numbers that
    may not be leaderboard entries are withheld from .eval_results/ (no folder when none
    may be), and report.md says why (``doc["eval_results_withheld"]``)."""

    def eval_results(path: Path) -> None:
        doc["eval_results"] = [f".eval_results/{n}" for n in write_eval_results(doc, path)]

    write_run_folder(  # in this order: the .md and .json name the eval-results files
        out,
        {
            "reliance_profile.png": lambda p: draw_profile(
                shown_rows(doc["headlines"]), p, doc["model"]
            ),
            ".eval_results": eval_results,
            "report.md": lambda p: p.write_text(report_markdown(doc), encoding="utf-8"),
            "report.json": lambda p: write_json(doc, p),
        },
        remove=REPORT_FILES,
    )
    return list(doc.get("eval_results", []))
