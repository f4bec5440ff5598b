"""How a job runs: in a process of its own, followed every second until it ends.

* a job runs in its own process (:func:`job_for`; on ZeroGPU in a thread under
  ``spaces.GPU``, :func:`use_zero_gpu`), within its task's time limit; a task reaches the
  runner here (:func:`run_job`: ``run_task``) and nowhere else in the jobs;
* its tab's callback is a generator that reports the job's stage every second
  (:func:`follow`); Gradio closes it -- which kills the process -- when its visitor leaves
  or presses Stop; a job whose pace shows it cannot finish in time is stopped early, saying
  what the visitor can change (:func:`time_limit_hint`);
* :data:`FINISHED` (the runs Compare and the flips reuse, :func:`finished_run`) is this
  process's one record of its runs. The tabs read it, :func:`job_for` and
  :func:`explore_job_for` as attributes of this module at call time, so that each is one
  object for the whole Space (and a test can swap it).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Generator, Iterator
from typing import Any, TypeVar

import gradio as gr

from hf_bgbench.benchmarks import get_benchmark
from hf_bgbench.space.checks.allowlist import AllowedDataset, allowed_data
from hf_bgbench.space.checks.messages import SpaceRefusal, visitor_message
from hf_bgbench.space.jobs.clients import Attention
from hf_bgbench.space.jobs.finished_runs import FinishedRun, FinishedRuns
from hf_bgbench.space.jobs.process import Job, ThreadJob
from hf_bgbench.space.jobs.progress import page_progress
from hf_bgbench.space.jobs.status import JobStatus
from hf_bgbench.space.settings import (
    EXPLORE_SECONDS,
    JOB_SECONDS,
    job_seconds,
    leaderboard_dir,
    run_output_dir,
    takes_variants,
    task_options,
)
from hf_bgbench.space.views.explore import explore_image
from hf_bgbench.space.views.leaderboard import LEADERBOARD_REPO_ENV, NotEligible, append_result
from hf_bgbench.space.views.reproduce import run_command
from hf_bgbench.tasks import run_task

T = TypeVar("T")

TICK = 1.0  # seconds between two status updates of a running job
# a step's pace is trusted for the early stop once it has run this long (its first images
# are slow: the workers start, the model warms up)
SETTLE_SECONDS = 30
FINISHED = FinishedRuns()  # runs this process finished: Compare and the flips reuse them
ZERO_GPU = False  # whether the jobs run under Hugging Face's ``spaces.GPU`` (use_zero_gpu)


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
    :func:`follow` generator). Returns (:class:`FinishedRun`, the options it ran with, a
    sentence: which earlier run was reused, or what the leaderboard made of the new one);
    None when its visitor stopped reading."""
    spec = get_benchmark(benchmark)
    picked = [v for v in spec.variants if v in set(variants)] if takes_variants(task) else []
    options = task_options(task, picked, False)
    options["benchmark"] = benchmark
    found = FINISHED.find(task, model_id, entry.name, options, picked)
    if found is not None:
        return (
            found,
            options,
            f"{model_id}: reused this Space's earlier run ({task} on {entry.name}).",
        )
    out = run_output_dir()
    options.update(data=allowed_data(entry, spec), output_dir=str(out))
    command = run_command(task, model_id, entry, options)
    with job_for(task, model_id, options, command, variants_offered=False) as job:
        if not (yield from follow_job(job)):
            return None
        results = job.result()
    FINISHED.add(task, model_id, entry.name, options, out, results)
    return FinishedRun(out, results), options, record_run(results, entry.name)


def record_run(results: dict[str, Any], dataset: str) -> str:
    """Add a run to the leaderboard; what the report says of it (entered, or why not)."""
    try:
        row = append_result(
            leaderboard_dir(), results, dataset, os.environ.get(LEADERBOARD_REPO_ENV)
        )
    except NotEligible as err:
        return str(err)
    except Exception as err:  # the score stands even if the leaderboard cannot be written
        return f"The leaderboard could not be updated: {visitor_message(err)}"
    return f"Added to the leaderboard ({row['model']}, {row['task']} on {dataset})."


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
        # the ticks while the job's process starts are not counted against its reader
        if job.started and attention.gone():
            return False
        late = status.cannot_finish(job.seconds - job.elapsed, SETTLE_SECONDS)
        if late:
            raise SpaceRefusal(" ".join(filter(None, [late, job.hint])))
        yield update()
    return True
