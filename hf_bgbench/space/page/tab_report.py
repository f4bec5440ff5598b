"""The Space's *Report card* tab: every benchmark's headline numbers for one model, beside the
published models (:mod:`hf_bgbench.space.views.report_card`), as a section to paste into a model
card, with its profile figure and files."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import gradio as gr

from hf_bgbench.benchmarks import get_benchmark, list_benchmarks
from hf_bgbench.space.checks.allowlist import AllowedDataset, hidden_paths
from hf_bgbench.space.checks.messages import visitor_message
from hf_bgbench.space.checks.model_id import check_model_id
from hf_bgbench.space.checks.model_weights import check_model_cached, check_model_size
from hf_bgbench.space.jobs import queueing, running
from hf_bgbench.space.jobs.process import Job
from hf_bgbench.space.jobs.status import JobStatus
from hf_bgbench.space.page.controls import MODEL_LABEL
from hf_bgbench.space.settings import allowed, job_seconds, model_limits, run_output_dir
from hf_bgbench.space.views.display import (
    figures_html,
    public_document,
    public_text,
    write_public_document,
)
from hf_bgbench.space.views.report_card import (
    report_benchmarks,
    report_datasets,
    report_reproduce_section,
    space_report,
)

REPORT_IDLE, REPORT_BUSY = "Make the report card", "Making the report card…"


def report_seconds(offered: list[AllowedDataset] | None = None) -> float:
    """The report's time limit: the sum of the limits of the tasks it runs -- the report
    tasks of the benchmarks the allow-list (``offered``) has data for, no others."""
    offered = list(allowed().values()) if offered is None else offered
    tasks = {t for name in report_benchmarks(offered) for t in get_benchmark(name).report_tasks}
    return float(sum(job_seconds(t) for t in tasks))


def one_report_per_client(
    model_text: Any,
    request: gr.Request = None,  # type: ignore[assignment]
) -> Any:
    """The report button's validator: it shares the scoring jobs' per-client limit (one
    input, so one ``gr.validate``, not a list: see :func:`queueing.refusal`)."""
    return queueing.refusal(queueing.JOB_GROUP, "a scoring job", request, 1, model_text)


def report_card(
    model_text: str,
    request: gr.Request = None,  # type: ignore[assignment]
    progress: Any = gr.Progress(),  # noqa: B008 (gradio idiom)
) -> Iterator[tuple[Any, ...]]:
    """Every benchmark's headline numbers for one model, on the allow-listed datasets at the
    Space's caps (:func:`hf_bgbench.space.views.report_card.space_report`), beside the
    published models: the report card's Markdown section, its profile figure and its files.
    A generator like :func:`hf_bgbench.space.page.tab_score.score`: closing it kills the
    job."""
    title = f"report card · {(model_text or '').strip()[:80] or '?'}"
    offered = list(allowed().values())
    seconds = report_seconds(offered)
    status = JobStatus(title, seconds)
    skip = gr.skip()
    hidden: dict[str, str] = {}
    for entry in offered:
        hidden.update(hidden_paths(entry))
    busy = gr.update(value=REPORT_BUSY, interactive=False)
    idle = gr.update(value=REPORT_IDLE, interactive=True)
    status.stage("checking the model")
    yield (status.markdown(), "", None, None, busy)
    try:
        model = check_model_id(model_text)
        check_model_cached(model.repo_id)
        note = check_model_size(model.repo_id, *model_limits())
        out = run_output_dir()
        job = Job(
            space_report,
            (model.model_id, offered, str(out)),
            seconds=seconds,
            hint="Try a smaller model.",
        )
        status.stage(f"loading {model.model_id}, then each benchmark's task in turn")

        def update() -> tuple[Any, ...]:  # drawn anew at every tick: the clock and the step
            return (status.markdown(), skip, skip, skip, skip)

        with job:
            if not (yield from running.follow(job, status, progress, request, update)):
                return
            entered = record_report_runs(job.result(), offered)
    except Exception as err:
        message = visitor_message(err, hidden)
        yield (f"**Stopped:** {message}", skip, skip, skip, idle)
        raise running.stopped(message) from None
    section = report_section(out, hidden)
    covered = {e.benchmark for e in offered}
    missing = [
        get_benchmark(n).short_name
        for n in list_benchmarks()
        if get_benchmark(n).report and n not in covered
    ]
    if missing:
        section += f"\n\n> This Space offers no data for {', '.join(missing)}: not in this card."
    if note:
        section += f"\n\n> {note}"
    section += "".join(f"\n\n> {n}" for n in entered)
    section += "\n\n" + report_reproduce_section(model.model_id, offered)
    took = round(status.clock() - status.started)
    queueing.JOB_TIMES.add(took)
    yield (
        f"**{title}**\n\nDone in {took} s: the report card is below.",
        section,
        figures_html([out / "reliance_profile.png"]),
        report_files(out, hidden),
        idle,
    )


def record_report_runs(doc: dict[str, Any], offered: list[AllowedDataset]) -> list[str]:
    """Each task run of a report card entered on the leaderboard, as Score's runs are (the
    same rules); what the leaderboard made of each."""
    datasets = report_datasets(offered)
    said = []
    for bench in doc.get("benchmarks") or []:
        entry = datasets.get(bench.get("name"))
        for task in (bench.get("tasks") or {}).values():
            if entry is not None and task.get("status") == "run" and task.get("results"):
                said.append(running.record_run(task["results"], entry.name))
    return said


def _offered_name(name: str) -> str:
    """The download name of a report file: a download has no folders, so
    ``.eval_results/in9.yaml`` is offered as ``eval_results_in9.yaml``."""
    return name.lstrip(".").replace("/", "_")


def _offered_report(out: Path) -> dict[str, Path]:
    """The report's own files the Space offers (download name -> file): report.md,
    report.json, the profile figure, and the eval-results files report.json says it wrote
    (none when it wrote none; never the folder's bookkeeping files)."""
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    files = {"report.md": out / "report.md", "report.json": out / "report.json"}
    files.update({_offered_name(n): out / n for n in report.get("eval_results") or []})
    files["reliance_profile.png"] = out / "reliance_profile.png"
    return {name: path for name, path in files.items() if path.is_file()}


def offered_files_section(text: str, offered: list[str]) -> str:
    """report.md's "Files" list as the Space offers them: the per-task folders (not offered
    here) left out, the eval-results files by their download names."""
    lines, in_files = [], False
    for line in text.splitlines():
        if line.startswith("#"):
            in_files = line.strip() == "### Files"
        elif in_files and line.startswith("- `"):
            name = line[3:].split("`", 1)[0]
            if _offered_name(name) not in offered:
                continue
            line = line.replace(f"`{name}`", f"`{_offered_name(name)}`", 1)
        lines.append(line)
    return "\n".join(lines) + ("\n" if text.endswith("\n") else "")


def report_section(out: Path, hidden: dict[str, str]) -> str:
    """report.md as the page shows it: no server path (:func:`public_text`), the figure
    shown beside it rather than linked, its list of files those the page offers."""
    text = (out / "report.md").read_text(encoding="utf-8")
    text = "\n".join(line for line in text.splitlines() if "](reliance_profile.png)" not in line)
    return public_text(offered_files_section(text, list(_offered_report(out))), hidden)


def report_files(out: Path, hidden: dict[str, str]) -> list[str]:
    """The report's files (:func:`_offered_report`), with no server path in them."""
    folder = out / "download"
    folder.mkdir(parents=True, exist_ok=True)
    offered = _offered_report(out)
    files = []
    for name, source in offered.items():
        if name == "report.json":
            report = json.loads(source.read_text(encoding="utf-8"))
            public = public_document(report, hidden)
            files.append(str(write_public_document(public, folder / name)))
        elif name == "report.md":
            text = offered_files_section(source.read_text(encoding="utf-8"), list(offered))
            (folder / name).write_text(public_text(text, hidden), encoding="utf-8")
            files.append(str(folder / name))
        elif source.suffix == ".png":
            files.append(str(source))
        else:
            (folder / name).write_text(public_text(source.read_text(encoding="utf-8"), hidden))
            files.append(str(folder / name))
    return files


def build_report_tab() -> Any:
    """The *Report card* tab, within the demo's ``gr.Blocks``. Returns its controls by name;
    :func:`report_job` wires its job."""
    with gr.Tab("Report card"):
        gr.Markdown(
            "One model on every benchmark this Space has data for: each headline number "
            "with its 95% interval, beside the published models, as a section to paste "
            "into a model card (the `bgbench report` command's report, at this Space's "
            "caps)."
        )
        model = gr.Textbox(label=MODEL_LABEL, value="tf_efficientnet_lite0", elem_id="report-model")
        with gr.Row():
            run = gr.Button(REPORT_IDLE, variant="primary", scale=4, elem_id="report-button")
            stop = gr.Button("Stop", variant="stop", scale=1, elem_id="report-stop")
        status = gr.Markdown(
            "Enter a model, then press **Make the report card**.", elem_id="report-status"
        )
        section = gr.Markdown(elem_id="report-card")
        figure = gr.HTML(elem_id="report-profile")
        files = gr.File(label="Download: the report card's files", file_count="multiple")
    return SimpleNamespace(
        model=model, run=run, stop=stop, status=status, section=section, figure=figure, files=files
    )


def report_job(tab: Any) -> None:
    """The report button's job (:func:`report_card`), behind its checked click, and its Stop
    button."""
    reporting = queueing.queued_job(
        queueing.checked_click(tab.run, tab.model, tab.status, queueing.JOB_GROUP),
        report_card,
        [tab.model],
        [tab.status, tab.section, tab.figure, tab.files, tab.run],
        tab.section,
        one_report_per_client,
    )
    queueing.stop_button(tab.stop, reporting, tab.status, tab.run, REPORT_IDLE)
