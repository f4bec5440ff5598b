"""What a visitor reads while a job waits or runs: the status line's Markdown
(:class:`JobStatus`: the stage, the step's progress bar and an estimate of the time it still
needs, the clock against the time limit, and whether the job can still finish), and a
queued visitor's place in line with an estimate from this Space's own recent job times
(:class:`JobTimes`, :func:`queue_message`). No Gradio here.
"""

from __future__ import annotations

import heapq
import time
from collections import deque
from collections.abc import Callable, Sequence

from hf_bgbench.space.jobs.progress import progress_fraction


def _duration(seconds: float) -> str:
    """``seconds`` for a reader: "45 s", "3 min 20 s", "1 h 05 min"."""
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {(seconds % 3600) // 60:02d} min"


RECENT_UPDATES = 8
"""Progress updates a step's recent pace is read from (the early stop waits for them)."""


class JobStatus:
    """What a visitor sees while a job runs, in one Markdown block: what runs, its current
    stage, the progress bar of the step it is in (count, share, an estimate of the time the
    step still needs from its rate so far), the time since the start and the time limit.

    ``stage(text)`` names a stage of the Space's own (checking, loading, drawing);
    ``bar(desc, n, total)`` takes a task's progress bar (:data:`ProgressReport`)."""

    def __init__(
        self,
        title: str,
        limit: float,
        clock: Callable[[], float] = time.monotonic,
        limited: str = "a job",
        steps: int | None = None,
    ):
        # ``limited``: what the limit applies to ("each model's run" for a comparison);
        # ``steps``: how many progress bars the job runs, when known (evaluate: one a variant)
        self.title, self.limit, self.clock, self.limited = title, limit, clock, limited
        self.steps = steps
        self.step_seconds: list[float] = []  # how long each finished step took
        self.started = clock()
        self.current = "starting"
        self.step: tuple[str, int, int | None] | None = None
        self._first: dict[str, tuple[float, int]] = {}  # bar -> (time, count) first seen
        self._recent: dict[str, deque[tuple[float, int]]] = {}  # bar -> its last updates

    @property
    def steps_done(self) -> int:
        return len(self.step_seconds)

    def stage(self, text: str) -> None:
        self.current, self.step = text, None

    def bar(self, desc: str, n: int, total: int | None) -> None:
        desc = desc or "scoring"
        if desc not in self._first:
            if self.step is not None and self.step[0] != desc:
                self.step_seconds.append(self.clock() - self._first[self.step[0]][0])
            self._first[desc] = (self.clock(), n)
            self._recent[desc] = deque(maxlen=RECENT_UPDATES)
        self._recent[desc].append((self.clock(), n))
        self.current, self.step = "running", (desc, n, total)

    def eta(self) -> float | None:
        """Seconds the current step still needs at its rate so far (None: unknown)."""
        if self.step is None:
            return None
        desc, n, total = self.step
        t0, n0 = self._first[desc]
        spent = self.clock() - t0
        if not total or n <= n0 or spent <= 0:
            return None
        return (total - n) * spent / (n - n0)

    def steady_eta(self) -> float | None:
        """Seconds the current step still needs at its recent pace: the rate over the
        second half of its last :data:`RECENT_UPDATES` updates, once it has that many (None
        before: a step's first batches are slow -- workers start, a model warms up -- and
        its pace from the start would overstate what is left)."""
        if self.step is None:
            return None
        desc, n, total = self.step
        recent = self._recent[desc]
        if not total or len(recent) < RECENT_UPDATES:
            return None
        (t0, n0), (t1, n1) = recent[len(recent) // 2], recent[-1]
        if n1 <= n0 or t1 <= t0:
            return None
        return (total - n) * (t1 - t0) / (n1 - n0)

    def whole_eta(self) -> float | None:
        """Seconds the whole job still needs, once measurable: the current step's estimate
        plus the steps not begun at the mean time of those finished (None: the number of
        steps is not known, or no step has finished yet)."""
        eta = self.eta()
        if not self.steps or not self.step_seconds or eta is None:
            return None
        left = max(self.steps - self.steps_done - 1, 0)
        return eta + left * sum(self.step_seconds) / len(self.step_seconds)

    def cannot_finish(self, left: float, settle: float) -> str:
        """Why the job cannot finish in the ``left`` seconds it has ("" while it may): the
        step it is in has run ``settle`` seconds at least and has a recent pace, and even
        the more hopeful of its two estimates (from the start; recent) says that step alone
        needs more -- a lower bound on the work left, so stopping now only spares the wait."""
        estimates = [e for e in (self.eta(), self.steady_eta()) if e is not None]
        if len(estimates) < 2 or self.step is None:
            return ""
        eta, desc = min(estimates), self.step[0]
        if self.clock() - self._first[desc][0] < settle or eta <= left:
            return ""
        return (
            f"The job was stopped early: at its pace so far, its step {desc} alone needs "
            f"about {_duration(eta)} more, and only {_duration(max(left, 0))} of this "
            f"Space's limit of {_duration(self.limit)} is left, so it could not finish."
        )

    def markdown(self) -> str:
        elapsed = self.clock() - self.started
        lines = [f"**{self.title}**"]
        if self.step is None:
            lines.append(f"Now: {self.current} …")
        else:
            desc, n, total = self.step
            share = progress_fraction(n, total)
            of = f" of {self.steps}" if self.steps else ""
            step = f"step {self.steps_done + 1}{of}, " if self.steps_done or self.steps else ""
            text = f"Now: {step}{desc} — {n}/{total}" if total else f"Now: {step}{desc} — {n}"
            if share is not None:
                text += f" ({100 * share:.0f}%)"
            eta = self.eta()
            if eta is not None:
                text += f", about {_duration(max(eta, 1))} left in this step"
            whole = self.whole_eta()
            if whole is not None:
                text += f"; about {_duration(max(whole, 1))} left in all"
            lines.append(text)
        lines.append(
            f"{_duration(elapsed)} since the start; this Space stops {self.limited} after "
            f"{_duration(self.limit)}."
        )
        return "\n\n".join(lines)


class JobTimes:
    """How long this Space's recent jobs took (seconds, the newest ``keep``), and since when
    the running ones run: what a queued visitor's estimate is made of -- this Space's own
    hardware and jobs, not a guess."""

    def __init__(self, keep: int = 20, clock: Callable[[], float] = time.monotonic) -> None:
        self.recent: deque[float] = deque(maxlen=keep)
        self.clock = clock
        self.starts: dict[object, float] = {}

    def add(self, seconds: float) -> None:
        self.recent.append(float(seconds))

    def median(self) -> float | None:
        """The median of the recent jobs' times (None before any finished)."""
        if not self.recent:
            return None
        ordered = sorted(self.recent)
        mid = len(ordered) // 2
        return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2

    def started(self) -> object:
        """Note that a job starts now; hand the token to :meth:`ended` when it ends."""
        token = object()
        self.starts[token] = self.clock()
        return token

    def ended(self, token: object) -> None:
        self.starts.pop(token, None)

    def running_for(self, running: int) -> list[float]:
        """How long each of the ``running`` jobs the queue holds has run, the newest starts
        (a job cancelled mid-step may end its record late; the queue's count is the truth)."""
        now = self.clock()
        newest = sorted(self.starts.values())[-running:] if running > 0 else []
        return [now - start for start in newest]


def wait_estimate(running_for: Sequence[float], ahead: int, median: float, slots: int) -> float:
    """Seconds until a job behind ``ahead`` waiting jobs starts, when ``slots`` jobs run at
    once, the running ones have run ``running_for`` seconds and a job takes ``median``: each
    slot frees when its job ends (a job past the median is taken to end now), and each job
    ahead takes the slot that frees first."""
    free = [max(median - ran, 0.0) for ran in running_for]
    free += [0.0] * max(slots - len(free), 0)
    heapq.heapify(free)
    for _ in range(ahead):
        heapq.heappush(free, heapq.heappop(free) + median)
    return free[0]


def queue_message(
    running: int,
    waiting: int,
    times: JobTimes,
    limit: float,
    *,
    slots: int = 1,
    refreshed: float | None = None,
) -> str:
    """What a visitor whose job waits behind ``running`` running and ``waiting`` waiting jobs
    is told: their place, how long the running jobs have run, and an estimate of the wait
    from this Space's recent job times (said as unknown until a job has finished). With
    ``refreshed``, the seconds between two refreshes of the line."""
    ahead = running + waiting
    behind = " and ".join(
        f"{n} {what}" for n, what in ((running, "running"), (waiting, "waiting")) if n
    )
    lines = [
        f"**Queued:** your job is number {waiting + 1} in line, behind {behind} "
        f"job{'s' if ahead != 1 else ''}."
    ]
    ran = times.running_for(running)
    if ran:
        lines.append(
            f"The running job{'s have' if len(ran) > 1 else ' has'} run "
            + ", ".join(_duration(s) for s in sorted(ran, reverse=True))
            + "."
        )
    lines.append(_estimate(times, ran + [0.0] * (running - len(ran)), waiting, slots, limit))
    tail = "It starts by itself; this line then shows its progress."
    if refreshed is not None:
        tail += f" (This line is refreshed every {_duration(refreshed)}.)"
    return "\n\n".join([*lines[:-1], f"{lines[-1]} {tail}"])


def _estimate(
    times: JobTimes, running_for: list[float], waiting: int, slots: int, limit: float
) -> str:
    """The sentence with the estimated wait (or why there is none yet)."""
    median = times.median()
    if median is None:
        return (
            "No estimate yet: no job has finished since this Space started; each runs at "
            f"most {_duration(limit)}."
        )
    n = len(times.recent)
    took = f"last {n} jobs took" if n > 1 else "last job took"
    wait = wait_estimate(running_for, waiting, median, slots)
    overdue = any(ran >= median for ran in running_for)
    start = (
        f"It should start in about {_duration(max(wait, 1))}"
        if wait >= 1 or not overdue
        else (
            "It should start when the running job ends (it has run longer than usual; a job "
            f"here stops after at most {_duration(limit)})"
        )
    )
    return (
        f"{start} (this Space's {took} {_duration(max(median, 1))}"
        f"{' at the median' if n > 1 else ''})."
    )
