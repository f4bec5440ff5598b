"""The one job queue, as a visitor meets it: a click checked before anything is queued.

Each client may hold ``JOBS_PER_CLIENT`` jobs of a concurrency group (:data:`JOB_GROUP`: the
scoring jobs; :data:`EXPLORE_GROUP`: the Explore requests), queued or running: a validator
refuses more before anything is queued (:func:`refusal`), and the click's status line says
so at once, outside the queue, with a queued visitor's place in line and an estimate from
:data:`JOB_TIMES` (:func:`checked_click`, :func:`click_status`). A model id the checks refuse
stops the click there (:func:`model_gate`). A job runs in the queue (:func:`queued_job`) and
**Stop** cancels it (:func:`stop_button`).

:data:`JOB_TIMES` is this process's one record of its jobs' times: the tabs add to it and
:func:`click_status` reads it as an attribute of this module at call time, so that it is one
object for the whole Space (and a test can swap it).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import gradio as gr

from hf_bgbench.space.checks.messages import SpaceRefusal
from hf_bgbench.space.checks.model_id import check_model_id
from hf_bgbench.space.jobs.clients import client_key, jobs_in, jobs_of
from hf_bgbench.space.jobs.status import JobTimes, queue_message
from hf_bgbench.space.settings import CONCURRENCY, JOB_SECONDS, JOBS_PER_CLIENT, QUEUE_SIZE

JOB_GROUP, EXPLORE_GROUP = "score-job", "explore-job"
JOB_TIMES = JobTimes()  # this Space's recent scoring jobs: a queued visitor's estimate
QUEUE_REFRESH_SECONDS = 5.0  # how often a queued visitor's place and estimate are redrawn


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
    return _queued(len(running), len(waiting))


def _queued(running: int, ahead: int) -> str:
    return queue_message(
        running,
        ahead,
        JOB_TIMES,
        JOB_SECONDS,
        slots=CONCURRENCY,
        refreshed=QUEUE_REFRESH_SECONDS,
    )


def waiting_status(group: str, request: gr.Request | None) -> Any:
    """The status line of a visitor whose job of ``group`` waits, redrawn: its place now and
    a fresh estimate; None once its job has left the queue (it runs: its own updates speak,
    or it was stopped)."""
    running, waiting = jobs_in(group)
    session = getattr(request, "session_hash", None)
    places = [i for i, e in enumerate(waiting) if getattr(e, "session_hash", None) == session]
    if session is None or not places:
        return None
    return _queued(len(running), places[0])


def timed(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The generator job ``fn`` as a queued job whose start and end :data:`JOB_TIMES` notes,
    so that a queued visitor's estimate counts how long the running job has already run
    (Gradio closes the generator on Stop: the end is noted then too). Gradio reads the job's
    parameters (request, progress) through ``functools.wraps``."""
    if not inspect.isgeneratorfunction(fn):  # every job reports its stage as it runs
        raise TypeError(f"{fn.__name__}: a queued job is a generator function.")

    @functools.wraps(fn)
    def job(*args: Any, **kwargs: Any) -> Any:
        token = JOB_TIMES.started()
        try:
            return (yield from fn(*args, **kwargs))
        finally:
            JOB_TIMES.ended(token)

    return job


def model_gate(model_text: str) -> None:
    """At the click, outside the queue: a model id the checks refuse stops the click here,
    so its job never joins the queue (a full queue would otherwise answer "busy")."""
    try:
        check_model_id(model_text)
    except SpaceRefusal as err:
        raise gr.Error(str(err), print_exception=False) from None


def checked_click(
    button: gr.Button,
    model_text: gr.Textbox,
    shown: Any,
    group: str | None = None,
    *,
    last_wins: bool = False,
) -> Any:
    """``button``'s click, checked before anything is queued: the status line ``shown``
    says what happens to the job (:func:`click_status`; ``group``: the job's concurrency
    group, None for no queue news) and :func:`model_gate` stops the click on a refused
    model id; chain the job with ``.success``. With ``last_wins`` a click while the job
    runs is kept and runs after it (gradio drops it by default), so what is shown last is
    what was asked last. (API callers, who join the job's queue directly, meet the same
    checks in its validator.)"""

    def status_at_click(text: str, request: gr.Request = None) -> Any:  # type: ignore[assignment]
        return click_status(text, group, request)

    mode = "always_last" if last_wins else None
    button.click(status_at_click, model_text, shown, queue=False, trigger_mode=mode)
    if group is not None:
        _refresh_while_queued(button, shown, group)
    return button.click(model_gate, model_text, None, queue=False, trigger_mode=mode)


def _refresh_while_queued(button: gr.Button, shown: Any, group: str) -> None:
    """Redraw ``shown`` every :data:`QUEUE_REFRESH_SECONDS` while the visitor's job waits in
    ``group``'s queue (:func:`waiting_status`): a timer started by the click, stopped once
    the job has left the queue."""
    ticker = gr.Timer(QUEUE_REFRESH_SECONDS, active=False)

    def tick(request: gr.Request = None) -> tuple[Any, Any]:  # type: ignore[assignment]
        said = waiting_status(group, request)
        if said is None:
            return gr.skip(), gr.Timer(active=False)
        return said, gr.skip()

    button.click(lambda: gr.Timer(active=True), None, ticker, queue=False, api_visibility="private")
    ticker.tick(tick, None, [shown, ticker], queue=False, api_visibility="private")


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
    _refresh_while_queued(button, shown, JOB_GROUP)
    return button.click(gate, [model_a, model_b], None, queue=False)


def queued_job(
    checked: Any, fn: Any, inputs: list[Any], outputs: list[Any], progress_on: Any, validator: Any
) -> Any:
    """Job ``fn`` after its checked click (:func:`checked_click`): in the one job queue
    (``CONCURRENCY`` at a time), ``validator`` run before it is queued, Gradio's progress bar
    under ``progress_on``."""
    return checked.success(
        timed(fn),
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

    def stopped() -> tuple[Any, ...]:
        # a new update each time: Gradio pops "value" out of the dict it is given, so a
        # shared one would bring the button's label back on the first Stop only
        return ("**Stopped** at your request.", gr.update(value=idle_label, interactive=True))

    def after_job(was_stopped: bool) -> tuple[Any, ...]:
        return (*stopped(), False) if was_stopped else (gr.skip(), gr.skip(), gr.skip())

    button.click(lambda: False, None, pressed, queue=False, api_visibility="private")
    stop.click(
        lambda: (*stopped(), True),
        None,
        [status, button, pressed],
        cancels=[job],
        queue=False,
        api_visibility="private",
    )
    job.then(after_job, pressed, [status, button, pressed], queue=False, api_visibility="private")
