"""The Space's job machinery: how a job (Score, Explore, Compare, the flips, the report card)
runs, is queued, is refused and is followed.

* a job runs in its own process (:func:`job_for`; on ZeroGPU in a thread under
  ``spaces.GPU``, :func:`use_zero_gpu`) and its callback is a generator that reports its
  stage every second (:func:`follow`); Gradio closes it -- which kills the process -- when
  its visitor leaves or presses Stop (:func:`stop_button`); a client that never reads its
  updates is stopped after ``BGBENCH_SPACE_UNREAD_SECONDS`` (:class:`Attention`);
* each client -- known by what it cannot forge (:func:`client_key`) -- may hold
  ``JOBS_PER_CLIENT`` jobs of a concurrency group, queued or running: a validator refuses
  more before anything is queued (:func:`refusal`), and the click's status line says so at
  once, outside the queue (:func:`checked_click`, :func:`click_status`);
* :data:`JOB_TIMES` (a queued visitor's estimate) and :data:`FINISHED` (the runs Compare and
  the flips reuse) are this process's one record of its jobs. The tabs read them, and
  :func:`job_for`, as attributes of this module at call time, so that each is one object
  for the whole Space (and a test can swap it).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Generator, Iterator
from typing import Any, TypeVar

import gradio as gr

from hf_bgbench.benchmarks import get_benchmark
from hf_bgbench.space.explore import explore_image
from hf_bgbench.space.inputs import run_command
from hf_bgbench.space.progress import JobStatus, JobTimes, page_progress, queue_message
from hf_bgbench.space.runs import FinishedRun, FinishedRuns
from hf_bgbench.space.safety import (
    AllowedDataset,
    Job,
    SpaceRefusal,
    ThreadJob,
    allowed_data,
    check_model_id,
    client_address,
)
from hf_bgbench.space.settings import (
    CONCURRENCY,
    EXPLORE_SECONDS,
    JOB_SECONDS,
    JOBS_PER_CLIENT,
    QUEUE_SIZE,
    TRUSTED_PROXIES,
    UNREAD_SECONDS,
    job_seconds,
    run_output_dir,
    takes_variants,
    task_options,
)
from hf_bgbench.tasks import run_task

T = TypeVar("T")

TICK = 1.0  # seconds between two status updates of a running job
JOB_GROUP, EXPLORE_GROUP = "score-job", "explore-job"
UNREAD_MESSAGES = 5  # updates a client leaves unread before it counts as not listening
# a step's pace is trusted for the early stop once it has run this long (its first images
# are slow: the workers start, the model warms up)
SETTLE_SECONDS = 30
JOB_TIMES = JobTimes()  # this Space's recent scoring jobs: a queued visitor's estimate
FINISHED = FinishedRuns()  # runs this process finished: Compare and the flips reuse them
ZERO_GPU = False  # whether the jobs run under Hugging Face's ``spaces.GPU`` (use_zero_gpu)
SERVED: list[gr.Blocks] = []  # the demo being served (:func:`serve`): its queue outside an event


def run_job(task: str, model_id: str, options: dict[str, Any]) -> dict[str, Any]:
    """The GPU-bound part: load the model and run the task (``spaces.GPU`` on a Space)."""
    return run_task(task, model_id, **options)


def run_explore(model_id: str, options: dict[str, Any]) -> list[Any]:
    """The GPU-bound part of the Explore tab: one image through the model in every variant."""
    return explore_image(model_id, **options)


def use_zero_gpu(gpu: Callable[..., Any]) -> None:
    """Run the jobs on ZeroGPU: :func:`run_job` and :func:`run_explore` under
    ``gpu(duration=...)`` (Hugging Face's ``spaces.GPU``, which enforces the limit), in this
    process. Called once, at the app's import, before the demo is built."""
    global run_job, run_explore, ZERO_GPU
    run_job = gpu(duration=JOB_SECONDS)(run_job)
    run_explore = gpu(duration=EXPLORE_SECONDS)(run_explore)
    ZERO_GPU = True


TICK_SECONDS = 1.0  # how often the status line is redrawn while a check runs


def ticking(work: Callable[[], T], update: Callable[[], Any]) -> Generator[Any, None, T]:
    """``work()`` run in a thread while the caller's generator yields ``update()`` every
    :data:`TICK_SECONDS`: the status line's clock keeps moving through a slow check (a
    model's size read from the Hub); ``work``'s result, or its exception raised here."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = work()
        except BaseException as err:  # raised in the caller's thread, as it was
            box["error"] = err

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    while thread.is_alive():
        thread.join(TICK_SECONDS)
        if thread.is_alive():
            yield update()
    if "error" in box:
        raise box["error"]
    return box["value"]


def stopped(message: str) -> gr.Error:
    """The error a tab's job ends with when it cannot go on: the message is already the
    tab's own status line ("Stopped: ..."), so it shows no toast -- on a phone a toast
    covers the other tabs' names, and it outlives the tab it belongs to; an API caller
    still gets the error."""
    return gr.Error(message, duration=None, visible=False, print_exception=False)


SMALLEST_MODEL = "tf_efficientnet_lite0"  # the bundled model: there is none smaller to try


def time_limit_hint(
    task: str,
    options: dict[str, Any] | None = None,
    model_id: str = "",
    variants_offered: bool = True,
) -> str:
    """What a visitor can change when ``task`` runs out of time: a smaller model (unless it
    is the smallest already), fewer variants (where the tab offers them), and, with its
    ``options``, for a benchmark whose protocol trains a head for each model, the label map
    that needs none. "" when the page offers nothing to change (the command then does)."""
    changes = [] if model_id == SMALLEST_MODEL else ["a smaller model"]
    if variants_offered and takes_variants(task):
        changes.append("fewer variants")
    hint = f"Try {' or '.join(changes)}." if changes else ""
    options = options or {}
    try:
        trains = get_benchmark(options.get("benchmark", "")).default_label_map == "probe"
    except ValueError:
        trains = False
    if trains and options.get("label_map", "auto") in ("auto", "probe"):
        hint += (
            " This benchmark's protocol trains a linear head for each new model; the label "
            "map 'imagenet' scores a 1000-class model through its own classes instead, with "
            "no training (not the published protocol; recorded)."
        )
    return hint.strip()


def job_for(
    task: str,
    model_id: str,
    options: dict[str, Any],
    command: str = "",
    variants_offered: bool = True,
) -> Job:
    """The job that runs ``task``: on ZeroGPU in this process under ``spaces.GPU(duration=
    ...)`` (which enforces the limit); elsewhere in a separate process, killed at the task's
    time limit or when its visitor leaves. Its progress bars reach the status line. A job
    stopped for time says what the visitor can change (:func:`time_limit_hint`; fewer
    variants only where the tab offers them), and ``command`` (the ``bgbench`` command of
    this run) as the way to run it where no time limit applies."""
    seconds = job_seconds(task)
    hint = time_limit_hint(task, options, model_id, variants_offered)
    if command:
        lead = "Or run it" if hint else "Run it"
        hint += f" {lead} on your own machine, where no time limit applies: `{command}`"
        hint = hint.strip()
    if ZERO_GPU:
        return ThreadJob(run_job, (task, model_id, options), seconds=seconds, hint=hint)
    kwargs = dict(options)
    benchmark = kwargs.pop("benchmark")
    return Job(
        run_task, (task, model_id), {"benchmark": benchmark, **kwargs}, seconds=seconds, hint=hint
    )


def explore_job_for(model_id: str, options: dict[str, Any]) -> Job:
    """:func:`explore_image` as a job within the Explore time limit (as :func:`job_for`)."""
    if ZERO_GPU:
        return ThreadJob(run_explore, (model_id, options), seconds=EXPLORE_SECONDS, track=False)
    return Job(explore_image, (model_id,), options, seconds=EXPLORE_SECONDS, track=False)


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
    command = run_command(task, model_id, entry, options)
    with job_for(task, model_id, options, command, variants_offered=False) as job:
        if not (yield from follow_job(job)):
            return None
        results = job.result()
    FINISHED.add(task, model_id, entry.name, options, out, results)
    return FinishedRun(out, results), options


# --------------------------------------------------------------------------- clients


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


def serve(demo: gr.Blocks) -> None:
    """Make ``demo`` the one whose queue the checks read when no event is running."""
    SERVED[:] = [demo]


def _queue() -> Any:
    from gradio.context import LocalContext

    blocks = LocalContext.blocks.get(None) or (SERVED[-1] if SERVED else None)
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


def refusal(
    group: str, what: str, request: gr.Request | None, inputs: int, model_text: Any = None
) -> list[Any] | dict[str, Any]:
    """One ``gr.validate`` per input, checked before the job is queued (Gradio runs the
    validator outside the queue, so nobody waits behind other jobs to hear it): the first
    (the model) refuses an id the checks refuse (:func:`check_model_id`: a path, a link,
    shell characters), then a client that already holds ``JOBS_PER_CLIENT`` jobs of
    ``group``, queued or running. For one input, the ``gr.validate`` itself: Gradio wraps a
    one-output function's value in a list, and a list inside it reads as valid."""
    fine = [gr.validate(True, "") for _ in range(inputs)]
    if model_text is not None:
        try:
            check_model_id(str(model_text))
        except SpaceRefusal as err:
            fine[0] = gr.validate(False, str(err))
    if fine[0]["is_valid"] and JOBS_PER_CLIENT > 0:
        if jobs_of(client_key(request), group) >= JOBS_PER_CLIENT:
            fine[0] = gr.validate(
                False,
                f"You already have {what} waiting or running; wait for it to finish, or stop "
                "it, before starting another.",
            )
    return fine[0] if inputs == 1 else fine


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


# --------------------------------------------------------------------------- running


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
    back to ``idle_label``.

    The page applies a running job's updates until Gradio's cancel has returned, which on a
    busy machine is after Stop's own message: an update in flight then overwrote "Stopped"
    and the status stayed at "loading … 20 s" (seen in CI). So the page remembers that Stop
    was pressed (``pressed``), and the job's ``.then`` -- which the page runs only once the
    cancel has returned -- says it again and forgets it. A click on ``button`` forgets it
    too (a Stop pressed while nothing ran); ``job`` must follow that click through a quick
    step, as :func:`queued_job` does, for the page runs a click's own handlers in turn and
    would run this one only after a job started by the click itself."""
    pressed = gr.State(False)
    stopped = ("**Stopped** at your request.", gr.update(value=idle_label, interactive=True))

    def after_job(was_stopped: bool) -> tuple[Any, ...]:
        return (*stopped, False) if was_stopped else (gr.skip(), gr.skip(), gr.skip())

    button.click(lambda: False, None, pressed, queue=False, api_visibility="private")
    stop.click(
        lambda: (*stopped, True),
        None,
        [status, button, pressed],
        cancels=[job],
        queue=False,
        api_visibility="private",
    )
    job.then(after_job, pressed, [status, button, pressed], queue=False, api_visibility="private")
