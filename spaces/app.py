"""bgbench Space: score a Hub image classifier on the background-reliance benchmarks.

A thin shell over the library. Tabs: *Score a model* (a task of a benchmark on an allow-listed
dataset: live status, report, plots, files to download, the predictions on a few images per
variant), *Explore* (one image in every variant with the model's prediction and confidence; the
images behind a paired gap: :mod:`hf_bgbench.space.flips`), *Compare* (two models on
the same images, ``bgbench compare``: :mod:`hf_bgbench.space.compare`; runs this process
finished are reused, :mod:`hf_bgbench.space.runs`), *Report card* (every benchmark's headline
numbers for one model, beside the published models: :mod:`hf_bgbench.space.report_card`),
*Leaderboard*. Every result shows the command that reproduces it
(:mod:`hf_bgbench.space.reproduce`). Benchmarks and tasks come from the
registries, the numbers from the tasks, the report from the one renderer, the checks on what
a visitor enters from :mod:`hf_bgbench.space.safety`, the galleries from
:mod:`hf_bgbench.space.explore`, the status from :mod:`hf_bgbench.space.progress`, the rows
from :mod:`hf_bgbench.space.leaderboard`, what
a finished run shows from :mod:`hf_bgbench.space.display`.

Under real visitors:

* a job (Score, Explore) runs in its own process and is a generator: it reports its stage
  every second, and Gradio closes it -- which kills the process -- when its visitor leaves
  (the page's event stream drops) or presses Stop (``cancels``); a job whose client never
  reads its updates is stopped after ``BGBENCH_SPACE_UNREAD_SECONDS``;
* Score jobs and Explore requests have a concurrency group each (one of each at a time by
  default), and each client -- known by what it cannot forge (:func:`client_key`) -- may
  hold one of each, queued or running (a ``validator`` refuses more before anything is
  queued); page loads and UI events bypass the queue (``queue=False``), so a full queue
  never blanks the page;
* a model id the checks refuse is refused at the click, outside the queue
  (:func:`checked_click`), and by the job's validator for API callers;
* a job runs in a session of its own: stopping it ends every process it started;
* uploads are refused (``max_file_size``): the Space takes none.

Operator settings (environment variables) are listed in this folder's README.md.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gradio as gr

from hf_bgbench.benchmarks import get_benchmark, list_benchmarks
from hf_bgbench.render import render_markdown
from hf_bgbench.report.paired import comparable_tasks
from hf_bgbench.space.compare import compare_folders, run_folders
from hf_bgbench.space.display import (
    figures_html,
    narrow_tables,
    public_document,
    public_text,
    run_figures,
    run_files,
    write_public_document,
)
from hf_bgbench.space.explore import (
    explore_image,
    explore_summary,
    image_choices,
    prediction_gallery,
    read_predictions,
    samples_html,
    split_report,
)
from hf_bgbench.space.flips import flip_pairs, flips_page, pair_named, predictions_task
from hf_bgbench.space.leaderboard import (
    LEADERBOARD_REPO_ENV,
    NotEligible,
    append_result,
    read_rows,
    results_repo_rows,
    table,
)
from hf_bgbench.space.progress import JobStatus, JobTimes, page_progress, queue_message
from hf_bgbench.space.report_card import report_benchmarks, space_report
from hf_bgbench.space.reproduce import cli_files, data_argument, reproduce_markdown, task_command
from hf_bgbench.space.runs import FinishedRun, FinishedRuns
from hf_bgbench.space.safety import (
    AllowedDataset,
    Job,
    SpaceRefusal,
    ThreadJob,
    allowed_data,
    check_model_cached,
    check_model_id,
    check_model_size,
    client_address,
    datasets_for,
    resolve_dataset,
    visitor_message,
)
from hf_bgbench.space.settings import (
    CONCURRENCY,
    EXPLORE_CONCURRENCY,
    EXPLORE_SECONDS,
    JOB_SECONDS,
    JOBS_PER_CLIENT,
    MAX_UPLOAD_BYTES,
    QUEUE_SIZE,
    TRUSTED_PROXIES,
    UNREAD_SECONDS,
    allowed,
    job_seconds,
    leaderboard_dir,
    model_limits,
    run_output_dir,
    takes_variants,
    task_label,
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

# uvicorn would put X-Forwarded-For's address in place of the connection's for connections
# from 127.0.0.1 (its default trust): a local client could then pick its own address. The
# Space reads that header itself, only as far as BGBENCH_SPACE_TRUSTED_PROXIES says (client_key)
os.environ["FORWARDED_ALLOW_IPS"] = ""

MODEL_LABEL = "Model (Hub repo owner/name, or the bundled tf_efficientnet_lite0)"
SAMPLES = 6  # images per variant shown after a run
TICK = 1.0  # seconds between two status updates of a running job
JOB_GROUP, EXPLORE_GROUP = "score-job", "explore-job"
UNREAD_MESSAGES = 5  # updates a client leaves unread before it counts as not listening
# a step's pace is trusted for the early stop once it has run this long (its first images
# are slow: the workers start, the model warms up)
SETTLE_SECONDS = 30
SCORE_IDLE, SCORE_BUSY = "Score", "Scoring…"
JOB_TIMES = JobTimes()  # this Space's recent scoring jobs: a queued visitor's estimate
FINISHED = FinishedRuns()  # runs this process finished: Compare and the flips reuse them
COMPARE_IDLE, COMPARE_BUSY = "Compare", "Comparing…"
FLIPS_IDLE = "Show the images behind the gap"
CSS = """
#job-status { min-height: 3.2em; padding: 0.4em 0.8em; border-radius: 6px;
  background: var(--block-background-fill); border: 1px solid var(--border-color-primary); }
#report { min-height: 4.5em; }
#report table, #leaderboard table, #leaderboard-other table { font-size: 0.9em; }
#leaderboard table, #leaderboard td, #leaderboard th, #leaderboard span,
#leaderboard-other table, #leaderboard-other td, #leaderboard-other th,
#leaderboard-other span { font-family: var(--font); }
#report table, #compare-report table { display: block; overflow-x: auto; width: fit-content;
  max-width: 100%; }
