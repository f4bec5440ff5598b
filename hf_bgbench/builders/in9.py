"""Build the eight IN-9 variants (SPEC §1) from ImageNet photos and boxes, as a Hub repo folder.

``build_in9(BuildOptions(...))`` is what ``bgbench build in9`` and
``dataset_scripts/in9.py`` run. Steps:

1. find the photos and their classes (:mod:`hf_bgbench.builders.inputs`);
2. stage 1, in parallel: box -> crop filters -> GrabCut -> tiled background, per photo,
   cached under ``<output>/.bgbench-work/<split>/`` (:func:`pipeline.segment_image`);
3. balance the classes (seeded) and assign the backgrounds of the mixed variants (seeded);
4. stage 2, in parallel: render and encode each shard of each variant
   (:func:`pipeline.render_shard`); the parent writes it with :mod:`hf_bgbench.data.hub`;
5. write ``build_report.json`` and the dataset card.

Every random choice derives from ``--seed`` (balancing, backgrounds, the per-image GrabCut
RNG) and every ordering is sorted, so a build is byte-reproducible whatever ``--workers``.
Finished images and finished shards are skipped when a build is resumed.
"""

from __future__ import annotations

import hashlib
import json
import math
import multiprocessing
import os
import shutil
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import datasets
import numpy as np
from tqdm.auto import tqdm

from hf_bgbench.benchmarks import BenchmarkSpec, get_benchmark
from hf_bgbench.benchmarks.in9 import IN9_VARIANTS
from hf_bgbench.builders import pipeline
from hf_bgbench.builders.card import write_card
from hf_bgbench.builders.inputs import Photo, discover_photos
from hf_bgbench.data import hub
from hf_bgbench.data.schema import benchmark_features

SPLITS = {"val": "test", "train": "train"}
"""--split (which ImageNet split the photos come from) -> the split name written."""
LABEL_SPACES = {"in9": "in9", "imagenet": "in9_full"}
"""--label-space -> the benchmark spec whose classes label the rows."""
IN9L_CONFIG = "in9l"
WORK_DIRNAME = ".bgbench-work"
REPORT_NAME = "build_report.json"
REPORT_FORMAT = "bgbench-build-report/1"
IN9L_MAX_SHARD_BYTES = 400 * 1024**2

# Tags that give every random choice its own stream derived from the one seed.
_TAG_SUBSAMPLE, _TAG_BALANCE, _TAG_IN9L, _TAG_MIXED = 1, 2, 3, 4


class BuildError(ValueError):
    """A build cannot run as asked (conflicting options, a different earlier build, ...)."""


@dataclass
class BuildOptions:
    images: Path
    output: Path
    boxes: Path | None = None
    no_boxes: bool = False
    metadata: Path | None = None
    seed: int = 0
    workers: int = 1
    label_space: str = "in9"
    split: str = "val"
    image_format: str = "jpeg"
    shard_size: int = 1000
    limit_per_class: int | None = None
    variants: tuple[str, ...] = IN9_VARIANTS
    keep_work: bool = False
    overwrite: bool = False
    progress: bool = True

    def check(self) -> BenchmarkSpec:
        if self.label_space not in LABEL_SPACES:
            raise BuildError(f"--label-space must be one of {sorted(LABEL_SPACES)}.")
        if self.split not in SPLITS:
            raise BuildError(f"--split must be one of {sorted(SPLITS)}.")
        if self.image_format not in ("jpeg", "png"):
            raise BuildError("--image-format must be 'jpeg' or 'png'.")
        if self.boxes is None and not self.no_boxes:
            raise BuildError(
                "Give --boxes (PASCAL-VOC XML folder or CSV file,xmin,ymin,xmax,ymax) or "
                "--no-boxes (estimate a box for photos without one; rows are flagged)."
            )
        if self.workers < 1 or self.shard_size < 1:
            raise BuildError("--workers and --shard-size must be at least 1.")
        if self.limit_per_class is not None and self.limit_per_class < 1:
            raise BuildError("--limit-per-class must be at least 1.")
        spec = get_benchmark(LABEL_SPACES[self.label_space])
        spec.check_variants(self.variants)
        return spec


# --------------------------------------------------------------------------- choices


def _rng(seed: int, *tags: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([seed, *tags]))


def _pick(
    items_by_label: dict[int, list[str]], n: int, seed: int, tag: int
) -> dict[int, list[str]]:
    """Keep ``n`` seeded-random items of every label (each label its own stream)."""
    out = {}
    for label, items in sorted(items_by_label.items()):
        if len(items) <= n:
            out[label] = list(items)
        else:
            chosen = _rng(seed, tag, label).choice(len(items), size=n, replace=False)
            out[label] = [items[i] for i in sorted(chosen.tolist())]
    return out


