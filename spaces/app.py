"""bgbench Space: score a Hub image classifier on the background-reliance benchmarks.

A thin shell over the library. Tabs: *Score a model* (a task of a benchmark on an allow-listed
dataset: report, plots, results file, the predictions on a few images per variant),
*Explore* (one image in every variant with the model's prediction and confidence),
*Leaderboard*. Benchmarks and tasks come from the registries, the numbers from the tasks, the
report from the one renderer, the checks on what a visitor enters from
:mod:`hf_bgbench.space.safety`, the galleries from :mod:`hf_bgbench.space.explore`, the live
progress from :mod:`hf_bgbench.space.progress`, the rows from :mod:`hf_bgbench.space.leaderboard`.

Operator settings (environment variables) are listed in this folder's README.md:
``BGBENCH_SPACE_DATASETS`` (the allow-list), the leaderboard's folder and Hub repo, the job
and Explore time limits, concurrency, queue, model-size limits and the subset caps.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

import gradio as gr

from hf_bgbench.benchmarks import get_benchmark, list_benchmarks
from hf_bgbench.render import render_markdown
from hf_bgbench.space.explore import (
    explore_image,
    explore_summary,
    image_choices,
    prediction_gallery,
    read_predictions,
    samples_html,
    split_report,
)
from hf_bgbench.space.leaderboard import (
    LEADERBOARD_REPO_ENV,
    NotEligible,
    append_result,
    read_rows,
    table,
)
from hf_bgbench.space.progress import ProgressReport, page_progress, track_tqdm
from hf_bgbench.space.safety import (
    AllowedDataset,
    allowed_data,
    check_model_id,
    check_model_size,
    datasets_for,
    resolve_dataset,
    run_with_time_limit,
    visitor_message,
)
from hf_bgbench.space.settings import (
    CONCURRENCY,
    EXPLORE_SECONDS,
    JOB_SECONDS,
    QUEUE_SIZE,
    allowed,
    leaderboard_dir,
    model_limits,
    run_output_dir,
    takes_variants,
    task_options,
)
from hf_bgbench.tasks import all_tasks, get_task, run_task
from hf_bgbench.tasks.options import default_benchmark

try:  # Hugging Face Spaces' GPU helper; absent locally, where the job runs as it is
    import spaces  # type: ignore[import-not-found]

    # a checkout's own spaces/ folder imports as a namespace package without GPU
    HAVE_SPACES = callable(getattr(spaces, "GPU", None))
except ImportError:
    spaces = None
    HAVE_SPACES = False

MODEL_LABEL = "Model (Hub repo owner/name, or the bundled tf_efficientnet_lite0)"
SAMPLES = 6  # images per variant shown after a run
# checked at start when the first benchmark has them: the comparisons most visitors want
# (every variant of another benchmark is checked when it is picked)
DEFAULT_VARIANTS = ["original", "only_bg_t", "mixed_same", "mixed_rand", "mixed_next"]
ALL = "all"


def run_job(task: str, model_id: str, options: dict[str, Any]) -> dict[str, Any]:
    """The GPU-bound part: load the model and run the task (``spaces.GPU`` on a Space)."""
    return run_task(task, model_id, **options)


def run_explore(model_id: str, options: dict[str, Any]) -> list[Any]:
    """The GPU-bound part of the Explore tab: one image through the model in every variant."""
    return explore_image(model_id, **options)


if HAVE_SPACES:
    run_job = spaces.GPU(duration=JOB_SECONDS)(run_job)
    run_explore = spaces.GPU(duration=EXPLORE_SECONDS)(run_explore)


def execute(
    task: str, model_id: str, options: dict[str, Any], on_progress: ProgressReport | None = None
) -> dict[str, Any]:
    """Run the job within the time limit: on ZeroGPU ``spaces.GPU(duration=...)`` enforces
    it; elsewhere the job runs in a separate process that is stopped at the limit. The
    task's progress bars reach ``on_progress(desc, n, total)``."""
    if HAVE_SPACES:
        with track_tqdm(on_progress or (lambda *_: None)):
            return run_job(task, model_id, options)
    kwargs = dict(options)
    benchmark = kwargs.pop("benchmark")
    return run_with_time_limit(
        run_task,
        (task, model_id),
        {"benchmark": benchmark, **kwargs},
        seconds=JOB_SECONDS,
        on_progress=on_progress,
    )


