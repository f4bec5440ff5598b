"""The Space's *Score a model* tab: a task of a benchmark on an allow-listed dataset, with
live status, the report, plots, files to download and the predictions on a few images per
variant; a full run enters the leaderboard."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import gradio as gr

from hf_bgbench.benchmarks import get_benchmark, list_benchmarks
from hf_bgbench.models.vlm.settings import VLM_PROTOCOLS
from hf_bgbench.render import render_markdown
from hf_bgbench.space.checks.allowlist import allowed_data, datasets_for, hidden_paths
from hf_bgbench.space.checks.inputs import (
    check_picks,
    checked_inputs,
    default_task,
    default_variants,
    every_task,
    label_maps,
    requested_benchmark,
    task_choices,
    variants_of,
)
from hf_bgbench.space.checks.messages import visitor_message
from hf_bgbench.space.jobs import queueing, running
from hf_bgbench.space.jobs.status import JobStatus
from hf_bgbench.space.page.controls import MODEL_LABEL
from hf_bgbench.space.settings import (
    JOB_SECONDS,
    allowed,
    job_seconds,
    offered_benchmarks,
    run_output_dir,
    takes_variants,
    task_options,
)
from hf_bgbench.space.views.display import (
    figures_html,
    narrow_tables,
    public_document,
    run_figures,
    run_files,
    split_report,
    write_results_download,
)
from hf_bgbench.space.views.reproduce import cli_files, reproduce_section, run_command
from hf_bgbench.space.views.samples import prediction_gallery, read_predictions, samples_html
from hf_bgbench.spec import BenchmarkSpec

SAMPLES = 6  # images per variant shown after a run
SCORE_IDLE, SCORE_BUSY = "Score", "Scoring…"
VLM_DEFAULT_RULE = VLM_PROTOCOLS[0]  # likelihood, the library's default


def one_score_per_client(
    model_text: Any,
    dataset: Any,
    variants: Any,
    restrict: Any,
    benchmark: Any,
    task: Any,
    label_map: Any = None,
    vlm_rule: Any = None,
    request: gr.Request = None,  # type: ignore[assignment]
) -> list[Any]:
    """The Score button's validator (Gradio runs it before the job is queued): one
    verdict per input of :func:`score`."""
    return queueing.refusal(queueing.JOB_GROUP, "a scoring job", request, 8, model_text)


def score(
    model_text: str,
    dataset: str,
    variants: list[str],
    restrict: bool,
    benchmark: str | None = None,
    task: str | None = None,
    label_map: str = "auto",
    vlm_rule: str = VLM_DEFAULT_RULE,
    request: gr.Request = None,  # type: ignore[assignment]
    progress: Any = gr.Progress(),  # noqa: B008 (gradio idiom)
) -> Iterator[tuple[Any, ...]]:
    """Check the inputs, run ``task`` (None: the benchmark's first) of ``benchmark`` on the
    allow-listed ``dataset`` (``vlm_rule``: how a generative VLM's answer becomes class
    scores, ``--vlm-protocol``; ``label_map``: how the model's outputs become the benchmark's
    labels, ``--label-map``), add a full run to the leaderboard. A generator: it first yields
    the job's status (within a second of the click), then every second while the job runs,
    and last (status, Markdown report, plots, files to download, an HTML grid of a few images
    per variant with the model's predictions, the LaTeX row and model-index block, the Score
    button). Closing it (the visitor left, or pressed Stop) kills the job. Every failure
    reaches the visitor as a plain ``gr.Error`` message, the status saying so too."""
    entry = None
    benchmark = requested_benchmark(benchmark)
    task = default_task(benchmark) if task is None else task
    title = f"{task} · {(model_text or '').strip()[:80] or '?'} · {dataset}"
    # a task that scores the variants picked runs one progress bar each: the whole job's
    # estimate can be made from them
    steps = len(variants or []) if task and takes_variants(task) else None
    status = JobStatus(title, job_seconds(task) if task else JOB_SECONDS, steps=steps)
    skip = gr.skip()
    busy = gr.update(value=SCORE_BUSY, interactive=False)
    idle = gr.update(value=SCORE_IDLE, interactive=True)

    def update(*, button: Any = skip) -> tuple[Any, ...]:
        return (status.markdown(), skip, skip, skip, skip, skip, button)

    status.stage("checking the model and the dataset")
    yield (status.markdown(), "", "", None, "", "", busy)
    try:
        spec = get_benchmark(benchmark)
        check_picks(spec, task, variants, label_map, vlm_rule)
        progress(0, desc="checking the model and the dataset")
        model, entry, note = yield from running.ticking(
            lambda: checked_inputs(model_text, dataset, benchmark), update
        )
        data = allowed_data(entry, spec)
        out = run_output_dir()
        picks = (task, variants, restrict, label_map, vlm_rule)
        options = _job_options(spec, benchmark, picks, data, out)
        status.stage(f"loading {model.model_id} and the data")
        progress(0.05, desc=f"loading {model.model_id}")
        yield update()
        command = run_command(task, model.model_id, entry, options)
        with running.job_for(task, model.model_id, options, command) as job:
            if not (yield from running.follow(job, status, progress, request, update)):
                return  # nobody reads the updates: stop the job (the with block kills it)
            results = job.result()
        running.FINISHED.add(task, model.model_id, entry.name, options, out, results)
        gallery = ""
        if (out / "predictions").is_dir():  # a task that keeps per-image predictions
            status.stage("drawing the predictions on a few images")
            progress(None, desc="drawing the predictions on a few images")
            yield update()
            gallery = _predictions_grid(out, data, benchmark)
    except Exception as err:
        message = visitor_message(err, hidden_paths(entry))
        yield (f"**Stopped:** {message}", skip, skip, skip, skip, skip, idle)
        raise running.stopped(message) from None
    notes = [n for n in (note, running.record_run(results, entry.name)) if n]
    report, extras, figures, files = _finished_run(task, model, entry, options, results, notes)
    took = round(status.clock() - status.started)
    queueing.JOB_TIMES.add(took)
    yield (
        f"**{title}**\n\nDone in {took} s: the report is below.",
        report,
        figures,
        files,
        gallery,
        extras,  # its model-index names the data scored (render.model_index)
        idle,
    )


def _job_options(
    spec: Any, benchmark: str, picks: tuple[Any, ...], data: Any, out: Path
) -> dict[str, Any]:
    """The task's options for the visitor's ``picks`` (task, variants, restriction, label
    map, VLM rule) on ``data``, written to ``out``."""
    task, variants, restrict, label_map, vlm_rule = picks
    # the benchmark's order, as every table and grid of the report shows them
    picked = [v for v in spec.variants if v in set(variants or [])]
    options = task_options(task, picked, restrict)
    options.update(benchmark=benchmark, data=data, output_dir=str(out))
    if label_map != "auto":
        options["label_map"] = label_map
    if vlm_rule != VLM_DEFAULT_RULE:  # (refused by the task for a model that is no VLM)
        options["vlm_protocol"] = vlm_rule
    return options


def _predictions_grid(out: Path, data: Any, benchmark: str) -> str:
    """The model's predictions on a few images of each variant, as an HTML grid."""
    tables = read_predictions(out / "predictions")
    shown = prediction_gallery(data, benchmark, tables, per_variant=SAMPLES)
    gallery = samples_html(shown)
    if gallery:
        gallery = f"<h3>The model's predictions on {SAMPLES} of the images</h3>{gallery}"
    return gallery


def _finished_run(
    task: str,
    model: Any,
    entry: Any,
    options: dict[str, Any],
    results: dict[str, Any],
    notes: list[str],
) -> tuple[str, str, str, list[str]]:
    """What a finished run shows: (its Markdown report with the notes and the command that
    reproduces it, the LaTeX row and model-index block, its plots, its files)."""
    out, hidden = Path(options["output_dir"]), hidden_paths(entry)
    spec = get_benchmark(options["benchmark"])
    public = public_document(results, hidden)
    shown_doc, tables_csv = narrow_tables(public, out / "tables", reference=spec.reference_variant)
    report, extras = split_report(render_markdown(shown_doc))
    report = report.rstrip() + "".join(f"\n\n> {n}" for n in notes)
    report += "\n\n" + reproduce_section(task, model.model_id, entry, options)
    results_file = write_results_download(public, out, task)
    tables_csv += cli_files(out, results, hidden)
    figures = figures_html(run_figures(results, out))
    return report, extras, figures, run_files(out, results_file, tables_csv)


def _variants_update(dataset: str | None, benchmark: str) -> Any:
    held = variants_of(dataset, benchmark)
    return gr.update(choices=held, value=default_variants(dataset, benchmark))


def _every_variant() -> list[str]:
    """Every benchmark's variants: the variant control's choices at build time (the API's)."""
    return list(dict.fromkeys(v for b in list_benchmarks() for v in get_benchmark(b).variants))


def benchmark_note(spec: BenchmarkSpec) -> str:
    """What the benchmark is, under its picker: its description (with its data's licence,
    where the licence limits use) and its paper."""
    paper = f" [Paper]({spec.paper_url})." if spec.paper_url else ""
    licence = f" {spec.data_license}" if spec.data_license else ""
    return f"**{spec.short_name}**: {spec.description}{paper}{licence}"


def on_benchmark(name: str) -> tuple[Any, ...]:
    """The tab's task, variant and dataset choices for benchmark ``name`` (the first of each
    picked; the variants the dataset holds, those the headline reads ticked) and its note."""
    spec = get_benchmark(name)
    offered = datasets_for(allowed(), name)
    chosen = offered[0] if offered else None
    return (
        gr.update(choices=task_choices(name), value=spec.tasks[0]),
        _variants_update(chosen, name),
        gr.update(choices=offered, value=chosen),
        benchmark_note(spec),
    )


def _expert_controls(ticked: list[str]) -> tuple[Any, Any, Any, Any]:
    """The Score tab's expert options (variants, restricted argmax, label map, VLM rule),
    each saying what it changes; their defaults are the published protocol."""
    variants = gr.CheckboxGroup(
        _every_variant(),
        value=ticked,
        label="Variants (those the dataset holds)",
        info=(
            "Ticked: those the headline metrics read. Each variant adds time; past the "
            "job's image budget each scores a seeded subset (recorded, not ranked)."
        ),
        elem_id="variants",
    )
    restrict = gr.Checkbox(
        label="Argmax only over the benchmark's ImageNet classes (not the published protocol)"
    )
    label_map = gr.Radio(
        label_maps(),
        value="auto",
        label="Label map: how the model's outputs become the benchmark's labels",
        info=(
            "auto: the benchmark's published protocol. model / imagenet: the model's own "
            "classes mapped (imagenet: a 1000-class model's), no head to train. probe: a "
            "linear head trained on the train split (long on a CPU). A choice other than "
            "the benchmark's protocol is recorded, and ranked apart."
        ),
        elem_id="label-map",
    )
    vlm_rule = gr.Radio(
        list(VLM_PROTOCOLS),
        value=VLM_DEFAULT_RULE,
        label="Generative VLMs (LLaVA, Qwen2-VL, SmolVLM, ...): how an answer becomes class scores",
        info=(
            "likelihood: each class name's log-probability as the answer; choice: lettered "
            "options, read from the letters' logits; open: a free answer matched to the "
            "class names (no class or two: no answer, counted). Recorded with the "
            "results; other models leave it at likelihood."
        ),
        elem_id="vlm-rule",
    )
    return variants, restrict, label_map, vlm_rule


def build_score_tab(start: BenchmarkSpec, every_name: list[str], first: str | None) -> Any:
    """The *Score a model* tab, within the demo's ``gr.Blocks``, showing benchmark ``start``
    and dataset ``first`` (``every_name``: every allow-listed dataset, the API's choices).
    Returns its controls by name; :func:`score_job` wires its job."""
    ticked = default_variants(first, start.name)
    with gr.Tab("Score a model"):
        with gr.Row():
            model_id = gr.Textbox(
                label=MODEL_LABEL, value="tf_efficientnet_lite0", elem_id="score-model"
            )
            dataset = gr.Dropdown(every_name, value=first, label="Dataset")
        with gr.Row():
            benchmark = gr.Dropdown(offered_benchmarks(), value=start.name, label="Benchmark")
            # a dropdown, not radio buttons: six long task names pushed Score off a phone
            task = gr.Dropdown(every_task(), value=start.tasks[0], label="Task", elem_id="task")
        # the button before the expert options: a first visit reaches it without scrolling
        with gr.Row():
            run = gr.Button(SCORE_IDLE, variant="primary", scale=4, elem_id="score-button")
            stop = gr.Button("Stop", variant="stop", scale=1, elem_id="stop-button")
        about = gr.Markdown(benchmark_note(start), elem_id="benchmark-note")
        status = gr.Markdown(
            "Pick a model, a dataset and a task, then press **Score**. The defaults are the "
            "benchmark's published protocol; **Advanced** below changes them.",
            elem_id="job-status",
        )
        with gr.Accordion(
            "Advanced: variants, label map, generative-VLM rule", open=False, elem_id="advanced"
        ):
            variants, restrict, label_map, vlm_rule = _expert_controls(ticked)
        benchmark.change(on_benchmark, benchmark, [task, variants, dataset, about], queue=False)
        dataset.input(_variants_update, [dataset, benchmark], variants, queue=False)
        task.change(lambda t: gr.update(visible=takes_variants(t)), task, variants, queue=False)
        report = gr.Markdown(elem_id="report")
        samples = gr.HTML(elem_id="samples")
        plots = gr.HTML(elem_id="plots")
        with gr.Accordion("LaTeX row and model card (model-index)", open=False):
            extras = gr.Markdown(elem_id="report-extras")
        raw = gr.File(
            label="Download: results (JSON, Markdown), per-image predictions (Parquet), "
            "tables (CSV), plots",
            file_count="multiple",
        )
    return SimpleNamespace(
        model_id=model_id,
        dataset=dataset,
        benchmark=benchmark,
        task=task,
        about=about,
        variants=variants,
        restrict=restrict,
        label_map=label_map,
        vlm_rule=vlm_rule,
        run=run,
        stop=stop,
        status=status,
        report=report,
        samples=samples,
        plots=plots,
        extras=extras,
        raw=raw,
    )


def score_job(tab: Any) -> Any:
    """The Score button's job (:func:`score`), behind its checked click; returns its event."""
    return queueing.queued_job(
        queueing.checked_click(tab.run, tab.model_id, tab.status, queueing.JOB_GROUP),
        score,
        [
            tab.model_id,
            tab.dataset,
            tab.variants,
            tab.restrict,
            tab.benchmark,
            tab.task,
            tab.label_map,
            tab.vlm_rule,
        ],
        [tab.status, tab.report, tab.plots, tab.raw, tab.samples, tab.extras, tab.run],
        # Gradio's progress bar (the task's own bars, via gr.Progress) right under the
        # status line, which stays readable
        tab.report,
        one_score_per_client,
    )