def balance(ids_by_label: dict[int, list[str]], seed: int, tag: int = _TAG_BALANCE):
    """Drop seeded-random images from over-represented classes down to the smallest class.

    Classes with no image at all are left out of the minimum (and reported as missing), so a
    build from a partial photo collection still yields a balanced dataset.
    """
    present = {k: v for k, v in ids_by_label.items() if v}
    if not present:
        return {}
    return _pick(present, min(len(v) for v in present.values()), seed, tag)


def next_class(label: int, present: Sequence[int], num_classes: int) -> int:
    """``(label + 1) mod C``, skipping classes that have no image in this build."""
    have = set(present)
    for step in range(1, num_classes + 1):
        candidate = (label + step) % num_classes
        if candidate in have:
            return candidate
    return label


def assign_backgrounds(
    rows: Sequence[tuple[int, str]], num_classes: int, seed: int, variants: Iterable[str]
) -> dict[str, list[tuple[str, int]]]:
    """variant -> the ``(bg_id, bg_label)`` of every row, for the mixed variants asked for.

    ``rows`` are ``(label, id)`` sorted. mixed_same: a random *other* image of the same
    class; mixed_rand: a random other image of any class (classes are balanced, so the class
    is uniformly random too); mixed_next: a random image of class (y + 1) mod C.
    """
    by_label: dict[int, list[str]] = defaultdict(list)
    for label, image_id in rows:
        by_label[label].append(image_id)
    everyone = [image_id for _, image_id in rows]
    label_of = {image_id: label for label, image_id in rows}
    present = sorted(by_label)
    out = {}
    for index, variant in enumerate(IN9_VARIANTS):
        if variant not in variants or not variant.startswith("mixed_"):
            continue
        rng = _rng(seed, _TAG_MIXED, index)
        chosen = []
        for label, image_id in rows:
            if variant == "mixed_same":
                pool = by_label[label]
            elif variant == "mixed_rand":
                pool = everyone
            else:
                pool = by_label[next_class(label, present, num_classes)]
            others = [p for p in pool if p != image_id] or pool
            bg = others[int(rng.integers(len(others)))]
            chosen.append((bg, label_of[bg]))
        out[variant] = chosen
    return out