def execute_explore(model_id: str, options: dict[str, Any]) -> list[Any]:
    """:func:`explore_image` within the Explore tab's time limit (as :func:`execute`)."""
    if HAVE_SPACES:
        return run_explore(model_id, options)
    return run_with_time_limit(explore_image, (model_id,), options, seconds=EXPLORE_SECONDS)


def _checked(model_text: str, dataset: str, benchmark: str) -> tuple[Any, AllowedDataset, str]:
    """The visitor's model and dataset, refused unless safe: (model, dataset entry, note on
    the size check)."""
    model = check_model_id(model_text)
    get_benchmark(benchmark)
    entry = resolve_dataset(dataset, benchmark, allowed())
    note = check_model_size(model.repo_id, *model_limits())
    return model, entry, note


def _hidden(entry: AllowedDataset | None) -> dict[str, str]:
    """Server paths of ``entry`` -> its allow-list name, for messages."""
    if entry is None:
        return {}
    return {entry.target: entry.name, str(Path(entry.target).expanduser()): entry.name}


def score(
    model_text: str,
    dataset: str,
    variants: list[str],
    restrict: bool,
    benchmark: str | None = None,
    task: str = "evaluate",
    progress: Any = gr.Progress(),  # noqa: B008 (gradio idiom)
) -> tuple[str, list[str], str, str, str]:
    """Check the inputs, run ``task`` of ``benchmark`` on the allow-listed ``dataset``,
    add a full run to the leaderboard; return the Markdown report, the figures, the results
    JSON, (evaluate) an HTML grid of a few images per variant with the model's predictions,
    the report's LaTeX row and model-index block.
    Every failure reaches the visitor as a plain ``gr.Error`` message."""
    entry = None
    benchmark = benchmark or default_benchmark()
    try:
        spec = get_benchmark(benchmark)
        spec.check_task(task)
        if takes_variants(task):
            if not variants:
                raise ValueError("Pick at least one variant.")
            spec.check_variants(list(variants))
        progress(0, desc="checking the model and dataset")
        model, entry, note = _checked(model_text, dataset, benchmark)
        data = allowed_data(entry, spec)
        out = run_output_dir()
        options = task_options(task, variants, restrict)
        options.update(benchmark=benchmark, data=data, output_dir=str(out))
        progress(0.05, desc=f"loading {model.model_id}")
        results = execute(task, model.model_id, options, page_progress(progress))
        gallery = ""
        if (out / "predictions").is_dir():  # a task that keeps per-image predictions
            progress(None, desc="drawing the predictions on a few images")
            tables = read_predictions(out / "predictions")
            shown = prediction_gallery(data, benchmark, tables, per_variant=SAMPLES)
            gallery = samples_html(shown)
            if gallery:
                gallery = f"<h3>The model's predictions on {SAMPLES} of the images</h3>{gallery}"
    except Exception as err:
        raise gr.Error(
            visitor_message(err, _hidden(entry)), duration=None, print_exception=False
        ) from None
    stem = get_task(task).stem
    notes = [n for n in (note, _record(results, entry.name)) if n]
    report, extras = split_report(render_markdown(results).replace(entry.target, entry.name))
    report = report.rstrip() + "".join(f"\n\n> {n}" for n in notes)
    figures = [str(out / f["file"]) for f in results["report"]["figures"]]
    figures = [f for f in figures if Path(f).is_file()]
    return report, figures, str(out / f"{stem}.json"), gallery, extras


def images_of(dataset: str, benchmark: str) -> Any:
    """The Explore tab's image list for an allow-listed dataset (empty when it cannot be
    read; the reason is shown when the visitor asks for an image)."""
    try:
        entry = resolve_dataset(dataset, benchmark, allowed())
        choices = _choices(entry, benchmark)
    except Exception:
        choices = []
    return gr.update(choices=choices, value=choices[0][1] if choices else None)


