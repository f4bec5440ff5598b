"""Live progress of a Space job: the tasks' own progress bars, reported to a callback.

Every task reports progress through ``tqdm`` (``tqdm.auto``; one bar per variant, per
foreground batch, ...). :func:`track_tqdm` wraps ``tqdm.std.tqdm.update`` / ``close`` /
``__iter__`` -- the class every ``tqdm.auto`` bar derives from -- so each bar's description,
count and total reach ``report(desc, n, total)`` while it runs, throttled (a bar that is
iterated also reports when the loop starts, at 0). Counts are those tqdm shows: a bar with a
numeric ``unit_scale`` is scaled by it. The Space's job process sends these through its pipe
(:class:`hf_bgbench.space.jobs.process.Job`) and the web page shows them with
``gr.Progress``. Bars must be enabled (``progress=True``): a disabled tqdm bar keeps no
description or count.

The text side of a zero-shot model (CLIP, SigLIP, open_clip) draws its own bar,
:data:`~hf_bgbench.models.heads.PROMPTS_STEP`, counted in classes (:data:`UNITS`).
"""

from __future__ import annotations

import threading
import time
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