#report th { overflow-wrap: anywhere; }
.bgbench-scroll { overflow-x: auto; max-width: 100%; }
/* a phone: a table keeps its columns readable and scrolls sideways (a header squeezed to
   one character per line reads as nothing); the boards keep a width their columns fit */
@media (max-width: 640px) {
  #report th, #report td, #compare-report th, #compare-report td {
    overflow-wrap: normal; white-space: nowrap; }
  #leaderboard .table-container, #leaderboard-other .table-container { overflow-x: auto; }
  #leaderboard .table-wrap, #leaderboard-other .table-wrap { min-width: 960px; }
}
"""


def run_job(task: str, model_id: str, options: dict[str, Any]) -> dict[str, Any]:
    """The GPU-bound part: load the model and run the task (``spaces.GPU`` on a Space)."""
    return run_task(task, model_id, **options)


def run_explore(model_id: str, options: dict[str, Any]) -> list[Any]:
    """The GPU-bound part of the Explore tab: one image through the model in every variant."""
    return explore_image(model_id, **options)


if HAVE_SPACES:
    run_job = spaces.GPU(duration=JOB_SECONDS)(run_job)
    run_explore = spaces.GPU(duration=EXPLORE_SECONDS)(run_explore)


def time_limit_hint(task: str) -> str:
    """What a visitor can change when ``task`` runs out of time."""
    if takes_variants(task):
        return "Try a smaller model or fewer variants."
    return "Try a smaller model."


def job_for(task: str, model_id: str, options: dict[str, Any]) -> Job:
    """The job that runs ``task``: on ZeroGPU in this process under ``spaces.GPU(duration=
    ...)`` (which enforces the limit); elsewhere in a separate process, killed at the task's
    time limit or when its visitor leaves. Its progress bars reach the status line."""
    seconds, hint = job_seconds(task), time_limit_hint(task)
    if HAVE_SPACES:
        return ThreadJob(run_job, (task, model_id, options), seconds=seconds, hint=hint)
    kwargs = dict(options)
    benchmark = kwargs.pop("benchmark")
    return Job(
        run_task, (task, model_id), {"benchmark": benchmark, **kwargs}, seconds=seconds, hint=hint
    )


def explore_job_for(model_id: str, options: dict[str, Any]) -> Job:
    """:func:`explore_image` as a job within the Explore time limit (as :func:`job_for`)."""
    if HAVE_SPACES:
        return ThreadJob(run_explore, (model_id, options), seconds=EXPLORE_SECONDS, track=False)
    return Job(explore_image, (model_id,), options, seconds=EXPLORE_SECONDS, track=False)


# --------------------------------------------------------------------------- visitors


def client_key(request: Any) -> str | None:
    """Who a request comes from, by what the client cannot forge
    (:func:`~hf_bgbench.space.safety.client_address`): behind ``TRUSTED_PROXIES`` proxies
    the ``X-Forwarded-For`` entry the outermost of them appended, else the connection's
    address. ``request``: a ``gr.Request`` or the queue's own request."""
    if request is None:
        return None
    headers = getattr(request, "headers", None) or {}
    if hasattr(headers, "getlist"):  # every X-Forwarded-For header, in order
        forwarded = headers.getlist("x-forwarded-for")
    else:  # a request Gradio stored as a plain dict
        forwarded = [headers.get("x-forwarded-for", "")] if hasattr(headers, "get") else []
    host = getattr(getattr(request, "client", None), "host", None)
    return client_address(forwarded, host, TRUSTED_PROXIES)


def _queue() -> Any:
    from gradio.context import LocalContext

    blocks = LocalContext.blocks.get(None) or globals().get("demo")
    return getattr(blocks, "_queue", None)


def jobs_in(group: str) -> tuple[list[Any], list[Any]]:
    """(running, waiting) events of concurrency group ``group`` in Gradio's queue, live
    ones only (none when it cannot be read)."""
    queue = _queue()
    if queue is None:
        return [], []
    try:
        waiting = list(queue.event_queue_per_concurrency_id[group].queue)
    except (AttributeError, KeyError):
        waiting = []
    running = [e for job in getattr(queue, "active_jobs", []) or [] if job for e in job]

    def live(events: list[Any]) -> list[Any]:
        return [
            e
            for e in events
            if getattr(e, "concurrency_id", None) == group and getattr(e, "alive", True)
        ]

    return live(running), live(waiting)


def jobs_of(key: str | None, group: str) -> int:
    """Jobs of concurrency group ``group`` from client ``key`` waiting or running (Gradio's
    queue; 0 when it cannot be read)."""
    if key is None:
        return 0
    running, waiting = jobs_in(group)
    return sum(client_key(getattr(e, "request", None)) == key for e in running + waiting)


def listening(request: gr.Request | None) -> bool:
    """Whether the visitor of ``request`` still reads its job's updates: Gradio keeps the
    updates a client has not read yet per session; a page that went away reads none."""
    queue = _queue()
    session = getattr(request, "session_hash", None)
    if queue is None or session is None:
        return True
    try:
        unread = queue.pending_messages_per_session[session].qsize()
    except (AttributeError, KeyError):
        return True
    return unread <= UNREAD_MESSAGES


class Attention:
    """Stops waiting for a client that leaves its updates unread for ``seconds``."""

    def __init__(self, request: gr.Request | None, seconds: float | None = None) -> None:
        import time

        self.request, self.clock = request, time.monotonic
        self.seconds = UNREAD_SECONDS if seconds is None else seconds
        self.since: float | None = None

    def gone(self) -> bool:
        if listening(self.request):
            self.since = None
            return False
        self.since = self.since if self.since is not None else self.clock()
        return self.clock() - self.since > self.seconds


