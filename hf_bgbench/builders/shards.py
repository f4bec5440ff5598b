"""Running a build's tasks (inline or in worker processes) and writing its Parquet shards:
the machinery every builder and converter shares (each benchmark's per-shard work lives in
its folder)."""

from __future__ import annotations

import math
import multiprocessing
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import cv2
import datasets
from tqdm.auto import tqdm

from hf_bgbench.data import hub


def init_worker() -> None:
    """Pool initialiser: one OpenCV thread per process (the pool is the parallelism)."""
    cv2.setNumThreads(1)


class Runner:
    """Ordered map over tasks, inline (1 worker) or in a spawn pool of worker processes."""

    def __init__(
        self, workers: int, progress: bool, initializer: Callable[[], None] | None = None
    ) -> None:
        self.workers, self.progress = workers, progress
        self.initializer = initializer or init_worker
        self.pool = None

    def __enter__(self) -> Runner:
        if self.workers > 1:
            # spawn, not fork: the parent may hold threads (Arrow, OpenCV) that fork breaks.
            ctx = multiprocessing.get_context("spawn")
            self.pool = ctx.Pool(self.workers, initializer=self.initializer)
        else:
            self._threads = cv2.getNumThreads()
            self.initializer()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.pool is not None:
            self.pool.terminate() if exc[0] else self.pool.close()
            self.pool.join()
        else:
            cv2.setNumThreads(self._threads)

    def map(self, fn: Callable, tasks: Sequence, desc: str, unit: str = "img") -> Iterator:
        # chunksize 1: a task is a whole photo or shard (tenths of a second or more), so
        # IPC is negligible and the last tasks spread evenly over the workers.
        it = self.pool.imap(fn, tasks, 1) if self.pool else map(fn, tasks)
        yield from tqdm(it, total=len(tasks), desc=desc, disable=not self.progress, unit=unit)


def shard_bounds(n: int, num_shards: int) -> list[tuple[int, int]]:
    """``(lo, hi)`` row ranges of ``num_shards`` near-equal shards of ``n`` rows."""
    return [(i * n // num_shards, (i + 1) * n // num_shards) for i in range(num_shards)]


def plan(n: int, per_shard: int) -> int:
    """How many shards ``n`` rows of at most ``per_shard`` take (at least one)."""
    return max(1, math.ceil(n / per_shard))


def write_shard(
    output: Path,
    config: str,
    split: str,
    index: int,
    num: int,
    cols: dict[str, list],
    features: datasets.Features,
) -> None:
    """Write ``cols`` as shard ``index`` of ``num`` of ``config``/``split`` (Hub layout)."""
    # One shard is a few seconds of work: datasets' own per-shard progress bars are noise
    # next to the build's bar, so they are silenced for the write (and restored after).
    was_disabled = datasets.utils.are_progress_bars_disabled()
    datasets.disable_progress_bars()
    try:
        ds = datasets.Dataset.from_dict(cols, features=features)
        hub.write_parquet_shard(ds, output, config, split, index, num)
    finally:
        if not was_disabled:
            datasets.enable_progress_bars()


def clear_stale(output: Path, config: str, split: str, keep: Sequence[str]) -> None:
    for shard in (output / "data" / config).glob(f"{split}-*.parquet"):
        if str(shard.relative_to(output)) not in keep:
            shard.unlink()
