"""The Space's *Compare* tab: model A against model B on the same images (``bgbench
compare``, :mod:`hf_bgbench.space.views.compare`); a run this process finished is reused
(:mod:`hf_bgbench.space.jobs.finished_runs`)."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import gradio as gr

from hf_bgbench.benchmarks import get_benchmark
from hf_bgbench.report.paired import comparable_tasks
from hf_bgbench.space.checks.allowlist import hidden_paths
from hf_bgbench.space.checks.inputs import (
    checked_inputs,
    default_task,
    default_variants,
    every_task,
    task_choices,
)
from hf_bgbench.space.checks.messages import SpaceRefusal, visitor_message
from hf_bgbench.space.checks.model_id import check_model_id
from hf_bgbench.space.jobs import queueing, running
from hf_bgbench.space.jobs.status import JobStatus
from hf_bgbench.space.page.controls import offer_datasets
from hf_bgbench.space.settings import job_seconds, offered_benchmarks, run_output_dir
from hf_bgbench.space.views.compare import compare_folders, run_folders
from hf_bgbench.space.views.display import figures_html
from hf_bgbench.space.views.reproduce import data_argument, reproduce_markdown, task_command
from hf_bgbench.spec import BenchmarkSpec

COMPARE_IDLE, COMPARE_BUSY = "Compare", "Comparing…"


def one_compare_per_client(
    model_a: Any,
    model_b: Any,
    dataset: Any,
    benchmark: Any,
    task: Any,
    request: gr.Request = None,  # type: ignore[assignment]
) -> list[Any]:
    """The Compare button's validator: both model ids checked; one scoring job per client."""
    fine = queueing.refusal(queueing.JOB_GROUP, "a scoring job", request, 5, model_a)
    try:
        check_model_id(str(model_b))
    except SpaceRefusal as err:
        fine[1] = gr.validate(False, str(err))
    return fine


def compare_models(
    model_a: str,
    model_b: str,
    dataset: str,
    benchmark: str,
    task: str | None = None,
    request: gr.Request = None,  # type: ignore[assignment]
    progress: Any = gr.Progress(),  # noqa: B008 (gradio idiom)
) -> Iterator[tuple[Any, ...]]:
    """Model A against model B on the same images (``bgbench compare``): each model's run of
    ``task`` (None: the benchmark's first; a run this process already finished is reused),
    then the paired differences with their intervals, the verdicts and the forest plot.
    Yields (status, Markdown, plot HTML, files, the button), as
    :func:`hf_bgbench.space.page.tab_score.score`."""
    entry = None
    task = default_task(benchmark) if task is None else task
    title = f"compare · {(model_a or '?').strip()[:60]} vs {(model_b or '?').strip()[:60]}"
    status = JobStatus(title, job_seconds(task), limited="each model's run")
    skip = gr.skip()
    busy = gr.update(value=COMPARE_BUSY, interactive=False)
    idle = gr.update(value=COMPARE_IDLE, interactive=True)

    def update() -> tuple[Any, ...]:
        return (status.markdown(), skip, skip, skip, skip)

    def follow_job(job: Any) -> Iterator[tuple[Any, ...]]:
        return running.follow(job, status, progress, request, update)

    status.stage("checking the models and the dataset")
    yield (status.markdown(), "", "", None, busy)
    try:
        spec = get_benchmark(benchmark)
        spec.check_task(task)
        if task not in comparable_tasks():
            raise SpaceRefusal(
                f"Compare pairs the tasks {', '.join(comparable_tasks())} image by image; "
                f"{task} has no per-image scores."
            )
        a, entry, note_a = yield from running.ticking(
            lambda: checked_inputs(model_a, dataset, benchmark), update
        )
        b, _, note_b = yield from running.ticking(
            lambda: checked_inputs(model_b, dataset, benchmark), update
        )
        if a.model_id == b.model_id:
            raise SpaceRefusal("Enter two different models to compare.")
        # the variants a Score run ticks by default (the headline's): one that run scored
        # is reused, not scored again on every variant the dataset holds
        held = default_variants(dataset, benchmark)
        runs, said = [], []  # each side's run, and whether it was reused or entered
        for side, model in (("A", a), ("B", b)):
            status.stage(f"scoring {side}: {model.model_id} ({task} on {', '.join(held)})")
            progress(0.05, desc=f"scoring {model.model_id}")
            yield update()
            got = yield from running.finished_run(
                task, model.model_id, entry, benchmark, held, follow_job
            )
            if got is None:
                return  # nobody reads the updates: the job was stopped
            runs.append(got[:2])
            said.append(f"{side}: {got[2]}")
        status.stage("pairing the images and resampling")
        yield update()
        hidden = hidden_paths(entry)
        out = run_output_dir()
        shown = compare_folders(runs[0][0].folder, runs[1][0].folder, task, out, hidden)
    except Exception as err:
        message = visitor_message(err, hidden_paths(entry))
        yield (f"**Stopped:** {message}", skip, skip, skip, idle)
        raise running.stopped(message) from None
    folders = run_folders(task)
    data, data_note = data_argument(entry)
    commands = [
        task_command(task, m.model_id, benchmark, data, options, folder)
        for m, (_, options), folder in zip((a, b), runs, folders, strict=True)
    ]
    commands.append(f"bgbench compare {folders[0]} {folders[1]} --output bgbench_compare")
    notes = [n for n in (note_a, note_b, *said) if n]
    markdown = shown.markdown + "".join(f"\n\n> {n}" for n in notes)
    markdown += "\n\n" + reproduce_markdown(commands, [data_note])
    took = round(status.clock() - status.started)
    yield (
        f"**{title}**\n\nDone in {took} s: the comparison is below.",
        markdown,
        figures_html([shown.figure]),
        shown.files,
        idle,
    )


