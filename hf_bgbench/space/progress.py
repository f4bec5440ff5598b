"""Live progress of a Space job: the tasks' own progress bars, reported to a callback.

Every task reports progress through ``tqdm`` (``tqdm.auto``; one bar per variant, per
foreground batch, ...). :func:`track_tqdm` wraps ``tqdm.std.tqdm.update`` / ``close`` /
``__iter__`` -- the class every ``tqdm.auto`` bar derives from -- so each bar's description,
count and total reach ``report(desc, n, total)`` while it runs, throttled (a bar that is
iterated also reports when the loop starts, at 0). Counts are those tqdm shows: a bar with a
numeric ``unit_scale`` is scaled by it. The Space's job process sends these through its pipe
(:func:`hf_bgbench.space.safety.run_with_time_limit`) and the web page shows them with
``gr.Progress``. Bars must be enabled (``progress=True``): a disabled tqdm bar keeps no
description or count.

The text side of a zero-shot model (CLIP, SigLIP, open_clip) draws its own bar,
:data:`~hf_bgbench.models.heads.PROMPTS_STEP`, counted in classes (:data:`UNITS`).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from hf_bgbench.models.heads import PROMPTS_STEP

ProgressReport = Callable[[str, int, "int | None"], None]
MIN_INTERVAL = 0.5  # seconds between two reports of one bar (the last one always goes)
UNITS = {PROMPTS_STEP: "classes"}
"""What a step counts, by its name (any other: images)."""

_LOCK = threading.Lock()


@contextmanager
def track_tqdm(report: ProgressReport, min_interval: float = MIN_INTERVAL) -> Iterator[None]:
    """While active, every tqdm bar's progress goes to ``report(desc, n, total)``."""
    from tqdm import std

    # the wrapped methods are the class's own, so one tracker at a time; a second job in
    # the same process (concurrency above 1) runs untracked rather than waiting
    if not _LOCK.acquire(blocking=False):
        yield
        return
    original_update, original_close = std.tqdm.update, std.tqdm.close
    original_iter = std.tqdm.__iter__
    last: dict[int, float] = {}

    def send(bar: Any, force: bool) -> None:
        now = time.monotonic()
        if force or now - last.get(id(bar), 0.0) >= min_interval:
            last[id(bar)] = now
            total = getattr(bar, "total", None)
            scale = _scale(bar)
            report(
                str(getattr(bar, "desc", "") or ""),
                int(getattr(bar, "n", 0) * scale),
                int(total * scale) if total else None,
            )

    def update(self: Any, n: float | None = 1) -> Any:
        out = original_update(self, n)
        if not getattr(self, "disable", False):
            send(self, force=False)
        return out

    def close(self: Any) -> Any:
        if not getattr(self, "disable", False):
            send(self, force=True)  # the final count (a fast loop may never have reported)
        last.pop(id(self), None)
        return original_close(self)

    def iterate(self: Any) -> Iterator[Any]:
        if not getattr(self, "disable", False):
            send(self, force=True)  # the step starts: shown at 0
        yield from original_iter(self)

    std.tqdm.update, std.tqdm.close, std.tqdm.__iter__ = update, close, iterate
    try:
        yield
    finally:
        std.tqdm.update, std.tqdm.close = original_update, original_close
        std.tqdm.__iter__ = original_iter
        _LOCK.release()


def _scale(bar: Any) -> float:
    """tqdm's ``unit_scale`` when it scales the counts (a number other than 0 and 1; True
    only adds SI prefixes), else 1."""
    scale = getattr(bar, "unit_scale", False)
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or scale in (0, 1):
        return 1
    return scale


def progress_fraction(n: int, total: int | None) -> float | None:
    """``n / total`` in [0, 1], or None when the total is unknown."""
    if not total:
        return None
    return max(0.0, min(1.0, n / total))


def page_progress(progress: Callable[..., Any]) -> ProgressReport:
    """A :data:`ProgressReport` that drives a ``gr.Progress`` (``progress((n, total), desc=...)``;
    an unknown total shows the description alone)."""

    def report(desc: str, n: int, total: int | None) -> None:
        progress(
            (n, total) if total else None, desc=desc or "scoring", unit=UNITS.get(desc, "images")
        )

    return report


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
    ):
        # ``limited``: what the limit applies to ("each model's run" for a comparison)
        self.title, self.limit, self.clock, self.limited = title, limit, clock, limited
        self.started = clock()
        self.current = "starting"
        self.step: tuple[str, int, int | None] | None = None
        self._first: dict[str, tuple[float, int]] = {}  # bar -> (time, count) first seen
        self._recent: dict[str, deque[tuple[float, int]]] = {}  # bar -> its last updates
        self.steps_done = 0

    def stage(self, text: str) -> None:
        self.current, self.step = text, None

    def bar(self, desc: str, n: int, total: int | None) -> None:
        desc = desc or "scoring"
        if desc not in self._first:
            if self.step is not None and self.step[0] != desc:
                self.steps_done += 1
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
            step = f"step {self.steps_done + 1}, " if self.steps_done else ""
            text = f"Now: {step}{desc} — {n}/{total}" if total else f"Now: {step}{desc} — {n}"
            if share is not None:
                text += f" ({100 * share:.0f}%)"
            eta = self.eta()
            if eta is not None:
                text += f", about {_duration(max(eta, 1))} left in this step"
            lines.append(text)
        lines.append(
            f"{_duration(elapsed)} since the start; this Space stops {self.limited} after "
            f"{_duration(self.limit)}."
        )
        return "\n\n".join(lines)


class JobTimes:
    """How long this Space's recent jobs took (seconds, the newest ``keep``): what a queued
    visitor's estimate is made of -- this Space's own hardware and jobs, not a guess."""

    def __init__(self, keep: int = 20) -> None:
        from collections import deque

        self.recent: deque[float] = deque(maxlen=keep)

    def add(self, seconds: float) -> None:
        self.recent.append(float(seconds))

    def median(self) -> float | None:
        """The median of the recent jobs' times (None before any finished)."""
        if not self.recent:
            return None
        ordered = sorted(self.recent)
        mid = len(ordered) // 2
        return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def queue_message(running: int, waiting: int, times: JobTimes, limit: float) -> str:
    """What a visitor whose job joins the queue behind ``running`` running and ``waiting``
    waiting jobs is told: their place, and an estimate of the wait from the median of this
    Space's recent job times (said as unknown until a job has finished)."""
    ahead = running + waiting
    behind = " and ".join(
        f"{n} {what}" for n, what in ((running, "running"), (waiting, "waiting")) if n
    )
    place = (
        f"**Queued:** your job is number {waiting + 1} in line, behind {behind} "
        f"job{'s' if ahead != 1 else ''}."
    )
    median = times.median()
    if median is None:
        estimate = (
            "No estimate yet: no job has finished since this Space started; each runs at "
            f"most {_duration(limit)}."
        )
    else:
        n = len(times.recent)
        took = f"last {n} jobs took" if n > 1 else "last job took"
        estimate = (
            f"It should start in about {_duration(max(ahead * median, 1))} (this Space's "
            f"{took} {_duration(max(median, 1))}{' at the median' if n > 1 else ''})."
        )
    return f"{place}\n\n{estimate} It starts by itself; this line then shows its progress."
