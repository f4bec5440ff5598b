"""Stage 2 of an IN-9 build (:mod:`.build`): every variant's shards, and the IN-9L config.

The per-shard work itself is :mod:`.pipeline` (run in worker processes by the generic
:class:`~hf_bgbench.builders.shards.Runner`).
"""

from __future__ import annotations

import math
import os
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hf_bgbench.benchmarks.in9 import pipeline
from hf_bgbench.benchmarks.in9.choices import TAG_IN9L, balance
from hf_bgbench.builders.inputs import Photo
from hf_bgbench.builders.shards import Runner, clear_stale, plan, shard_bounds, write_shard
from hf_bgbench.data import hub
from hf_bgbench.data.schema import benchmark_features
from hf_bgbench.spec import BenchmarkSpec

IN9L_CONFIG = "in9l"
IN9L_MAX_SHARD_BYTES = 400 * 1024**2


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