def _compare_tasks(benchmark: str) -> Any:
    choices = task_choices(benchmark, comparable=True)
    return gr.update(choices=choices, value=choices[0][1] if choices else None)


def offer_compare_tasks(trigger: Any, benchmark: gr.Dropdown, task: gr.Radio) -> None:
    """When ``trigger`` fires (``benchmark.change``, ``demo.load``), ``task`` offers the
    tasks of the benchmark ``benchmark`` shows that Compare pairs, the first picked."""
    trigger(_compare_tasks, benchmark, task, queue=False)


def build_compare_tab(start: BenchmarkSpec, every_name: list[str], first: str | None) -> Any:
    """The *Compare* tab, within the demo's ``gr.Blocks``, showing benchmark ``start`` and
    dataset ``first`` (``every_name``: every allow-listed dataset, the API's choices), its
    job and Stop button wired. Returns its controls by name."""
    with gr.Tab("Compare"):
        gr.Markdown(
            "Model A against model B on the same images (the `bgbench compare` "
            "command): each score's difference A − B with a paired 95% bootstrap "
            "interval over the images both scored, a verdict in words and a forest "
            "plot. The variants are those the Score tab ticks by default (the ones the "
            "benchmark's headline reads, e.g. IN-9's original, mixed_same and mixed_rand), so "
            "a model this Space has scored there is not scored again; the report names them."
        )
        with gr.Row():
            model_a = gr.Textbox(
                label="Model A", value="tf_efficientnet_lite0", elem_id="compare-model-a"
            )
            model_b = gr.Textbox(
                label="Model B", value="tf_efficientnet_lite1", elem_id="compare-model-b"
            )
        with gr.Row():
            benchmark = gr.Dropdown(offered_benchmarks(), value=start.name, label="Benchmark")
            data = gr.Dropdown(every_name, value=first, label="Dataset")
            task = gr.Radio(every_task(comparable=True), value=start.tasks[0], label="Task")
        with gr.Row():
            run = gr.Button(COMPARE_IDLE, variant="primary", scale=4, elem_id="compare-button")
            stop = gr.Button("Stop", variant="stop", scale=1, elem_id="compare-stop")
        status = gr.Markdown("Enter two models, then press **Compare**.", elem_id="compare-status")
        report = gr.Markdown(elem_id="compare-report")
        plot = gr.HTML(elem_id="compare-plot")
        files = gr.File(
            label="Download: compare.json, compare.md, compare.png", file_count="multiple"
        )
        offer_datasets(benchmark.change, benchmark, data)
        offer_compare_tasks(benchmark.change, benchmark, task)
        comparing = queueing.queued_job(
            queueing.checked_compare_click(run, model_a, model_b, status),
            compare_models,
            [model_a, model_b, data, benchmark, task],
            [status, report, plot, files, run],
            report,
            one_compare_per_client,
        )
        queueing.stop_button(stop, comparing, status, run, COMPARE_IDLE)
    return SimpleNamespace(benchmark=benchmark, data=data, task=task)