def _refusal(
    group: str, what: str, request: gr.Request | None, inputs: int, model_text: Any = None
) -> list[Any]:
    """One ``gr.validate`` per input, checked before the job is queued (Gradio runs the
    validator outside the queue, so nobody waits behind other jobs to hear it): the first
    (the model) refuses an id the checks refuse (:func:`check_model_id`: a path, a link,
    shell characters), then a client that already holds ``JOBS_PER_CLIENT`` jobs of
    ``group``, queued or running."""
    fine = [gr.validate(True, "") for _ in range(inputs)]
    if model_text is not None:
        try:
            check_model_id(str(model_text))
        except SpaceRefusal as err:
            fine[0] = gr.validate(False, str(err))
            return fine
    if JOBS_PER_CLIENT > 0 and jobs_of(client_key(request), group) >= JOBS_PER_CLIENT:
        fine[0] = gr.validate(
            False,
            f"You already have {what} waiting or running; wait for it to finish, or stop "
            "it, before starting another.",
        )
    return fine


def one_score_per_client(
    model_text: Any,
    dataset: Any,
    variants: Any,
    restrict: Any,
    benchmark: Any,
    task: Any,
    request: gr.Request = None,  # type: ignore[assignment]
) -> list[Any]:
    """The Score button's validator (Gradio runs it before the job is queued)."""
    return _refusal(JOB_GROUP, "a scoring job", request, 6, model_text)


def one_explore_per_client(
    model_text: Any,
    dataset: Any,
    benchmark: Any,
    image_id: Any,
    request: gr.Request = None,  # type: ignore[assignment]
) -> list[Any]:
    """The Explore button's validator."""
    return _refusal(EXPLORE_GROUP, "an Explore request", request, 4, model_text)


def click_status(model_text: str, group: str | None, request: gr.Request | None) -> Any:
    """At the click, outside the queue, the status line says at once what happens to the
    job: why a model id is refused; that the client already holds a job of ``group``, or
    that the queue is full (it is not queued); else, behind other jobs, its place in line
    and an estimate from this Space's own job times (:func:`queue_message`). Nothing when
    the job starts at once (its own first update follows)."""
    try:
        check_model_id(model_text)
    except SpaceRefusal as err:
        return f"**Stopped:** {err}"
    if group is None:
        return gr.skip()
    if JOBS_PER_CLIENT > 0 and jobs_of(client_key(request), group) >= JOBS_PER_CLIENT:
        return (
            "**Not queued:** you already have a job waiting or running; wait for it to "
            "finish, or stop it, before starting another."
        )
    running, waiting = jobs_in(group)
    if len(waiting) >= QUEUE_SIZE:
        return (
            f"**Not queued:** the queue is full ({QUEUE_SIZE} jobs waiting). Try again in a "
            "few minutes."
        )
    if not waiting and len(running) < CONCURRENCY:
        return gr.skip()
    return queue_message(len(running), len(waiting), JOB_TIMES, JOB_SECONDS)


def model_gate(model_text: str) -> None:
    """At the click, outside the queue: a model id the checks refuse stops the click here,
    so its job never joins the queue (a full queue would otherwise answer "busy")."""
    try:
        check_model_id(model_text)
    except SpaceRefusal as err:
        raise gr.Error(str(err), print_exception=False) from None


def checked_click(
    button: gr.Button, model_text: gr.Textbox, shown: Any, group: str | None = None
) -> Any:
    """``button``'s click, checked before anything is queued: the status line ``shown``
    says what happens to the job (:func:`click_status`; ``group``: the job's concurrency
    group, None for no queue news) and :func:`model_gate` stops the click on a refused
    model id; chain the job with ``.success``. (API callers, who join the job's queue
    directly, meet the same checks in its validator.)"""

    def status_at_click(text: str, request: gr.Request = None) -> Any:  # type: ignore[assignment]
        return click_status(text, group, request)

    button.click(status_at_click, model_text, shown, queue=False)
    return button.click(model_gate, model_text, None, queue=False)


def checked_compare_click(
    button: gr.Button, model_a: gr.Textbox, model_b: gr.Textbox, shown: Any
) -> Any:
    """:func:`checked_click` for two models: either id refused stops the click."""

    def status_at_click(a: str, b: str, request: gr.Request = None) -> Any:  # type: ignore[assignment]
        try:
            check_model_id(b)
        except SpaceRefusal as err:
            return f"**Stopped:** model B: {err}"
        return click_status(a, JOB_GROUP, request)

    def gate(a: str, b: str) -> None:
        model_gate(a)
        model_gate(b)

    button.click(status_at_click, [model_a, model_b], shown, queue=False)
    return button.click(gate, [model_a, model_b], None, queue=False)


# --------------------------------------------------------------------------- Score


def follow(
    job: Any, status: JobStatus, progress: Any, request: gr.Request | None, update: Any
) -> Iterator[tuple[Any, ...]]:
    """Drive a running ``job``: every tick, its progress to the status line and Gradio's bar,
    and ``update()`` to the page. Returns True when the job ended, False when its visitor
    stopped reading (the caller then leaves the job's ``with`` block, which kills it).
    :class:`SpaceRefusal` as soon as the job's own pace shows it cannot finish within its
    limit (:meth:`JobStatus.cannot_finish`), saying what the visitor can change."""
    attention = Attention(request)
    for step in job.updates(TICK):
        if step is not None:
            status.bar(*step)
            page_progress(progress)(*step)
        if attention.gone():
            return False
        late = status.cannot_finish(job.seconds - job.elapsed, SETTLE_SECONDS)
        if late:
            raise SpaceRefusal(" ".join(filter(None, [late, job.hint])))
        yield update()
    return True


