"""The Space's *Explore* tab: one image in every variant with the model's prediction and
confidence (:mod:`hf_bgbench.space.views.explore`), and the images behind a paired gap
(:mod:`hf_bgbench.space.views.flips`), from a run this process finished or a new one."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import gradio as gr

from hf_bgbench.benchmarks import get_benchmark, list_benchmarks
from hf_bgbench.space.checks.allowlist import (
    AllowedDataset,
    allowed_data,
    hidden_paths,
    resolve_dataset,
)
from hf_bgbench.space.checks.inputs import checked_inputs, variants_of
from hf_bgbench.space.checks.messages import SpaceRefusal, visitor_message
from hf_bgbench.space.jobs import queueing, running
from hf_bgbench.space.jobs.clients import Attention
from hf_bgbench.space.jobs.status import JobStatus
from hf_bgbench.space.page.controls import MODEL_LABEL, offer_datasets
from hf_bgbench.space.settings import (
    EXPLORE_CONCURRENCY,
    JOB_SECONDS,
    allowed,
    offered_benchmarks,
)
from hf_bgbench.space.views.explore import (
    EVERY_CLASS,
    explore_summary,
    image_choices,
    image_classes,
    images_of_class,
)
from hf_bgbench.space.views.flips import flip_pairs, flips_page, pair_named, predictions_task
from hf_bgbench.space.views.reproduce import reproduce_section
from hf_bgbench.space.views.samples import read_predictions
from hf_bgbench.spec import BenchmarkSpec

FLIPS_IDLE = "Show the images behind the gap"


def one_explore_per_client(
    model_text: Any,
    dataset: Any,
    benchmark: Any,
    image_id: Any,
    request: gr.Request = None,  # type: ignore[assignment]
) -> list[Any]:
    """The Explore button's validator."""
    return queueing.refusal(queueing.EXPLORE_GROUP, "an Explore request", request, 4, model_text)


# gradio 6 renders a dropdown's first ``num_choices_shown`` choices (default 100) and loads
# the rest only when the open list is scrolled to its very end, or filters them only on a
# keystroke (not on a paste nor on a phone keyboard's suggestion); None would render them
# all, but gradio leaves a None out of the page, whose default is then 100 again. So the
# image list says how many it holds: all of them are in the list at once.
_BATCHED_DROPDOWN = "num_choices_shown" in inspect.signature(gr.Dropdown.__init__).parameters


def images_of(dataset: str, benchmark: str, image_class: str | None = EVERY_CLASS) -> Any:
    """The Explore tab's image list for an allow-listed dataset: every image (of
    ``image_class``, the class filter's pick), each in the list at once, the first picked
    (empty when the dataset cannot be read; the reason is shown when the visitor asks for an
    image). A class the dataset lacks is refused by name."""
    try:
        entry = resolve_dataset(dataset, benchmark, allowed())
        every = _choices(entry, benchmark)
    except Exception:
        every = []
    try:
        choices = images_of_class(every, image_class) if every else []
    except ValueError as err:
        raise gr.Error(str(err)) from None
    listed = {"num_choices_shown": max(len(choices), 1)} if _BATCHED_DROPDOWN else {}
    return gr.update(
        choices=choices,
        value=choices[0][1] if choices else None,
        info=f"{len(choices)} images listed; type part of an id to narrow the list",
        **listed,
    )


def classes_of(dataset: str, benchmark: str) -> Any:
    """The class filter's choices for an allow-listed dataset: every class it has images of,
    after :data:`EVERY_CLASS` (picked)."""
    try:
        classes = image_classes(_choices(resolve_dataset(dataset, benchmark, allowed()), benchmark))
    except Exception:
        classes = []
    return gr.update(choices=[EVERY_CLASS, *classes], value=EVERY_CLASS)


def offer_images(trigger: Any, tab: Any) -> None:
    """When ``trigger`` fires (``data.change``, ``demo.load``), the class filter offers the
    classes of the dataset shown and the image list every one of its images."""
    trigger(classes_of, [tab.data, tab.benchmark], tab.image_class, queue=False)
    trigger(images_of, [tab.data, tab.benchmark], tab.image, queue=False)


@functools.lru_cache(maxsize=8)
def _choices(entry: AllowedDataset, benchmark: str) -> list[tuple[str, str]]:
    return image_choices(allowed_data(entry, get_benchmark(benchmark)), benchmark)


