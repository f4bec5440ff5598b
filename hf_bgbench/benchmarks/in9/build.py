"""Build the eight IN-9 variants (SPEC §1) from ImageNet photos and boxes, as a Hub repo folder.

``build_in9(BuildOptions(...), spec)`` is what ``bgbench build in9`` and
``dataset_scripts/in9.py`` run (``spec``: the in9 spec, or in9_full for the 1000 ImageNet
classes). Steps:

1. find the photos and their classes (:mod:`hf_bgbench.builders.inputs`);
2. stage 1, in parallel: box -> crop filters -> GrabCut -> tiled background, per photo,
   cached under ``<output>/.bgbench-work/<split>/`` (:func:`pipeline.segment_image`);
3. drop photos that a requested mixed variant has no other background photo for (e.g. the
   only photo of its class, for mixed_same), balance the classes (seeded) and assign the
   backgrounds of the mixed variants (seeded; :mod:`hf_bgbench.benchmarks.in9.choices`);
4. stage 2, in parallel: render and encode each shard of each variant
   (:func:`pipeline.render_shard`, :mod:`.shards`); the parent writes it in the Hub layout;
5. write ``build_report.json`` and the dataset card.

A build that keeps no photo fails with :class:`BuildError` and writes nothing.

Every random choice derives from ``--seed`` (balancing, backgrounds, the per-image GrabCut
RNG) and every ordering is sorted, so a build is byte-reproducible whatever ``--workers``.
Finished images and finished shards are skipped when a build is resumed.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hf_bgbench.benchmarks.in9 import pipeline
from hf_bgbench.benchmarks.in9.card import DROP_TEXT, write_card
from hf_bgbench.benchmarks.in9.choices import (
    TAG_SUBSAMPLE,
    assign_backgrounds,
    balance,
    lacking_background,
    pick,
)
from hf_bgbench.benchmarks.in9.shards import write_in9l, write_variants
from hf_bgbench.benchmarks.in9.variants import IN9_LAYOUT, IN9_VARIANTS
from hf_bgbench.builders.inputs import Photo, discover_photos
from hf_bgbench.builders.report import (
    REPORT_FORMAT,
    REPORT_NAME,
    WORK_DIRNAME,
    read_report,
    write_json,
)
from hf_bgbench.builders.shards import Runner
from hf_bgbench.files import decode_settings, ensure_writable_dir
from hf_bgbench.spec import BenchmarkSpec

SPLITS = {"val": "test", "train": "train"}
"""--split (which ImageNet split the photos come from) -> the split name written."""
LABEL_SPACES = {"in9": "in9", "imagenet": "in9_full"}
"""--label-space -> the benchmark spec whose classes label the rows."""
NO_OTHER_BACKGROUND = "no_other_background"
"""Drop reason: a requested mixed variant has no background photo for it but itself (e.g.
the only photo of its class, for mixed_same)."""


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
    split: str = "val"
    image_format: str = "jpeg"
    shard_size: int = 1000
    limit_per_class: int | None = None
    variants: tuple[str, ...] = IN9_VARIANTS
    keep_work: bool = False
    overwrite: bool = False
    progress: bool = True

    def check(self, spec: BenchmarkSpec) -> str:
        """Raise a BuildError for options that cannot build ``spec``; return the label space
        (the ``--label-space`` that names ``spec``)."""
        label_space = next((k for k, name in LABEL_SPACES.items() if name == spec.name), None)
        if label_space is None:
            raise BuildError(
                f"This builder makes {' or '.join(LABEL_SPACES.values())}, not {spec.name}."
            )
        if self.split not in SPLITS:
            raise BuildError(f"--split must be one of {sorted(SPLITS)}.")
        if self.image_format not in ("jpeg", "png"):
            raise BuildError("--image-format must be 'jpeg' or 'png'.")
        if not Path(self.images).is_dir():  # said first: it asked for --boxes instead
            raise BuildError(f"--images {self.images}: no such folder.")
        if self.boxes is None and not self.no_boxes:
            raise BuildError(
                "Give --boxes (PASCAL-VOC XML folder or CSV file,xmin,ymin,xmax,ymax) or "
                "--no-boxes (estimate a box for photos without one; rows are flagged)."
            )
        if self.workers < 0 or self.shard_size < 1:
            raise BuildError(
                "--workers must be 0 or more (0 or 1: in the main process) and --shard-size at "
                "least 1."
            )
        if self.limit_per_class is not None and self.limit_per_class < 1:
            raise BuildError("--limit-per-class must be at least 1.")
        spec.check_variants(self.variants)
        return label_space


# --------------------------------------------------------------------------- report helpers


def _photos_digest(photos: Sequence[Photo]) -> str:
    h = hashlib.sha256()
    for p in photos:
        h.update(f"{p.id}\t{p.wnid}\t{os.path.getsize(p.path)}\n".encode())
    return h.hexdigest()


def _box_source_kind(options: BuildOptions) -> str:
    if options.boxes is None:
        return "estimated"
    kind = "csv" if Path(options.boxes).is_file() else "voc-xml"
    return f"{kind}+estimated" if options.no_boxes else kind


# --------------------------------------------------------------------------- the build


def build_in9(options: BuildOptions, spec: BenchmarkSpec) -> dict[str, Any]:
    """Build (or resume) one split of ``spec`` (in9, or in9_full: all 1000 ImageNet classes)
    into ``options.output``; returns its report.

    Raises :class:`BuildError` when no photo survives (nothing is written then).
    """
    label_space = options.check(spec)
    output = Path(options.output)
    created = ensure_writable_dir(output, "--output")
    try:
        return _build(options, spec, label_space, output)
    except BaseException:
        if created:  # leave no empty folder behind a failed first build
            _remove_empty_dirs(output)
        raise


def _remove_empty_dirs(output: Path) -> None:
    for folder in sorted(output.rglob("*"), key=lambda p: len(p.parts), reverse=True):
        if folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
    if output.is_dir() and not any(output.iterdir()):
        output.rmdir()


def _build(
    options: BuildOptions, spec: BenchmarkSpec, label_space: str, output: Path
) -> dict[str, Any]:
    split = SPLITS[options.split]
    report = read_report(output)
    if report and report.get("benchmark") != spec.name:
        raise BuildError(
            f"{output} holds a {report.get('benchmark')} build; this is {spec.name} "
            "(--label-space). Use another --output."
        )

    imagenet_map = spec.label_maps["imagenet-1k"]()
    photos, skipped = discover_photos(options.images, imagenet_map, options.metadata, options.boxes)
    found = len(photos)
    photos, subsampled = _limit(photos, options.limit_per_class, options.seed)
    params = {
        "benchmark": spec.name,
        "split": split,
        "seed": options.seed,
        "label_space": label_space,
        "boxes": _box_source_kind(options),
        "image_format": options.image_format,
        "shard_size": options.shard_size,
        "limit_per_class": options.limit_per_class,
        "variants": list(options.variants),
        "photos_sha256": _photos_digest(photos),
        **decode_settings(),  # which photos decode (none at the default limit)
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

    with Runner(options.workers, options.progress) as runner:
        rows, stage1 = _stage1(runner, photos, options, spec, work)
        split_report.update(stage1)
        if not stage1["kept"]:
            if not options.keep_work:
                _remove_work(output, work)
            raise BuildError(_nothing_kept(split_report, options))
        split_report["shards"] = write_variants(
            runner,
            rows,
            spec,
            output,
            work,
            split,
            shard_size=options.shard_size,
            image_format=options.image_format,
        )
        if split == "train" and label_space == "in9":
            split_report["in9l"] = write_in9l(
                runner, photos, spec, output, seed=options.seed, shard_size=options.shard_size
            )

    report = read_report(output) or {"format": REPORT_FORMAT, "benchmark": spec.name}
    report.setdefault("splits", {})[split] = split_report
    write_json(output / REPORT_NAME, report)
    write_card(output, spec, report)
    if not options.keep_work:
        _remove_work(output, work)
    return split_report


def _remove_work(output: Path, work: Path) -> None:
    """Delete the stage-1 cache of a split, and the work folder once it is empty."""
    shutil.rmtree(work, ignore_errors=True)
    if not any((output / WORK_DIRNAME).iterdir()):
        (output / WORK_DIRNAME).rmdir()


def _nothing_kept(split_report: dict[str, Any], options: BuildOptions) -> str:
    """Why a build kept no photo, in words, for the error that stops it."""
    found = split_report["photos_found"]
    dropped = split_report.get("dropped", {}).items()
    reasons = [f"{n} dropped ({DROP_TEXT.get(k, k)})" for k, n in dropped if n]
    reasons += [f"{n} skipped ({k})" for k, n in split_report.get("skipped", {}).items() if n]
    why = "; ".join(reasons) if reasons else "no labelled photo was found"
    return (
        f"No photo survived the build of {options.output} ({found} labelled photo(s) found; "
        f"{why}), so nothing was written. Check --images (readable photos of the benchmark's "
        "classes) and --boxes (one box per photo, or --no-boxes to estimate them)."
    )


def _limit(photos: list[Photo], limit: int | None, seed: int) -> tuple[list[Photo], int]:
    """``--limit-per-class``: a seeded random subset of at most ``limit`` photos per class."""
    if limit is None:
        return photos, 0
    by_label: dict[int, list[str]] = defaultdict(list)
    for p in photos:
        by_label[p.label].append(p.id)
    keep = {i for ids in pick(by_label, limit, seed, TAG_SUBSAMPLE).values() for i in ids}
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
    layout = spec.layout or IN9_LAYOUT
    lacking = lacking_background(kept, spec.num_classes, options.variants, layout)
    dropped[NO_OTHER_BACKGROUND] = len(lacking)
    usable = {k: [i for i in v if i not in lacking] for k, v in kept.items()}
    balanced = balance(usable, options.seed)
    dropped["balancing"] = sum(len(usable[k]) - len(v) for k, v in balanced.items())
    ordered = sorted((label, i) for label, ids in balanced.items() for i in ids)
    backgrounds = assign_backgrounds(
        ordered, spec.num_classes, options.seed, options.variants, layout
    )
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
