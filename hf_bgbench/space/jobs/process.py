"""A job in a process of its own: polled in short ticks (so the caller can show progress
and notice a visitor who left), killed at its time limit or when stopped -- with every
process it started, its own session -- its progress bars reported back as they advance.

:class:`Job` (a process forked from the job server, :mod:`hf_bgbench.space.jobs.forkserver`),
:class:`ThreadJob` (the same in a thread, for ZeroGPU and tests), :func:`run_with_time_limit`
(one call, waited for). No Gradio here.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import pickle
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from hf_bgbench.space.checks.messages import SpaceRefusal
from hf_bgbench.space.jobs.forkserver import handed_variables, job_context, take_variables


class JobTimeout(SpaceRefusal):
    """A job ran past the Space's time limit and was stopped."""


PARENT_POLL_SECONDS = 1.0


def watch_caller(caller: int, poll: float = PARENT_POLL_SECONDS) -> threading.Thread:
    """End this job's whole process group as soon as ``caller`` (the Space's process that
    asked for it; the job itself is forked from the job server, which outlives the Space
    for a while) is gone -- the Space stopped or restarted -- instead of running on into
    its next task with nobody to read it. A daemon thread that checks every ``poll``
    seconds."""

    def alive() -> bool:
        try:
            os.kill(caller, 0)
        except ProcessLookupError:
            return False
        except PermissionError:  # there, under another user
            return True
        return True

    def watch() -> None:
        while alive():
            time.sleep(poll)
        os.killpg(os.getpgrp(), signal.SIGKILL)

    thread = threading.Thread(target=watch, name="bgbench-parent-watch", daemon=True)
    thread.start()
    return thread


def _child(
    conn: Any,
    fn: Callable[..., Any],
    args: tuple,
    kwargs: dict,
    track: bool,
    variables: dict[str, str | None],
    caller: int,
) -> None:
    take_variables(variables)  # the caller's, where the server's may be older
    # a session (and process group) of its own: stopping the job ends every process it started
    # (data-loader workers included), which would otherwise outlive it, re-parented
    os.setsid()
    watch_caller(caller)
    # Started by forkserver (or spawn), this process would start its own children that way
    # too (it makes itself the default start method): every data-loader worker would import
    # the whole stack again, the Space's app included -- about 8 CPU-seconds a worker, per
    # loader, on 2 vCPU. The platform's default (fork on Linux), as in a command-line run.
    multiprocessing.set_start_method(None, force=True)
    from hf_bgbench.space.jobs.progress import track_tqdm

    def report(desc: str, n: int, total: int | None) -> None:
        conn.send(("progress", (desc, n, total)))

    try:
        if track:
            with track_tqdm(report):
                result: tuple[str, Any] = ("ok", fn(*args, **kwargs))
        else:
            result = ("ok", fn(*args, **kwargs))
    except BaseException as err:  # sent back whole; the parent decides what to show
        try:
            pickle.dumps(err)
            result = ("err", err)
        except Exception:
            result = ("err", RuntimeError(f"{type(err).__name__}: {err}"))
    conn.send(result)
    conn.close()


TIME_LIMIT_MESSAGE = (
    "The job took longer than this Space's limit of {seconds:g} seconds and was stopped."
)