def _checked(model_text: str, dataset: str, benchmark: str) -> tuple[Any, AllowedDataset, str]:
    """The visitor's model and dataset, refused unless safe: (model, dataset entry, note on
    the size check)."""
    model = check_model_id(model_text)
    get_benchmark(benchmark)
    entry = resolve_dataset(dataset, benchmark, allowed())
    check_model_cached(model.repo_id)
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
    request: gr.Request = None,  # type: ignore[assignment]
    progress: Any = gr.Progress(),  # noqa: B008 (gradio idiom)
) -> Iterator[tuple[Any, ...]]:
    """Check the inputs, run ``task`` of ``benchmark`` on the allow-listed ``dataset``,
    add a full run to the leaderboard. A generator: it first yields the job's status
    (within a second of the click), then every second while the job runs, and last
    (status, Markdown report, plots, files to download, an HTML grid of a few images per
    variant with the model's predictions, the LaTeX row and model-index block, the Score
    button). Closing it (the visitor left, or pressed Stop) kills the job. Every failure
    reaches the visitor as a plain ``gr.Error`` message, the status saying so too."""
    entry = None
    benchmark = benchmark or default_benchmark()
    title = f"{task} · {(model_text or '').strip()[:80] or '?'} · {dataset}"
    status = JobStatus(title, job_seconds(task) if task else JOB_SECONDS)
    skip = gr.skip()
    busy = gr.update(value=SCORE_BUSY, interactive=False)
    idle = gr.update(value=SCORE_IDLE, interactive=True)

    def update(*, button: Any = skip) -> tuple[Any, ...]:
        return (status.markdown(), skip, skip, skip, skip, skip, button)

    status.stage("checking the model and the dataset")
    yield (status.markdown(), "", "", None, "", "", busy)
    try:
        spec = get_benchmark(benchmark)
        spec.check_task(task)
        if takes_variants(task):
            if not variants:
                raise SpaceRefusal("Pick at least one variant.")
            spec.check_variants(list(variants))
        progress(0, desc="checking the model and the dataset")
        model, entry, note = _checked(model_text, dataset, benchmark)
        data = allowed_data(entry, spec)
        out = run_output_dir()
        # the benchmark's order, as every table and grid of the report shows them
        picked = [v for v in spec.variants if v in set(variants or [])]
        options = task_options(task, picked, restrict)
        options.update(benchmark=benchmark, data=data, output_dir=str(out))
        status.stage(f"loading {model.model_id} and the data")
        progress(0.05, desc=f"loading {model.model_id}")
        yield update()
        with job_for(task, model.model_id, options) as job:
            if not (yield from follow(job, status, progress, request, update)):
                return  # nobody reads the updates: stop the job (the with block kills it)
            results = job.result()
        FINISHED.add(task, model.model_id, entry.name, options, out, results)
        gallery = ""
        if (out / "predictions").is_dir():  # a task that keeps per-image predictions
            status.stage("drawing the predictions on a few images")
            progress(None, desc="drawing the predictions on a few images")
            yield update()
            tables = read_predictions(out / "predictions")
            shown = prediction_gallery(data, benchmark, tables, per_variant=SAMPLES)
            gallery = samples_html(shown)
            if gallery:
                gallery = f"<h3>The model's predictions on {SAMPLES} of the images</h3>{gallery}"
    except Exception as err:
        message = visitor_message(err, _hidden(entry))
        yield (f"**Stopped:** {message}", skip, skip, skip, skip, skip, idle)
        raise gr.Error(message, duration=None, print_exception=False) from None
    stem = get_task(task).stem
    notes = [n for n in (note, _record(results, entry.name)) if n]
    public = public_document(results, _hidden(entry))
    shown_doc, tables_csv = narrow_tables(public, out / "tables", reference=spec.reference_variant)
    report, extras = split_report(render_markdown(shown_doc))
    report = report.rstrip() + "".join(f"\n\n> {n}" for n in notes)
    report += "\n\n" + reproduce_section(task, model.model_id, entry, options)
    results_file = write_public_document(public, out / "download" / f"{stem}.json")
    tables_csv += cli_files(out, results, _hidden(entry))
    figures = run_figures(results, out)
    took = round(status.clock() - status.started)
    JOB_TIMES.add(took)
    yield (
        f"**{title}**\n\nDone in {took} s: the report is below.",
        report,
        figures_html(figures),
        run_files(out, results_file, tables_csv),
        gallery,
        extras,  # its model-index names the data scored (render.model_index)
        idle,
    )


def reproduce_section(
    task: str, model_id: str, entry: AllowedDataset, options: dict[str, Any], output: str = ""
) -> str:
    """The "Reproduce this" section of a run: its exact ``bgbench`` command."""
    data, note = data_argument(entry)
    command = task_command(task, model_id, options["benchmark"], data, options, output or None)
    return reproduce_markdown([command], [note])


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
) -> list[Any]:
    """The report button's validator: it shares the scoring jobs' per-client limit."""
    return _refusal(JOB_GROUP, "a scoring job", request, 1, model_text)


def report_card(
    model_text: str,
    request: gr.Request = None,  # type: ignore[assignment]
    progress: Any = gr.Progress(),  # noqa: B008 (gradio idiom)
) -> Iterator[tuple[Any, ...]]:
    """Every benchmark's headline numbers for one model, on the allow-listed datasets at the
    Space's caps (:func:`hf_bgbench.space.report_card.space_report`), beside the published
    models: the report card's Markdown section, its profile figure and its files. A
    generator like :func:`score`: closing it kills the job."""
    title = f"report card · {(model_text or '').strip()[:80] or '?'}"
    offered = list(allowed().values())
    seconds = report_seconds(offered)
    status = JobStatus(title, seconds)
    skip = gr.skip()
    hidden: dict[str, str] = {}
    for entry in offered:
        hidden.update(_hidden(entry))
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
        with job:
            waiting = (status.markdown(), skip, skip, skip, skip)
            if not (yield from follow(job, status, progress, request, lambda: waiting)):
                return
            job.result()
    except Exception as err:
        message = visitor_message(err, hidden)
        yield (f"**Stopped:** {message}", skip, skip, skip, idle)
        raise gr.Error(message, duration=None, print_exception=False) from None
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
    took = round(status.clock() - status.started)
    JOB_TIMES.add(took)
    yield (
        f"**{title}**\n\nDone in {took} s: the report card is below.",
        section,
        figures_html([out / "reliance_profile.png"]),
        report_files(out, hidden),
        idle,
    )


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