@functools.lru_cache(maxsize=8)
def _choices(entry: AllowedDataset, benchmark: str) -> list[tuple[str, str]]:
    return image_choices(allowed_data(entry, get_benchmark(benchmark)), benchmark)


def explore(
    model_text: str,
    dataset: str,
    benchmark: str,
    image_id: str,
    restrict: bool = False,
    progress: Any = gr.Progress(),  # noqa: B008 (gradio idiom)
) -> tuple[list[tuple[Any, str]], str]:
    """One image of an allow-listed dataset in each of its variants, with the model's
    prediction and confidence: (gallery items, a one-paragraph summary)."""
    entry = None
    try:
        if not image_id:
            raise ValueError("Pick an image from the list.")
        spec = get_benchmark(benchmark)
        progress(0, desc="checking the model and dataset")
        model, entry, _ = _checked(model_text, dataset, benchmark)
        options = {
            "benchmark": benchmark,
            "data": allowed_data(entry, spec),
            "image_id": str(image_id),
            "restrict_to_benchmark": bool(restrict),
        }
        progress(0.2, desc=f"running {model.model_id} on every variant")
        shown = execute_explore(model.model_id, options)
    except Exception as err:
        raise gr.Error(
            visitor_message(err, _hidden(entry)), duration=None, print_exception=False
        ) from None
    return [(v.image, v.caption) for v in shown], explore_summary(shown, model.model_id, image_id)


def _record(results: dict[str, Any], dataset: str) -> str:
    try:
        row = append_result(
            leaderboard_dir(), results, dataset, os.environ.get(LEADERBOARD_REPO_ENV)
        )
    except NotEligible as err:
        return str(err)
    except Exception as err:  # the score stands even if the leaderboard cannot be written
        return f"The leaderboard could not be updated: {visitor_message(err)}"
    return f"Added to the leaderboard ({row['model']}, {row['task']} on {dataset})."


def leaderboard(benchmark: str, task: str, model: str, published: bool) -> gr.Dataframe:
    headers, rows = table(
        read_rows(leaderboard_dir()),
        benchmark=None if benchmark == ALL else benchmark,
        task=None if task == ALL else task,
        model=model or "",
        published=published,
    )
    return gr.Dataframe(value=rows, headers=headers)


def _task_choices(benchmark: str) -> list[tuple[str, str]]:
    return [(get_task(t).description, t) for t in get_benchmark(benchmark).tasks]


def _datasets_update(benchmark: str) -> Any:
    offered = datasets_for(allowed(), benchmark)
    return gr.update(choices=offered, value=offered[0] if offered else None)