class Job:
    """``fn(*args, **kwargs)`` in a fresh process (``fn`` importable by name), within
    ``seconds``. Use it as a context manager -- leaving the block, by any path (an error, a
    generator closed because its visitor left), kills the process -- and drive it with
    :meth:`updates`, which returns at least every ``tick`` seconds so the caller can show
    progress and check that anyone still waits for the result. ``hint``: one sentence added
    to the time-limit message (what the visitor can change)."""

    def __init__(
        self,
        fn: Callable[..., Any],
        args: tuple = (),
        kwargs: dict | None = None,
        *,
        seconds: float,
        track: bool = True,
        hint: str = "",
    ) -> None:
        self.fn, self.args, self.kwargs = fn, args, dict(kwargs or {})
        self.seconds, self.track, self.hint = seconds, track, hint
        self._proc: Any = None
        self._conn: Any = None
        self._outcome: tuple[str, Any] | None = None
        self._starting: threading.Thread | None = None
        self._start_error: BaseException | None = None
        self.started = 0.0

    def __enter__(self) -> Job:
        """Start the process in a thread of its own: the first job of a fresh Space waits
        for the job server to import its stack (18 s seen), and :meth:`updates` keeps
        yielding ticks meanwhile, so the status line's clock moves instead of saying 0 s."""
        self._starting = threading.Thread(target=self._start, daemon=True)
        self._starting.start()
        return self

    def _start(self) -> None:
        try:
            ctx = job_context()  # forked from a server that imported the stack once
            parent, child = ctx.Pipe(duplex=False)
            # not a daemon: the job may start data-loader workers of its own
            self._proc = ctx.Process(
                target=_child,
                args=(
                    child,
                    self.fn,
                    self.args,
                    self.kwargs,
                    self.track,
                    handed_variables(),
                    os.getpid(),
                ),
                daemon=False,
            )
            self._proc.start()
            _LIVE.add(self._proc.pid)
            child.close()
            self._conn = parent
            self.started = time.monotonic()
        except BaseException as err:  # raised by updates(), in the caller's thread
            self._start_error = err

    def wait_started(self) -> None:
        """Block until the process has started (its error raised)."""
        for _ in self._started(1.0):
            pass

    def _started(self, tick: float) -> Iterator[None]:
        """None every ``tick`` seconds until the process has started; its error raised."""
        while self._starting is not None and self._starting.is_alive():
            self._starting.join(tick)
            if self._starting.is_alive():
                yield None
        if self._start_error is not None:
            raise self._start_error

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def stop(self) -> None:
        """Kill the job's process and every process it started (its session's process group:
        data-loader workers would otherwise live on), if any still runs; a process still
        being started is waited for first, so none is left running after its stop."""
        if self._starting is not None:
            self._starting.join()
        if self._proc is not None:
            end_group(self._proc.pid)
            if self._proc.is_alive():
                self._proc.kill()
            self._proc.join(5)
            end_group(self._proc.pid)  # a worker forked while the job was being killed
            _LIVE.discard(self._proc.pid)
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started if self.started else 0.0

    def updates(self, tick: float = 1.0) -> Iterator[tuple[str, int, int | None] | None]:
        """Until the job ends: each progress report ``(desc, n, total)`` as it arrives, and
        None after every ``tick`` seconds without one. :class:`JobTimeout` at the limit;
        :class:`SpaceRefusal` when the process dies without a result."""
        yield from self._started(tick)
        deadline = self.started + self.seconds
        while self._outcome is None:
            left = deadline - time.monotonic()
            if left <= 0:
                self.stop()
                raise JobTimeout(
                    " ".join(
                        filter(None, [TIME_LIMIT_MESSAGE.format(seconds=self.seconds), self.hint])
                    )
                )
            if not self._conn.poll(min(tick, left)):
                yield None
                continue
            try:
                status, value = self._conn.recv()
            except EOFError:
                raise SpaceRefusal(
                    "The job stopped without a result (it may have run out of memory). Try a "
                    "smaller model."
                ) from None
            if status == "progress":
                yield value
            else:
                self._outcome = (status, value)

    def result(self) -> Any:
        """What ``fn`` returned (its exception raised here as it was); after :meth:`updates`."""
        if self._outcome is None:
            raise RuntimeError("Job.result() before the job ended (iterate Job.updates() first).")
        status, value = self._outcome
        if status == "err":
            raise value
        return value


_LIVE: set[int] = set()  # process groups of the jobs not stopped yet


@atexit.register
def _end_live_jobs() -> None:
    # a job's session does not get the app's Ctrl-C, and multiprocessing would wait for it
    # at exit (registered before this, so it runs after it): end them with the app
    for pgid in list(_LIVE):
        end_group(pgid)


def end_group(pgid: int | None) -> None:
    """SIGKILL the process group ``pgid`` (a job's session, :func:`_child`); nothing when it
    is gone, or when the job had not yet made its own group (then it had started nothing)."""
    if not pgid:
        return
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class ThreadJob(Job):
    """A :class:`Job` run in a thread of this process: for hosts that enforce the time limit
    themselves (ZeroGPU's ``spaces.GPU(duration=...)``) and for tests. The same interface;
    :meth:`stop` cannot end a thread, so the work runs on to its end or the host's limit,
    while the caller stops waiting at once."""

    def __enter__(self) -> ThreadJob:
        import queue
        import threading

        from hf_bgbench.space.jobs.progress import track_tqdm

        self._inbox: queue.Queue = queue.Queue()

        def work() -> None:
            def report(desc: str, n: int, total: int | None) -> None:
                self._inbox.put(("progress", (desc, n, total)))

            try:
                if self.track:
                    with track_tqdm(report):
                        outcome: tuple[str, Any] = ("ok", self.fn(*self.args, **self.kwargs))
                else:
                    outcome = ("ok", self.fn(*self.args, **self.kwargs))
            except BaseException as err:
                outcome = ("err", err)
            self._inbox.put(outcome)

        self._thread = threading.Thread(target=work, daemon=True, name="bgbench-space-job")
        self.started = time.monotonic()
        self._thread.start()
        return self

    def stop(self) -> None:
        return None

    def updates(self, tick: float = 1.0) -> Iterator[tuple[str, int, int | None] | None]:
        import queue

        deadline = self.started + self.seconds
        while self._outcome is None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise JobTimeout(
                    " ".join(
                        filter(None, [TIME_LIMIT_MESSAGE.format(seconds=self.seconds), self.hint])
                    )
                )
            try:
                status, value = self._inbox.get(timeout=min(tick, left))
            except queue.Empty:
                yield None
                continue
            if status == "progress":
                yield value
            else:
                self._outcome = (status, value)


def run_with_time_limit(
    fn: Callable[..., Any],
    args: tuple = (),
    kwargs: dict | None = None,
    *,
    seconds: float,
    on_progress: Callable[[str, int, int | None], None] | None = None,
    hint: str = "",
) -> Any:
    """``fn(*args, **kwargs)`` in a fresh process (``fn`` importable by name), killed after
    ``seconds``: :class:`JobTimeout`. The function's exception is raised here as it was.
    ``on_progress(desc, n, total)`` receives the job's progress bars as they advance
    (:func:`hf_bgbench.space.jobs.progress.track_tqdm` in the job process)."""
    with Job(fn, args, kwargs, seconds=seconds, track=on_progress is not None, hint=hint) as job:
        for update in job.updates():
            if update is not None and on_progress is not None:
                on_progress(*update)
        return job.result()