def shard_bounds(n: int, num_shards: int) -> list[tuple[int, int]]:
    return [(i * n // num_shards, (i + 1) * n // num_shards) for i in range(num_shards)]


# --------------------------------------------------------------------------- running


class _Runner:
    """Ordered map over tasks, inline (1 worker) or in a spawn pool of worker processes."""

    def __init__(self, workers: int, progress: bool):
        self.workers, self.progress = workers, progress
        self.pool = None

    def __enter__(self) -> _Runner:
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


# --------------------------------------------------------------------------- report helpers


def _photos_digest(photos: Sequence[Photo]) -> str:
    h = hashlib.sha256()
    for p in photos:
        h.update(f"{p.id}\t{p.wnid}\t{os.path.getsize(p.path)}\n".encode())
    return h.hexdigest()


def read_report(output: Path) -> dict[str, Any]:
    path = Path(output) / REPORT_NAME
    if not path.is_file():
        return {}
    return json.loads(path.read_text(encoding="utf-8"))


def write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def _box_source_kind(options: BuildOptions) -> str:
    if options.boxes is None:
        return "estimated"
    kind = "csv" if Path(options.boxes).is_file() else "voc-xml"
    return f"{kind}+estimated" if options.no_boxes else kind


# --------------------------------------------------------------------------- the build


def build_in9(options: BuildOptions) -> dict[str, Any]:
    """Build (or resume) one split of IN-9 into ``options.output``; returns its report."""
    spec = options.check()
    output = Path(options.output)
    split = SPLITS[options.split]
    output.mkdir(parents=True, exist_ok=True)
    report = read_report(output)
    if report and report.get("benchmark") != spec.name:
        raise BuildError(
            f"{output} holds a {report.get('benchmark')} build; this is {spec.name} "
            "(--label-space). Use another --output."
        )

    photos, skipped = discover_photos(
        options.images, options.label_space, options.metadata, options.boxes
    )
    found = len(photos)
    photos, subsampled = _limit(photos, options.limit_per_class, options.seed)
    params = {
        "benchmark": spec.name,
        "split": split,
        "seed": options.seed,
        "label_space": options.label_space,
        "boxes": _box_source_kind(options),
        "image_format": options.image_format,
        "shard_size": options.shard_size,
        "limit_per_class": options.limit_per_class,
        "variants": list(options.variants),
        "photos_sha256": _photos_digest(photos),
    }
    work = output / WORK_DIRNAME / split
    _check_previous(output, report, split, params, work, options)
    previous = report.get("splits", {}).get(split)
    if previous and previous["parameters"] == params and _shards_exist(output, previous):
        print(f"{output}: split {split!r} is already built with these inputs; nothing to do.")
        return previous

    work.mkdir(parents=True, exist_ok=True)
    write_json(work / "params.json", params)
    split_report: dict[str, Any] = {"parameters": params, "photos_found": found}
    split_report["skipped"] = dict(sorted(skipped.items()))
    split_report["subsampled_out"] = subsampled

    with _Runner(options.workers, options.progress) as runner:
        rows, stage1 = _stage1(runner, photos, options, spec, work)
        split_report.update(stage1)
        split_report["shards"] = _stage2(runner, rows, options, spec, output, work, split)
        if split == "train" and options.label_space == "in9":
            split_report["in9l"] = _build_in9l(runner, photos, options, spec, output)

    report = read_report(output) or {"format": REPORT_FORMAT, "benchmark": spec.name}
    report.setdefault("splits", {})[split] = split_report
    write_json(output / REPORT_NAME, report)
    write_card(output, spec, report)
    if not options.keep_work:
        shutil.rmtree(work, ignore_errors=True)
        if not any((output / WORK_DIRNAME).iterdir()):
            (output / WORK_DIRNAME).rmdir()
    return split_report


def _limit(photos: list[Photo], limit: int | None, seed: int) -> tuple[list[Photo], int]:
    """``--limit-per-class``: a seeded random subset of at most ``limit`` photos per class."""
    if limit is None:
        return photos, 0
    by_label: dict[int, list[str]] = defaultdict(list)
    for p in photos:
        by_label[p.label].append(p.id)
    keep = {i for ids in _pick(by_label, limit, seed, _TAG_SUBSAMPLE).values() for i in ids}
    return [p for p in photos if p.id in keep], len(photos) - len(keep)


def _check_previous(output, report, split, params, work, options) -> None:
    """Refuse to mix a new build with a different earlier one, unless --overwrite."""
    previous = report.get("splits", {}).get(split)
    work_params = work / "params.json"
    stale = (previous is not None and previous["parameters"] != params) or (
        work_params.is_file() and json.loads(work_params.read_text()) != params
    )
    if stale and not options.overwrite:
        raise BuildError(
            f"{output} already holds a {split!r} build with other inputs or options "
            f"(see {REPORT_NAME} / {work_params}); use --overwrite or another --output."
        )
    if stale or options.overwrite:
        shutil.rmtree(work, ignore_errors=True)
        for shard in (output / "data").glob(f"*/{split}-*.parquet"):
            shard.unlink()


def _shards_exist(output: Path, split_report: dict[str, Any]) -> bool:
    paths = [p for ps in split_report.get("shards", {}).values() for p in ps]
    paths += split_report.get("in9l", {}).get("shards", [])
    return all((output / p).is_file() for p in paths)


def _stage1(runner, photos, options, spec, work):
    """Segment every photo; balance; assign backgrounds. Returns (rows, report fields)."""
    tasks = [
        pipeline.SegmentTask(
            id=p.id,
            path=p.path,
            wnid=p.wnid,
            seed=options.seed,
            boxes=str(options.boxes) if options.boxes else None,
            estimate_missing=options.no_boxes,
            cache=str(work / f"{p.id}.npz"),
        )
        for p in photos
    ]
    label_of = {p.id: p.label for p in photos}
    dropped: Counter = Counter({reason: 0 for reason in pipeline.DROP_REASONS})
    kept: dict[int, list[str]] = defaultdict(list)
    estimated, retried = set(), 0
    for image_id, status, box_estimated, attempts in runner.map(
        pipeline.segment_image, tasks, desc="stage 1: segment"
    ):
        if status != pipeline.KEPT:
            dropped[status] += 1
            continue
        kept[label_of[image_id]].append(image_id)
        retried += attempts > 1
        if box_estimated:
            estimated.add(image_id)
    balanced = balance(kept, options.seed)
    dropped["balancing"] = sum(len(kept[k]) - len(v) for k, v in balanced.items())
    ordered = sorted((label, i) for label, ids in balanced.items() for i in ids)
    backgrounds = assign_backgrounds(ordered, spec.num_classes, options.seed, options.variants)
    rows = {}
    for variant in options.variants:
        bgs = backgrounds.get(variant)
        rows[variant] = tuple(
            pipeline.Row(
                id=image_id,
                label=label,
                bg_id=bgs[n][0] if bgs else "",
                bg_label=bgs[n][1] if bgs else -1,
                box_estimated=image_id in estimated,
            )
            for n, (label, image_id) in enumerate(ordered)
        )
    names = spec.classes
    fields = {
        "dropped": dict(sorted(dropped.items())),
        "available_per_class": {names[k]: len(v) for k, v in sorted(kept.items())},
        "kept": len(ordered),
        "per_class": {names[k]: len(v) for k, v in sorted(balanced.items())},
        "classes_missing": [n for k, n in enumerate(names) if k not in balanced],
        "box_estimated": sum(1 for _, i in ordered if i in estimated),
        "grabcut_retried": retried,
    }
    return rows, fields


def _plan(n: int, per_shard: int) -> int:
    return max(1, math.ceil(n / per_shard))


def _write(output: Path, config: str, split: str, index: int, num: int, cols, features) -> None:
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


def _clear_stale(output: Path, config: str, split: str, keep: Sequence[str]) -> None:
    for shard in (output / "data" / config).glob(f"{split}-*.parquet"):
        if str(shard.relative_to(output)) not in keep:
            shard.unlink()


def _stage2(runner, rows, options, spec, output, work, split) -> dict[str, list[str]]:
    """Render, encode and write every shard of every variant; skip finished shards."""
    features = benchmark_features(
        spec.classes, with_mask=True, with_background=True, with_box_flag=True
    )
    shards: dict[str, list[str]] = {}
    pending = []
    for variant in options.variants:
        n = len(rows[variant])
        num = _plan(n, options.shard_size)
        paths = hub.shard_paths(variant, split, num)
        shards[variant] = paths
        _clear_stale(output, variant, split, paths)
        for index, (lo, hi) in enumerate(shard_bounds(n, num)):
            if not (output / paths[index]).is_file():
                task = pipeline.ShardTask(
                    variant, rows[variant][lo:hi], str(work), options.image_format
                )
                pending.append(((variant, index, num), task))
    if pending:
        results = runner.map(
            pipeline.render_shard, [t for _, t in pending], "stage 2: write", unit="shard"
        )
        for ((variant, index, num), _), cols in zip(pending, results, strict=True):
            _write(output, variant, split, index, num, cols, features)
    return shards


def _build_in9l(runner, photos, options, spec, output) -> dict[str, Any]:
    """IN-9L: every photo of the 370 classes (no box needed), balanced, bytes unchanged."""
    by_label: dict[int, list[str]] = defaultdict(list)
    for p in photos:
        by_label[p.label].append(p.id)
    balanced = balance(by_label, options.seed, _TAG_IN9L)
    path_of = {p.id: p.path for p in photos}
    ordered = sorted((label, i) for label, ids in balanced.items() for i in ids)
    total = sum(os.path.getsize(path_of[i]) for _, i in ordered)
    num = max(_plan(len(ordered), options.shard_size), math.ceil(total / IN9L_MAX_SHARD_BYTES))
    paths = hub.shard_paths(IN9L_CONFIG, "train", num)
    _clear_stale(output, IN9L_CONFIG, "train", paths)
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
            _write(output, IN9L_CONFIG, "train", index, num, cols, features)
    names = spec.classes
    return {
        "kept": len(ordered),
        "per_class": {names[k]: len(v) for k, v in sorted(balanced.items())},
        "dropped_balancing": sum(len(by_label[k]) - len(v) for k, v in balanced.items()),
        "shards": paths,
    }


def summary_lines(report: dict[str, Any], max_classes: int = 12) -> list[str]:
    """A few lines for the terminal after a build."""
    per_class = list(report["per_class"].items())
    shown = ", ".join(f"{k} {v}" for k, v in per_class[:max_classes])
    more = f", ... ({len(per_class)} classes)" if len(per_class) > max_classes else ""
    lines = [f"kept {report['kept']} images per variant ({shown}{more})"]
    dropped = {k: v for k, v in report["dropped"].items() if v}
    if dropped:
        lines.append("dropped: " + ", ".join(f"{k} {v}" for k, v in dropped.items()))
    if report.get("box_estimated"):
        lines.append(f"{report['box_estimated']} images have an estimated box (box_estimated)")
    if report.get("classes_missing"):
        lines.append(f"no image survived for {len(report['classes_missing'])} class(es)")
    return lines
