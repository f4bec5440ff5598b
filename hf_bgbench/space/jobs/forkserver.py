"""How a Space job's process starts: forked from a server that has imported the stack once.

A job runs in a process of its own (:class:`hf_bgbench.space.jobs.process.Job`). Started by spawn,
each job imported torch, torchvision, timm, datasets, gradio and bgbench afresh before doing
anything: about 13 CPU-seconds on 2 vCPU, which a visitor waited through on every job.
Forked from the Space's own process it would inherit Gradio's threads (fork copies their
locks, held or not). multiprocessing's ``forkserver`` does neither: one server process,
started on the first job, imports :data:`PRELOAD` once (single-threaded: none of them
starts a thread on import) and forks every job from itself.

A forked job sees the environment the server started with, and the modules it preloaded
read some variables when imported (the Hub cache, offline mode). So the server is
restarted whenever the environment (variables, working folder, import path) or the
preload list differs from the one it started with -- never on a Space, whose environment
is fixed at launch. The exceptions are :data:`HANDED_TO_JOBS`: variables that libraries set
in the calling process as they run and read only when used, never when imported; a job is
handed the caller's values of those at its start instead.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.forkserver
import os
import sys
from typing import Any

PRELOAD = ("torch", "torchvision", "timm", "datasets", "hf_bgbench.space.jobs.running")
"""What a job imports anyway (``hf_bgbench.space.jobs.running`` brings gradio and every
task)."""

# pytest rewrites PYTEST_CURRENT_TEST for every test; open_clip's tokenizer sets
# TOKENIZERS_PARALLELISM when imported (the Space app imports it to check an open_clip id);
# torch's inductor sets TORCHINDUCTOR_CACHE_DIR the first time it is asked for its cache.
# Each was a restart of the server (about 10 CPU-seconds) for nothing.
HANDED_TO_JOBS = ("PYTEST_CURRENT_TEST", "TOKENIZERS_PARALLELISM", "TORCHINDUCTOR_CACHE_DIR")

_started_with: tuple | None = None  # what the running server started with (environment, preload)


def job_context() -> Any:
    """The multiprocessing context to start a job in: ``forkserver`` with :data:`PRELOAD`,
    restarted when the environment or :data:`PRELOAD` changed; ``spawn`` where the platform
    has no forkserver (Windows) or it cannot be restarted."""
    global _started_with
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    env = (*_environment(), tuple(PRELOAD))
    if env != _started_with:
        server = multiprocessing.forkserver._forkserver
        running = getattr(server, "_forkserver_pid", None) is not None
        if running and not hasattr(server, "_stop"):
            return multiprocessing.get_context("spawn")  # cannot restart it: spawn as before
        if running:
            server._stop()  # noqa: SLF001 -- the standard library's own way to restart it
        multiprocessing.set_forkserver_preload(list(PRELOAD))
        _started_with = env
    return multiprocessing.get_context("forkserver")


def _environment() -> tuple:
    """What the server hands every job: its variables, working folder and import path."""
    variables = sorted((k, v) for k, v in os.environ.items() if k not in HANDED_TO_JOBS)
    return tuple(variables), os.getcwd(), tuple(sys.path)


def handed_variables() -> dict[str, str | None]:
    """The caller's values of :data:`HANDED_TO_JOBS` (None: unset), for :func:`take_variables`
    in the job."""
    return {name: os.environ.get(name) for name in HANDED_TO_JOBS}


def take_variables(values: dict[str, str | None]) -> None:
    """In a job: set (or unset) the variables its caller handed it."""
    for name, value in values.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def start_job_server() -> None:
    """Start the job server now, so that it imports :data:`PRELOAD` while the Space starts
    rather than during its first visitor's job (measured on 2 CPU cores: an evaluate job of
    18 images took 8.7-10.3 s when spawned; forked from the server, 13.1 s for the job that
    started it, then 2.7-3.1 s)."""
    if job_context().get_start_method() == "forkserver":
        multiprocessing.forkserver.ensure_running()