def queued_job(
    checked: Any, fn: Any, inputs: list[Any], outputs: list[Any], progress_on: Any, validator: Any
) -> Any:
    """Job ``fn`` after its checked click (:func:`checked_click`): in the one job queue
    (``CONCURRENCY`` at a time), ``validator`` run before it is queued, Gradio's progress bar
    under ``progress_on``."""
    return checked.success(
        fn,
        inputs,
        outputs,
        show_progress_on=progress_on,
        concurrency_id=JOB_GROUP,
        concurrency_limit=CONCURRENCY,
        validator=validator,
    )


def stop_button(stop: Any, job: Any, status: Any, button: Any, idle_label: str) -> None:
    """``stop`` cancels ``job`` (Gradio closes it); ``status`` says so and ``button`` is
    back to ``idle_label``."""
    stop.click(
        lambda: ("**Stopped** at your request.", gr.update(value=idle_label, interactive=True)),
        None,
        [status, button],
        cancels=[job],
        queue=False,
    )


# --------------------------------------------------------------------------- Explore


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


def _variants_update(dataset: str | None, benchmark: str) -> Any:
    held = variants_of(dataset, benchmark)
    return gr.update(choices=held, value=held)


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
    first; closing it kills the job (as :func:`score`)."""
    entry = None
    try:
        if not image_id:
            raise SpaceRefusal("Pick an image from the list.")
        spec = get_benchmark(benchmark)
        progress(0, desc="checking the model and dataset")
        yield gr.skip(), "Now: checking the model and the dataset …"
        model, entry, _ = _checked(model_text, dataset, benchmark)
        options = {
            "benchmark": benchmark,
            "data": allowed_data(entry, spec),
            "image_id": str(image_id),
            "restrict_to_benchmark": bool(restrict),
        }
        progress(0.2, desc=f"running {model.model_id} on every variant")
        attention = Attention(request)
        with explore_job_for(model.model_id, options) as job:
            for _ in job.updates(TICK):
                if attention.gone():
                    return
                yield (
                    gr.skip(),
                    f"Now: running {model.model_id} on every variant ({job.elapsed:.0f} s)",
                )
            shown = job.result()
    except Exception as err:
        message = visitor_message(err, _hidden(entry))
        yield gr.skip(), f"**Stopped:** {message}"
        raise gr.Error(message, duration=None, print_exception=False) from None
    yield [(v.image, v.caption) for v in shown], explore_summary(shown, model.model_id, image_id)


def finished_run(
    task: str,
    model_id: str,
    entry: AllowedDataset,
    benchmark: str,
    variants: list[str],
    follow_job: Any,
) -> Iterator[tuple[Any, ...]]:
    """The run of ``task`` for ``model_id`` on ``entry`` at the Space's caps: one this
    process finished (:data:`FINISHED`), else a new job, driven by ``follow_job(job)`` (a
    :func:`follow` generator). Returns (:class:`FinishedRun`, the options it ran with);
    None when its visitor stopped reading."""
    spec = get_benchmark(benchmark)
    picked = [v for v in spec.variants if v in set(variants)] if takes_variants(task) else []
    options = task_options(task, picked, False)
    options["benchmark"] = benchmark
    found = FINISHED.find(task, model_id, entry.name, options, picked)
    if found is not None:
        return found, options
    out = run_output_dir()
    options.update(data=allowed_data(entry, spec), output_dir=str(out))
    with job_for(task, model_id, options) as job:
        if not (yield from follow_job(job)):
            return None
        results = job.result()
    FINISHED.add(task, model_id, entry.name, options, out, results)
    return FinishedRun(out, results), options


# --------------------------------------------------------------------------- Compare


def one_compare_per_client(
    model_a: Any,
    model_b: Any,
    dataset: Any,
    benchmark: Any,
    task: Any,
    request: gr.Request = None,  # type: ignore[assignment]
) -> list[Any]:
    """The Compare button's validator: both model ids checked; one scoring job per client."""
    fine = _refusal(JOB_GROUP, "a scoring job", request, 5, model_a)
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
    task: str = "evaluate",
    request: gr.Request = None,  # type: ignore[assignment]
    progress: Any = gr.Progress(),  # noqa: B008 (gradio idiom)
) -> Iterator[tuple[Any, ...]]:
    """Model A against model B on the same images (``bgbench compare``): each model's run of
    ``task`` (a run this process already finished is reused), then the paired differences
    with their intervals, the verdicts and the forest plot. Yields (status, Markdown,
    plot HTML, files, the button), as :func:`score`."""
    entry = None
    title = f"compare · {(model_a or '?').strip()[:60]} vs {(model_b or '?').strip()[:60]}"
    status = JobStatus(title, 2 * job_seconds(task))
    skip = gr.skip()
    busy = gr.update(value=COMPARE_BUSY, interactive=False)
    idle = gr.update(value=COMPARE_IDLE, interactive=True)

    def update() -> tuple[Any, ...]:
        return (status.markdown(), skip, skip, skip, skip)

    def follow_job(job: Any) -> Iterator[tuple[Any, ...]]:
        return follow(job, status, progress, request, update)

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
        a, entry, note_a = _checked(model_a, dataset, benchmark)
        b, _, note_b = _checked(model_b, dataset, benchmark)
        if a.model_id == b.model_id:
            raise SpaceRefusal("Enter two different models to compare.")
        held = variants_of(dataset, benchmark)
        runs = []
        for side, model in (("A", a), ("B", b)):
            status.stage(f"scoring {side}: {model.model_id} ({task})")
            progress(0.05, desc=f"scoring {model.model_id}")
            yield update()
            got = yield from finished_run(task, model.model_id, entry, benchmark, held, follow_job)
            if got is None:
                return  # nobody reads the updates: the job was stopped
            runs.append(got)
        status.stage("pairing the images and resampling")
        yield update()
        hidden = _hidden(entry)
        out = run_output_dir()
        shown = compare_folders(runs[0][0].folder, runs[1][0].folder, task, out, hidden)
    except Exception as err:
        message = visitor_message(err, _hidden(entry))
        yield (f"**Stopped:** {message}", skip, skip, skip, idle)
        raise gr.Error(message, duration=None, print_exception=False) from None
    folders = run_folders(task)
    data, data_note = data_argument(entry)
    commands = [
        task_command(task, m.model_id, benchmark, data, options, folder)
        for m, (_, options), folder in zip((a, b), runs, folders, strict=True)
    ]
    commands.append(f"bgbench compare {folders[0]} {folders[1]} --output bgbench_compare")
    notes = [n for n in (note_a, note_b) if n]
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