def explore(
    model_text: str,
    dataset: str,
    benchmark: str,
    image_id: str,
    restrict: bool = False,
    request: gr.Request = None,  # type: ignore[assignment]
    progress: Any = gr.Progress(),  # noqa: B008 (gradio idiom)
) -> Iterator[tuple[Any, str]]:
    """One image of an allow-listed dataset in each of its variants, with the model's
    prediction and confidence: yields (gallery items, a one-paragraph summary), the status
    first; closing it kills the job (as :func:`hf_bgbench.space.page.tab_score.score`)."""
    entry = None
    try:
        if not image_id:
            raise SpaceRefusal("Pick an image from the list.")
        spec = get_benchmark(benchmark)
        progress(0, desc="checking the model and dataset")
        yield gr.skip(), "Now: checking the model and the dataset …"
        model, entry, _ = checked_inputs(model_text, dataset, benchmark)
        options = {
            "benchmark": benchmark,
            "data": allowed_data(entry, spec),
            "image_id": str(image_id),
            "restrict_to_benchmark": bool(restrict),
        }
        progress(0.2, desc=f"running {model.model_id} on every variant")
        attention = Attention(request)
        with running.explore_job_for(model.model_id, options) as job:
            for _ in job.updates(running.TICK):
                if attention.gone():
                    return
                yield (
                    gr.skip(),
                    f"Now: running {model.model_id} on every variant ({job.elapsed:.0f} s)",
                )
            shown = job.result()
    except Exception as err:
        message = visitor_message(err, hidden_paths(entry))
        yield gr.skip(), f"**Stopped:** {message}"
        raise running.stopped(message) from None
    yield [(v.image, v.caption) for v in shown], explore_summary(shown, model.model_id, image_id)


def one_flips_per_client(
    model_text: Any,
    dataset: Any,
    benchmark: Any,
    pair: Any,
    request: gr.Request = None,  # type: ignore[assignment]
) -> list[Any]:
    """The flip explorer's validator (it scores: one scoring job per client)."""
    return queueing.refusal(queueing.JOB_GROUP, "a scoring job", request, 4, model_text)


def flips(
    model_text: str,
    dataset: str,
    benchmark: str,
    pair_name: str | None = None,
    request: gr.Request = None,  # type: ignore[assignment]
    progress: Any = gr.Progress(),  # noqa: B008 (gradio idiom)
) -> Iterator[tuple[Any, ...]]:
    """The images behind a paired gap (BG-GAP: right on mixed_same, wrong on mixed_rand,
    and the reverse), side by side with the original photo and the background's source,
    from the model's per-image predictions (a finished run of this process, or a new one
    of the three variants). Yields (the summary, the images' HTML)."""
    entry = None
    title = f"flips · {(model_text or '').strip()[:80] or '?'} · {dataset}"
    status = JobStatus(title, JOB_SECONDS)
    skip = gr.skip()

    def update() -> tuple[Any, ...]:
        return (status.markdown(), skip)

    status.stage("checking the model and the dataset")
    yield (status.markdown(), "")
    try:
        spec = get_benchmark(benchmark)
        pair = pair_named(spec, pair_name)
        task = predictions_task(spec)
        model, entry, note = checked_inputs(model_text, dataset, benchmark)
        wanted = [spec.reference_variant, pair.first, pair.second]
        held = variants_of(dataset, benchmark)
        status.stage(f"scoring {model.model_id} on {', '.join(v for v in wanted if v in held)}")
        yield update()
        got = yield from running.finished_run(
            task,
            model.model_id,
            entry,
            benchmark,
            [v for v in wanted if v in held],
            lambda job: running.follow(job, status, progress, request, update),
        )
        if got is None:
            return
        run, options, reused = got
        status.stage("finding the images that flip")
        yield update()
        data = allowed_data(entry, spec)
        tables = read_predictions(run.folder / "predictions")
        summary, shown = flips_page(data, benchmark, tables, pair, model.model_id)
    except Exception as err:
        message = visitor_message(err, hidden_paths(entry))
        yield f"**Stopped:** {message}", skip
        raise running.stopped(message) from None
    summary += "".join(f"\n\n> {n}" for n in [note, reused] if n)
    summary += "\n\n" + reproduce_section(task, model.model_id, entry, options)
    yield summary, f'<div class="bgbench-scroll">{shown}</div>'


def _pair_choices(benchmark: str) -> Any:
    pairs = flip_pairs(get_benchmark(benchmark))
    return gr.update(
        choices=[(f"{p.label}: {p.first} vs {p.second}", p.name) for p in pairs],
        value=pairs[0].name if pairs else None,
    )


def _every_pair() -> list[tuple[str, str]]:
    """Every benchmark's paired gaps: the gap control's choices at build time (the API's)."""
    pairs = (p for b in list_benchmarks() for p in flip_pairs(get_benchmark(b)))
    return list(dict.fromkeys((f"{p.label}: {p.first} vs {p.second}", p.name) for p in pairs))


def offer_pairs(trigger: Any, benchmark: gr.Dropdown, pair: gr.Dropdown) -> None:
    """When ``trigger`` fires (``benchmark.change``, ``demo.load``), ``pair`` offers the
    paired gaps of the benchmark ``benchmark`` shows, the first picked."""
    trigger(_pair_choices, benchmark, pair, queue=False)