def build_demo() -> gr.Blocks:
    benchmarks = list_benchmarks()
    start = get_benchmark(default_benchmark())
    names = datasets_for(allowed(), start.name)
    first = names[0] if names else None
    checked = [v for v in DEFAULT_VARIANTS if v in start.variants] or list(start.variants)
    with gr.Blocks(title="bgbench: background reliance of image classifiers") as demo:
        gr.Markdown(
            "# How much does your classifier lean on the background?\n"
            "Scores a timm or transformers ImageNet classifier from the Hub on the "
            "background-reliance benchmarks. **BG-GAP** (ImageNet-9) = accuracy on "
            "*mixed_same* − *mixed_rand*: the points a model loses when the object's "
            "background stops matching its class."
        )
        with gr.Tab("Score a model"):
            with gr.Row():
                model_id = gr.Textbox(
                    label=MODEL_LABEL, value="tf_efficientnet_lite0", elem_id="score-model"
                )
                dataset = gr.Dropdown(names, value=first, label="Dataset")
            with gr.Row():
                benchmark = gr.Dropdown(benchmarks, value=start.name, label="Benchmark")
                task = gr.Radio(_task_choices(start.name), value=start.tasks[0], label="Task")
            variants = gr.CheckboxGroup(list(start.variants), value=checked, label="Variants")
            restrict = gr.Checkbox(
                label="Argmax only over the benchmark's ImageNet classes "
                "(not the published protocol)"
            )

            def on_benchmark(name: str) -> tuple[Any, ...]:
                spec = get_benchmark(name)
                return (
                    gr.update(choices=_task_choices(name), value=spec.tasks[0]),
                    gr.update(choices=list(spec.variants), value=list(spec.variants)),
                    _datasets_update(name),
                )

            benchmark.change(on_benchmark, benchmark, [task, variants, dataset])
            task.change(lambda t: gr.update(visible=takes_variants(t)), task, variants)
            run = gr.Button("Score", variant="primary")
            report = gr.Markdown(elem_id="report")
            samples = gr.HTML(elem_id="samples")
            # galleries as tall as their images: gradio's "auto" caps them at 55% of the window
            plots = gr.Gallery(
                label="Plots",
                type="filepath",
                columns=1,
                object_fit="contain",
                height="fit-content",
            )
            with gr.Accordion("LaTeX row and model card (model-index)", open=False):
                extras = gr.Markdown(elem_id="report-extras")
            raw = gr.File(label="results (JSON)")
        with gr.Tab("Explore"):
            gr.Markdown(
                "Pick an image and see it in every variant of the dataset (ImageNet-9: the "
                "object on its own background, on none, on another class's; ImageNet-E: each "
                "edit) with the model's prediction and confidence on each."
            )
            with gr.Row():
                ex_model = gr.Textbox(
                    label=MODEL_LABEL, value="tf_efficientnet_lite0", elem_id="explore-model"
                )
                ex_bench = gr.Dropdown(benchmarks, value=start.name, label="Benchmark")
                ex_data = gr.Dropdown(names, value=first, label="Dataset")
            with gr.Row(equal_height=True):
                ex_image = gr.Dropdown([], label="Image (class · id)", filterable=True, scale=4)
                ex_run = gr.Button("Show every variant", variant="primary", scale=1)
            ex_summary = gr.Markdown(elem_id="explore-summary")
            ex_gallery = gr.Gallery(
                label="The image in every variant: ✓/✗ prediction (model's class) confidence",
                columns=4,
                object_fit="contain",
                height="fit-content",
                elem_id="explore-gallery",
            )
            ex_bench.change(_datasets_update, ex_bench, ex_data)
            ex_data.change(images_of, [ex_data, ex_bench], ex_image)
            ex_run.click(
                explore,
                [ex_model, ex_data, ex_bench, ex_image],
                [ex_gallery, ex_summary],
                show_progress_on=ex_summary,
            )
        with gr.Tab("Leaderboard"):
            gr.Markdown(
                "One row per model, benchmark, task, dataset and package version, added "
                "when a run scored the full dataset (subset runs are not ranked). Rows "
                "marked *published* are the paper's numbers. Click a column to sort."
            )
            with gr.Row():
                lb_bench = gr.Dropdown([ALL, *benchmarks], value=ALL, label="Benchmark")
                lb_task = gr.Dropdown(
                    [ALL, *(t.name for t in all_tasks())], value=ALL, label="Task"
                )
                lb_model = gr.Textbox(label="Model contains")
                lb_pub = gr.Checkbox(value=True, label="Show published numbers")
            board = gr.Dataframe(
                interactive=False, show_search="filter", wrap=True, elem_id="leaderboard"
            )
            refresh = gr.Button("Refresh")
            filters = [lb_bench, lb_task, lb_model, lb_pub]
            for trigger in (refresh.click, lb_bench.change, lb_task.change, lb_pub.change):
                trigger(leaderboard, filters, board)
            lb_model.submit(leaderboard, filters, board)
        demo.load(leaderboard, filters, board)
        demo.load(images_of, [ex_data, ex_bench], ex_image)
        run.click(
            score,
            [model_id, dataset, variants, restrict, benchmark, task],
            [report, plots, raw, samples, extras],
            show_progress_on=report,
        ).then(leaderboard, filters, board)
    demo.queue(default_concurrency_limit=CONCURRENCY, max_size=QUEUE_SIZE)
    return demo


if __name__ != "__mp_main__":  # not in a job's process (it imports this file again)
    demo = build_demo()

if __name__ == "__main__":
    demo.launch(show_error=True)