# --------------------------------------------------------------------------- Flips


def one_flips_per_client(
    model_text: Any,
    dataset: Any,
    benchmark: Any,
    pair: Any,
    request: gr.Request = None,  # type: ignore[assignment]
) -> list[Any]:
    """The flip explorer's validator (it scores: one scoring job per client)."""
    return _refusal(JOB_GROUP, "a scoring job", request, 4, model_text)


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
        model, entry, note = _checked(model_text, dataset, benchmark)
        wanted = [spec.reference_variant, pair.first, pair.second]
        held = variants_of(dataset, benchmark)
        status.stage(f"scoring {model.model_id} on {', '.join(v for v in wanted if v in held)}")
        yield update()
        got = yield from finished_run(
            task,
            model.model_id,
            entry,
            benchmark,
            [v for v in wanted if v in held],
            lambda job: follow(job, status, progress, request, update),
        )
        if got is None:
            return
        run, options = got
        status.stage("finding the images that flip")
        yield update()
        data = allowed_data(entry, spec)
        tables = read_predictions(run.folder / "predictions")
        summary, shown = flips_page(data, benchmark, tables, pair, model.model_id)
    except Exception as err:
        message = visitor_message(err, _hidden(entry))
        yield f"**Stopped:** {message}", skip
        raise gr.Error(message, duration=None, print_exception=False) from None
    summary += "".join(f"\n\n> {n}" for n in [note] if n)
    summary += "\n\n" + reproduce_section(task, model.model_id, entry, options)
    yield summary, f'<div class="bgbench-scroll">{shown}</div>'


def _pair_choices(benchmark: str) -> Any:
    pairs = flip_pairs(get_benchmark(benchmark))
    return gr.update(
        choices=[(f"{p.label}: {p.first} vs {p.second}", p.name) for p in pairs],
        value=pairs[0].name if pairs else None,
    )


# --------------------------------------------------------------------------- Leaderboard


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


# widths that fit a 1280-px page: the facts narrow, the scores sharing the rest; the board
# of runs on other data gives two of its columns to the image count and the fingerprint
BOARD_WIDTHS = {"model": 17, "source": 8, "dataset": 19, "protocol": 11}
OTHER_WIDTHS = {"model": 15, "source": 8, "dataset": 11, "protocol": 11}
OTHER_WIDTHS.update({"images": 6, "data fingerprint": 10})


def leaderboard(benchmark: str, task: str, model: str, published: bool) -> tuple[Any, Any]:
    """The two boards: the rows on the published benchmark (the papers' numbers and runs on
    its Hub dataset), ranked together; and, apart, the runs on other data (a local copy or
    sample, with its image count and data fingerprint), shown only when there are any."""
    rows = read_rows(leaderboard_dir()) + results_repo_rows()
    boards = []
    for scope in ("benchmark", "other"):
        headers, values = table(
            rows,
            benchmark=benchmark,
            task=task,
            model=model or "",
            published=published,
            scope=scope,
        )
        widths_of = BOARD_WIDTHS if scope == "benchmark" else OTHER_WIDTHS
        info = {h: w for h, w in widths_of.items() if h in headers}
        rest = max(0, 100 - sum(info.values()))
        scores = max(len(headers) - len(info), 1)
        widths = [f"{info[h]}%" if h in info else f"{rest / scores:.1f}%" for h in headers]
        boards.append((headers, values, widths))
    (headers, values, widths), (o_headers, o_values, o_widths) = boards
    return (
        gr.Dataframe(value=values, headers=headers, column_widths=widths),
        gr.Dataframe(
            value=o_values, headers=o_headers, column_widths=o_widths, visible=bool(o_values)
        ),
    )


def _task_choices(benchmark: str, comparable: bool = False) -> list[tuple[str, str]]:
    tasks = get_benchmark(benchmark).tasks
    return [
        (task_label(t, benchmark), t) for t in tasks if not comparable or t in comparable_tasks()
    ]


# A control's choices at build time are what "Use via API" accepts (Gradio checks a value
# against them): every benchmark's tasks, variants and datasets; the page narrows them to
# the benchmark shown when it loads.
def _every_task(comparable: bool = False) -> list[tuple[str, str]]:
    declared = {t for b in list_benchmarks() for t in get_benchmark(b).tasks}
    return [
        (t.description, t.name)
        for t in all_tasks()
        if t.name in declared and (not comparable or t.name in comparable_tasks())
    ]


def _every_variant() -> list[str]:
    return list(dict.fromkeys(v for b in list_benchmarks() for v in get_benchmark(b).variants))


def _every_pair() -> list[tuple[str, str]]:
    pairs = (p for b in list_benchmarks() for p in flip_pairs(get_benchmark(b)))
    return list(dict.fromkeys((f"{p.label}: {p.first} vs {p.second}", p.name) for p in pairs))


def _compare_tasks(benchmark: str) -> Any:
    choices = _task_choices(benchmark, comparable=True)
    return gr.update(choices=choices, value=choices[0][1] if choices else None)


def _datasets_update(benchmark: str) -> Any:
    offered = datasets_for(allowed(), benchmark)
    return gr.update(choices=offered, value=offered[0] if offered else None)