def build_explore_tab(start: BenchmarkSpec, every_name: list[str], first: str | None) -> Any:
    """The *Explore* tab, within the demo's ``gr.Blocks``, showing benchmark ``start`` and
    dataset ``first`` (``every_name``: every allow-listed dataset, the API's choices), the
    flip explorer's job wired. Returns its controls by name; :func:`explore_job` wires the
    Explore button's job."""
    with gr.Tab("Explore"):
        # the benchmark rule keeps benchmark names out of the package: one example only
        gr.Markdown(
            "Pick an image and see it in every variant of the dataset (ImageNet-9: the "
            "object on its own background, on none, on another class's; a benchmark of "
            "edits: each edit) with the model's prediction and confidence on each."
        )
        with gr.Row():
            model = gr.Textbox(
                label=MODEL_LABEL, value="tf_efficientnet_lite0", elem_id="explore-model"
            )
            benchmark = gr.Dropdown(offered_benchmarks(), value=start.name, label="Benchmark")
            data = gr.Dropdown(every_name, value=first, label="Dataset")
        tab = SimpleNamespace(model=model, benchmark=benchmark, data=data)
        _image_picker(tab)
        tab.summary = gr.Markdown(elem_id="explore-summary")
        tab.gallery = gr.Gallery(
            label="The image in every variant: ✓/✗ prediction (model's class) confidence",
            columns=4,
            object_fit="contain",
            height="auto",
            elem_id="explore-gallery",
        )
        _flip_explorer(tab, start)
        offer_datasets(benchmark.change, benchmark, data)
        offer_images(data.change, tab)
    return tab


def _image_picker(tab: SimpleNamespace) -> None:
    """The class filter, the image list and the Explore button (``tab.image_class``,
    ``tab.image``, ``tab.run``): a class shortens the list (a phone's screen), which holds
    every image of it."""
    with gr.Row(equal_height=True):
        tab.image_class = gr.Dropdown(
            [EVERY_CLASS], value=EVERY_CLASS, label="Class", scale=1, elem_id="explore-class"
        )
        # any id is accepted (and checked by the job): the API's callers name theirs
        tab.image = gr.Dropdown(
            [],
            label="Image (class · id)",
            allow_custom_value=True,
            scale=3,
            min_width=280,  # a line of its own on a phone, the whole id readable
            elem_id="explore-image",
        )
        tab.run = gr.Button("Show every variant", variant="primary", scale=1)
    tab.image_class.change(
        images_of, [tab.data, tab.benchmark, tab.image_class], tab.image, queue=False
    )


def _flip_explorer(tab: SimpleNamespace, start: BenchmarkSpec) -> None:
    """The images behind the gap: the gap control (``tab.pair``, offering ``start``'s gaps
    first), its button and its job."""
    gr.Markdown(
        "### The images behind the gap\n"
        "Which images does the model get right with the object on a background of "
        "its own class (*mixed_same*) and wrong on another class's (*mixed_rand*), "
        "and the reverse? BG-GAP is exactly (right→wrong − wrong→right) / images. "
        "Each is shown as the original photo and in both variants, with the "
        "background's source photo when the dataset records it (data made by `bgbench "
        "build` does; an authors' release names no background source, and its conversion "
        "cannot either)."
    )
    with gr.Row(equal_height=True):
        shown = flip_pairs(start)  # the start benchmark's first, as its menus show
        tab.pair = gr.Dropdown(
            _every_pair(),
            value=shown[0].name if shown else None,
            label="Gap",
            scale=4,
            elem_id="flip-pair",
        )
        pair_run = gr.Button(FLIPS_IDLE, variant="primary", scale=1, elem_id="flip-button")
    pair_summary = gr.Markdown(elem_id="flips-summary")
    pair_images = gr.HTML(elem_id="flips")
    offer_pairs(tab.benchmark.change, tab.benchmark, tab.pair)
    queueing.queued_job(
        queueing.checked_click(pair_run, tab.model, pair_summary, queueing.JOB_GROUP),
        flips,
        [tab.model, tab.data, tab.benchmark, tab.pair],
        [pair_summary, pair_images],
        pair_summary,
        one_flips_per_client,
    )


def explore_job(tab: Any) -> None:
    """The Explore button's job (:func:`explore`), behind its checked click, in the Explore
    requests' own queue."""
    # the last click wins: a second image asked for while one is scored is shown after it
    queueing.checked_click(tab.run, tab.model, tab.summary, last_wins=True).success(
        explore,
        [tab.model, tab.data, tab.benchmark, tab.image],
        [tab.gallery, tab.summary],
        show_progress_on=tab.summary,
        concurrency_id=queueing.EXPLORE_GROUP,
        concurrency_limit=EXPLORE_CONCURRENCY,
        validator=one_explore_per_client,
    )
