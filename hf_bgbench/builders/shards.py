"""Running a build's tasks (inline or in worker processes) and writing its Parquet shards.

Stage 2 of :mod:`hf_bgbench.benchmarks.in9.build` (every variant's shards) and the IN-9L config
live here; the per-shard work itself is :mod:`hf_bgbench.benchmarks.in9.pipeline`.
"""

from __future__ import annotations

import math
import multiprocessing
import os
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import cv2
import datasets
from tqdm.auto import tqdm

from hf_bgbench.benchmarks import BenchmarkSpec
from hf_bgbench.benchmarks.in9 import pipeline
from hf_bgbench.benchmarks.in9.choices import TAG_IN9L, balance
from hf_bgbench.builders.inputs import Photo
from hf_bgbench.data import hub
from hf_bgbench.data.schema import benchmark_features

IN9L_CONFIG = "in9l"
IN9L_MAX_SHARD_BYTES = 400 * 1024**2


class Runner:
    """Ordered map over tasks, inline (1 worker) or in a spawn pool of worker processes."""

    def __init__(self, workers: int, progress: bool) -> None:
        self.workers, self.progress = workers, progress
        self.pool = None

    def __enter__(self) -> Runner:
        if self.workers > 1:
            # spawn, not fork: the parent may hold threads (Arrow, OpenCV) that fork breaks.
            ctx = multiprocessing.get_context("spawn")
            self.pool = ctx.Pool(self.workers, initializer=pipeline.init_worker)
        else:
            self._threads = cv2.getNumThreads()
            pipeline.init_worker()
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


def write_variants(
    runner: Runner,
    rows: Mapping[str, Sequence[pipeline.Row]],
    spec: BenchmarkSpec,
    output: Path,
    work: Path,
    split: str,
    *,
    shard_size: int,
    image_format: str,
) -> dict[str, list[str]]:
    """Stage 2: render, encode and write every shard of every variant in ``rows``; finished
    shards (a resumed build) are skipped. Returns variant -> shard paths."""
    features = benchmark_features(
        spec.classes, with_mask=True, with_background=True, with_box_flag=True
    )
    shards: dict[str, list[str]] = {}
    pending = []
    for variant, variant_rows in rows.items():
        n = len(variant_rows)
        num = plan(n, shard_size)
        paths = hub.shard_paths(variant, split, num)
        shards[variant] = paths
        clear_stale(output, variant, split, paths)
        for index, (lo, hi) in enumerate(shard_bounds(n, num)):
            if not (output / paths[index]).is_file():
                task = pipeline.ShardTask(variant, variant_rows[lo:hi], str(work), image_format)
                pending.append(((variant, index, num), task))
    if pending:
        results = runner.map(
            pipeline.render_shard, [t for _, t in pending], "stage 2: write", unit="shard"
        )
        for ((variant, index, num), _), cols in zip(pending, results, strict=True):
            write_shard(output, variant, split, index, num, cols, features)
    return shards


def write_in9l(
    runner: Runner,
    photos: Sequence[Photo],
    spec: BenchmarkSpec,
    output: Path,
    *,
    seed: int,
    shard_size: int,
) -> dict[str, Any]:
    """IN-9L: every photo of the 370 classes (no box needed), balanced, bytes unchanged."""
    by_label: dict[int, list[str]] = defaultdict(list)
    for p in photos:
        by_label[p.label].append(p.id)
    balanced = balance(by_label, seed, TAG_IN9L)
    path_of = {p.id: p.path for p in photos}
    ordered = sorted((label, i) for label, ids in balanced.items() for i in ids)
    total = sum(os.path.getsize(path_of[i]) for _, i in ordered)
    num = max(plan(len(ordered), shard_size), math.ceil(total / IN9L_MAX_SHARD_BYTES))
    paths = hub.shard_paths(IN9L_CONFIG, "train", num)
    clear_stale(output, IN9L_CONFIG, "train", paths)
    features = benchmark_features(spec.classes)
    pending = [
        (index, pipeline.CopyTask(tuple((i, label, path_of[i]) for label, i in ordered[lo:hi])))
        for index, (lo, hi) in enumerate(shard_bounds(len(ordered), num))
        if not (output / paths[index]).is_file()
    ]
    if pending:
        results = runner.map(
            pipeline.copy_shard, [t for _, t in pending], "IN-9L: write", unit="shard"
        )
        for (index, _), cols in zip(pending, results, strict=True):
            write_shard(output, IN9L_CONFIG, "train", index, num, cols, features)
    names = spec.classes
    return {
        "kept": len(ordered),
        "per_class": {names[k]: len(v) for k, v in sorted(balanced.items())},
        "dropped_balancing": sum(len(by_label[k]) - len(v) for k, v in balanced.items()),
        "shards": paths,
    }