def _board_tasks(benchmark: str) -> Any:
    tasks = list(get_benchmark(benchmark).tasks)
    return gr.update(choices=tasks, value=tasks[0])


def build_demo() -> gr.Blocks:
    benchmarks = list_benchmarks()
    start = get_benchmark(default_benchmark())
    names = datasets_for(allowed(), start.name)
    first = names[0] if names else None
    held = variants_of(first, start.name)
    every_name = list(allowed())  # the API's choices; the page shows those of its benchmark
    with gr.Blocks(title="bgbench: background reliance of image classifiers") as demo:
        gr.Markdown(
            "# How much does your classifier lean on the background?\n"
            "Scores a timm or transformers ImageNet classifier from the Hub, or a CLIP-family "
            "model zero-shot (transformers CLIP or SigLIP, an open_clip repo; ImageNet's 1000 "
            "class names, OpenAI's 80 prompt templates), on the "
            "background-reliance benchmarks. **BG-GAP** (ImageNet-9) = accuracy on "
            "*mixed_same* − *mixed_rand*: the points a model loses when the object's "
            "background stops matching its class."
        )
        with gr.Tab("Score a model"):
            with gr.Row():
                model_id = gr.Textbox(
                    label=MODEL_LABEL, value="tf_efficientnet_lite0", elem_id="score-model"
                )
                dataset = gr.Dropdown(every_name, value=first, label="Dataset")
            with gr.Row():
                benchmark = gr.Dropdown(benchmarks, value=start.name, label="Benchmark")
                task = gr.Radio(_every_task(), value=start.tasks[0], label="Task")
            variants = gr.CheckboxGroup(
                _every_variant(),
                value=held,
                label="Variants (those the dataset holds)",
                elem_id="variants",
            )
            restrict = gr.Checkbox(
                label="Argmax only over the benchmark's ImageNet classes "
                "(not the published protocol)"
            )

            def on_benchmark(name: str) -> tuple[Any, ...]:
                spec = get_benchmark(name)
                offered = datasets_for(allowed(), name)
                chosen = offered[0] if offered else None
                return (
                    gr.update(choices=_task_choices(name), value=spec.tasks[0]),
                    _variants_update(chosen, name),
                    gr.update(choices=offered, value=chosen),
                )

            benchmark.change(on_benchmark, benchmark, [task, variants, dataset], queue=False)
            dataset.input(_variants_update, [dataset, benchmark], variants, queue=False)
            task.change(lambda t: gr.update(visible=takes_variants(t)), task, variants, queue=False)
            with gr.Row():
                run = gr.Button(SCORE_IDLE, variant="primary", scale=4, elem_id="score-button")
                stop = gr.Button("Stop", variant="stop", scale=1, elem_id="stop-button")
            status = gr.Markdown(
                "Pick a model, a dataset and a task, then press **Score**.", elem_id="job-status"
            )
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
                ex_data = gr.Dropdown(every_name, value=first, label="Dataset")
            with gr.Row(equal_height=True):
                # any id is accepted (and checked by the job): the API's callers name theirs
                ex_image = gr.Dropdown(
                    [], label="Image (class · id)", allow_custom_value=True, scale=4
                )
                ex_run = gr.Button("Show every variant", variant="primary", scale=1)
            ex_summary = gr.Markdown(elem_id="explore-summary")
            ex_gallery = gr.Gallery(
                label="The image in every variant: ✓/✗ prediction (model's class) confidence",
                columns=4,
                object_fit="contain",
                height="auto",
                elem_id="explore-gallery",
            )
            gr.Markdown(
                "### The images behind the gap\n"
                "Which images does the model get right with the object on a background of "
                "its own class (*mixed_same*) and wrong on another class's (*mixed_rand*), "
                "and the reverse? BG-GAP is exactly (right→wrong − wrong→right) / images. "
                "Each is shown as the original photo and in both variants, with the "
                "background's source photo when the dataset records it."
            )
            with gr.Row(equal_height=True):
                fl_pair = gr.Dropdown(_every_pair(), label="Gap", scale=4, elem_id="flip-pair")
                fl_run = gr.Button(FLIPS_IDLE, variant="primary", scale=1, elem_id="flip-button")
            fl_summary = gr.Markdown(elem_id="flips-summary")
            fl_images = gr.HTML(elem_id="flips")
            ex_bench.change(_datasets_update, ex_bench, ex_data, queue=False)
            ex_bench.change(_pair_choices, ex_bench, fl_pair, queue=False)
            ex_data.change(images_of, [ex_data, ex_bench], ex_image, queue=False)
            queued_job(
                checked_click(fl_run, ex_model, fl_summary, JOB_GROUP),
                flips,
                [ex_model, ex_data, ex_bench, fl_pair],
                [fl_summary, fl_images],
                fl_summary,
                one_flips_per_client,
            )
        with gr.Tab("Compare"):
            gr.Markdown(
                "Model A against model B on the same images (the `bgbench compare` "
                "command): each score's difference A − B with a paired 95% bootstrap "
                "interval over the images both scored, a verdict in words and a forest "
                "plot. A model's run is reused when this Space has scored it already."
            )
            with gr.Row():
                cmp_a = gr.Textbox(
                    label="Model A", value="tf_efficientnet_lite0", elem_id="compare-model-a"
                )
                cmp_b = gr.Textbox(
                    label="Model B", value="tf_efficientnet_lite1", elem_id="compare-model-b"
                )
            with gr.Row():
                cmp_bench = gr.Dropdown(benchmarks, value=start.name, label="Benchmark")
                cmp_data = gr.Dropdown(every_name, value=first, label="Dataset")
                cmp_task = gr.Radio(
                    _every_task(comparable=True), value=start.tasks[0], label="Task"
                )
            with gr.Row():
                cmp_run = gr.Button(
                    COMPARE_IDLE, variant="primary", scale=4, elem_id="compare-button"
                )
                cmp_stop = gr.Button("Stop", variant="stop", scale=1, elem_id="compare-stop")
            cmp_status = gr.Markdown(
                "Enter two models, then press **Compare**.", elem_id="compare-status"
            )
            cmp_report = gr.Markdown(elem_id="compare-report")
            cmp_plot = gr.HTML(elem_id="compare-plot")
            cmp_files = gr.File(
                label="Download: compare.json, compare.md, compare.png", file_count="multiple"
            )
            cmp_bench.change(_datasets_update, cmp_bench, cmp_data, queue=False)
            cmp_bench.change(_compare_tasks, cmp_bench, cmp_task, queue=False)
            comparing = queued_job(
                checked_compare_click(cmp_run, cmp_a, cmp_b, cmp_status),
                compare_models,
                [cmp_a, cmp_b, cmp_data, cmp_bench, cmp_task],
                [cmp_status, cmp_report, cmp_plot, cmp_files, cmp_run],
                cmp_report,
                one_compare_per_client,
            )
            stop_button(cmp_stop, comparing, cmp_status, cmp_run, COMPARE_IDLE)
            checked_click(ex_run, ex_model, ex_summary).success(
                explore,
                [ex_model, ex_data, ex_bench, ex_image],
                [ex_gallery, ex_summary],
                show_progress_on=ex_summary,
                concurrency_id=EXPLORE_GROUP,
                concurrency_limit=EXPLORE_CONCURRENCY,
                validator=one_explore_per_client,
            )
        with gr.Tab("Report card"):
            gr.Markdown(
                "One model on every benchmark this Space has data for: each headline number "
                "with its 95% interval, beside the published models, as a section to paste "
                "into a model card (the `bgbench report` command's report, at this Space's "
                "caps)."
            )
            rc_model = gr.Textbox(
                label=MODEL_LABEL, value="tf_efficientnet_lite0", elem_id="report-model"
            )
            with gr.Row():
                rc_run = gr.Button(REPORT_IDLE, variant="primary", scale=4, elem_id="report-button")
                rc_stop = gr.Button("Stop", variant="stop", scale=1, elem_id="report-stop")
            rc_status = gr.Markdown(
                "Enter a model, then press **Make the report card**.", elem_id="report-status"
            )
            rc_section = gr.Markdown(elem_id="report-card")
            rc_figure = gr.HTML(elem_id="report-profile")
            rc_files = gr.File(label="Download: the report card's files", file_count="multiple")
        with gr.Tab("Leaderboard"):
            gr.Markdown(
                "One row per model, dataset and protocol: a full run (every image and every "
                "variant the dataset holds) enters it, and a newer full run replaces the "
                "older one. Rows marked *published* are the papers' numbers; a run ranks "
                "beside them only when it scored the benchmark's published dataset, runs on "
                "other data in a table of their own. Scores in the units of their column, "
                "with 95% intervals in brackets; the best first."
            )
            with gr.Row():
                lb_bench = gr.Dropdown(benchmarks, value=start.name, label="Benchmark")
                lb_task = gr.Dropdown(
                    [name for _, name in _every_task()], value=start.tasks[0], label="Task"
                )
                lb_model = gr.Textbox(label="Model contains")
                lb_pub = gr.Checkbox(value=True, label="Show published numbers")
            board = gr.Dataframe(
                label="On the published benchmark (its Hub dataset): the papers' numbers and "
                "full runs",
                interactive=False,
                show_search="filter",
                wrap=True,
                elem_id="leaderboard",
            )
            other_board = gr.Dataframe(
                label="On other data (a local copy or a sample), ranked apart from the "
                "published numbers: each row's image count and data fingerprint say what it "
                "scored",
                interactive=False,
                wrap=True,
                visible=False,
                elem_id="leaderboard-other",
            )
            refresh = gr.Button("Refresh")
            filters = [lb_bench, lb_task, lb_model, lb_pub]
            boards = [board, other_board]
            lb_bench.change(_board_tasks, lb_bench, lb_task, queue=False)
            for trigger in (refresh.click, lb_task.change, lb_pub.change):
                trigger(leaderboard, filters, boards, queue=False)
            lb_model.submit(leaderboard, filters, boards, queue=False)
        demo.load(leaderboard, filters, boards, queue=False)
        demo.load(images_of, [ex_data, ex_bench], ex_image, queue=False)
        # the page shows the choices of the benchmark shown (the API accepts every one)
        demo.load(on_benchmark, benchmark, [task, variants, dataset], queue=False)
        demo.load(_datasets_update, ex_bench, ex_data, queue=False)
        demo.load(_pair_choices, ex_bench, fl_pair, queue=False)
        demo.load(_datasets_update, cmp_bench, cmp_data, queue=False)
        demo.load(_compare_tasks, cmp_bench, cmp_task, queue=False)
        demo.load(_board_tasks, lb_bench, lb_task, queue=False)
        scoring = queued_job(
            checked_click(run, model_id, status, JOB_GROUP),
            score,
            [model_id, dataset, variants, restrict, benchmark, task],
            [status, report, plots, raw, samples, extras, run],
            # Gradio's progress bar (the task's own bars, via gr.Progress) right under the
            # status line, which stays readable
            report,
            one_score_per_client,
        )
        scoring.then(leaderboard, filters, boards, queue=False)
        stop_button(stop, scoring, status, run, SCORE_IDLE)
        reporting = queued_job(
            checked_click(rc_run, rc_model, rc_status, JOB_GROUP),
            report_card,
            [rc_model],
            [rc_status, rc_section, rc_figure, rc_files, rc_run],
            rc_section,
            one_report_per_client,
        )
        stop_button(rc_stop, reporting, rc_status, rc_run, REPORT_IDLE)
    demo.queue(default_concurrency_limit=CONCURRENCY, max_size=QUEUE_SIZE)
    return demo


if __name__ != "__mp_main__":  # not in a job's process (it imports this file again)
    demo = build_demo()

if __name__ == "__main__":
    demo.launch(show_error=True, max_file_size=MAX_UPLOAD_BYTES, css=CSS)
