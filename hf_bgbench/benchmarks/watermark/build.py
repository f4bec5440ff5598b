"""``bgbench build watermark``: ImageNet photos with and without the ImageNet-W watermark,
as a Hub dataset folder (configs ``original`` and ``watermark``, split ``test``).

Steps: find the labelled photos (:func:`hf_bgbench.builders.inputs.discover_photos`, the
1000 ImageNet-1k classes); optionally keep a seeded subset per class; per shard, crop each
photo (Resize(256) + CenterCrop(224)) and watermark the crop (:mod:`.transform`); write the
two configs' shards with the same rows in the same order; then ``build_report.json`` and the
card. Images are PNG, so the two configs differ exactly in the watermark's pixels (JPEG would
smear the difference over 8x8 blocks). Nothing else is random, so the build is
byte-reproducible; finished shards are kept when an interrupted build is run again.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import shutil
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image

from hf_bgbench.benchmarks.watermark.card import write_card
from hf_bgbench.benchmarks.watermark.facts import CROP, RESIZE, SPLIT, VARIANTS
from hf_bgbench.benchmarks.watermark.transform import (
    Watermarker,
    eval_crop,
    load_watermarker,
    package_version,
    watermarked,
)
from hf_bgbench.builders.inputs import Photo, discover_photos
from hf_bgbench.builders.report import REPORT_NAME, WORK_DIRNAME, read_report, write_json
from hf_bgbench.builders.shards import Runner, clear_stale, plan, shard_bounds, write_shard
from hf_bgbench.data import hub
from hf_bgbench.data.schema import ID, IMAGE, LABEL, PNG_SETTINGS, benchmark_features
from hf_bgbench.edits import seeded_rng
from hf_bgbench.files import ImageDecodeError, decode_settings, ensure_writable_dir, open_image
from hf_bgbench.spec import BenchmarkSpec

REPORT_FORMAT = "bgbench-watermark-build/1"


class BuildError(ValueError):
    """The watermark build cannot run as asked."""


@dataclass
class WatermarkBuildOptions:
    images: Path
    output: Path
    metadata: Path | None = None
    seed: int = 0  # only the --limit-per-class subset is random
    limit_per_class: int | None = None
    shard_size: int = 500
    workers: int = 1
    overwrite: bool = False
    progress: bool = True

    def check(self) -> None:
        if self.shard_size < 1 or self.workers < 0:
            raise BuildError("--shard-size must be at least 1 and --workers 0 or more.")
        if self.limit_per_class is not None and self.limit_per_class < 1:
            raise BuildError("--limit-per-class must be at least 1.")


def build_watermark(spec: BenchmarkSpec, options: WatermarkBuildOptions) -> dict[str, Any]:
    """Build (or resume) ``options.output`` as ``spec``'s data; returns the build report."""
    options.check()
    watermarker = load_watermarker(CROP)  # before any work: a missing package fails first
    imagenet_map = spec.label_maps["imagenet-1k"]()
    photos, skipped = discover_photos(options.images, imagenet_map, options.metadata)
    photos, subsampled = _limit(photos, options.limit_per_class, options.seed)
    if not photos:
        raise BuildError(
            f"--images {options.images}: no photo of an ImageNet-1k class was found "
            f"(skipped: {dict(skipped)})."
        )
    params = {
        "images_sha256": _digest(photos),
        "limit_per_class": options.limit_per_class,
        "seed": options.seed,
        "shard_size": options.shard_size,
        "resize": RESIZE,
        "crop": CROP,
        "imagenet_w_version": package_version(),
        **decode_settings(),  # which photos decode (none at the default limit)
    }
    output = Path(options.output)
    ensure_writable_dir(output, "--output")
    work = output / WORK_DIRNAME
    _check_previous(output, work, params, options.overwrite)
    work.mkdir(exist_ok=True)
    write_json(work / "params.json", params)

    shards = _write(photos, spec.classes, output, options)
    report = {
        "format": REPORT_FORMAT,
        "benchmark": spec.name,
        "parameters": params,
        "source": {"images": str(options.images), "metadata": _str(options.metadata)},
        "images_found": len(photos) + subsampled + sum(skipped.values()),
        "skipped": dict(sorted(skipped.items())),
        "subsampled": subsampled,
        "kept": len(photos),
        "per_class": _per_class(photos, spec.classes),
        "watermark": _watermark_facts(watermarker),
        "shards": shards,
    }
    write_json(output / REPORT_NAME, report)
    write_card(output, report, spec)
    shutil.rmtree(work, ignore_errors=True)
    return report


def summary_lines(report: dict[str, Any]) -> list[str]:
    """A few lines for the terminal after a build."""
    lines = [
        f"kept {report['kept']} photos of {len(report['per_class'])} classes in each of "
        f"{', '.join(report['shards'])}"
    ]
    skipped = {k: v for k, v in report["skipped"].items() if v}
    if skipped or report["subsampled"]:
        parts = [f"{k} {v}" for k, v in skipped.items()]
        parts += [f"subsampled {report['subsampled']}"] if report["subsampled"] else []
        lines.append("not kept: " + ", ".join(parts))
    return lines


def _str(path: Path | None) -> str | None:
    return None if path is None else str(path)


def _limit(photos: list[Photo], limit: int | None, seed: int) -> tuple[list[Photo], int]:
    """``--limit-per-class``: a seeded random subset of at most ``limit`` photos per class
    (drawn per class from the id-sorted photos, so it does not depend on file order)."""
    if limit is None:
        return photos, 0
    by_label: dict[int, list[Photo]] = defaultdict(list)
    for p in photos:
        by_label[p.label].append(p)
    keep: set[str] = set()
    for label, group in by_label.items():
        ids = sorted(p.id for p in group)
        if len(ids) > limit:
            chosen = seeded_rng(seed, "limit_per_class", label).choice(len(ids), limit, False)
            ids = [ids[i] for i in sorted(chosen)]
        keep.update(ids)
    return [p for p in photos if p.id in keep], len(photos) - len(keep)


def _digest(photos: Sequence[Photo]) -> str:
    """What the build read: every kept photo's id, label and bytes."""
    h = hashlib.sha256()
    for p in photos:
        h.update(f"{p.id}|{p.label}|".encode())
        h.update(Path(p.path).read_bytes())
    return h.hexdigest()


def _check_previous(output: Path, work: Path, params: dict[str, Any], overwrite: bool) -> None:
    """Refuse to mix this build with a different earlier one (finished, or interrupted),
    unless ``overwrite``; with it, the earlier shards go."""
    stored = work / "params.json"
    earlier = read_report(output).get("parameters")
    if earlier is None and stored.is_file():
        earlier = json.loads(stored.read_text())
    if earlier is None and (output / "data").exists():
        earlier = {}  # shards of something this builder did not make
    if earlier is None or earlier == params:
        return
    if not overwrite:
        raise BuildError(
            f"{output} holds another build (other photos or options, see {REPORT_NAME}); "
            "use --overwrite or another --output."
        )
    shutil.rmtree(output / "data", ignore_errors=True)
    shutil.rmtree(work, ignore_errors=True)


@dataclass(frozen=True)
class ShardTask:
    """One shard index: its photos (id, label, path), written as both configs' shard."""

    index: int
    num: int
    rows: tuple[tuple[str, int, str], ...]
    output: str
    class_names: tuple[str, ...]


def _write(
    photos: Sequence[Photo],
    class_names: tuple[str, ...],
    output: Path,
    options: WatermarkBuildOptions,
) -> dict[str, list[str]]:
    """Both configs' shards, the same rows in each (config -> shard paths); shards already
    written (an interrupted build run again) are kept."""
    num = plan(len(photos), options.shard_size)
    paths = {v: hub.shard_paths(v, SPLIT, num) for v in VARIANTS}
    for variant in VARIANTS:
        clear_stale(output, variant, SPLIT, paths[variant])
    tasks = [
        ShardTask(
            index,
            num,
            tuple((p.id, p.label, p.path) for p in photos[lo:hi]),
            str(output),
            class_names,
        )
        for index, (lo, hi) in enumerate(shard_bounds(len(photos), num))
        if not all((output / paths[v][index]).is_file() for v in VARIANTS)
    ]
    with Runner(options.workers, options.progress) as runner:
        for _ in runner.map(write_watermark_shard, tasks, "watermark", unit="shard"):
            pass
    return paths


def write_watermark_shard(task: ShardTask) -> int:
    """Crop and watermark a shard's photos; write the shard of each config (in a worker
    process when --workers > 1, so only the task and a count cross processes)."""
    watermarker = _process_watermarker()
    cols = {v: {IMAGE: [], LABEL: [], ID: []} for v in VARIANTS}
    for image_id, label, path in task.rows:
        crop = _read_crop(path)
        images = (crop, watermarked(crop, watermarker))
        for variant, image in zip(VARIANTS, images, strict=True):
            cols[variant][IMAGE].append({"bytes": _png(image), "path": None})
            cols[variant][LABEL].append(label)
            cols[variant][ID].append(image_id)
    features = benchmark_features(task.class_names)
    for variant in VARIANTS:
        write_shard(
            Path(task.output), variant, SPLIT, task.index, task.num, cols[variant], features
        )
    return len(task.rows)


@functools.cache
def _process_watermarker() -> Watermarker:
    # Loading the font takes a while: once per process. The build itself loads it uncached
    # first, so a missing package is reported before any work.
    return load_watermarker(CROP)


def _read_crop(path: str) -> Image.Image:
    try:
        return eval_crop(open_image(path))
    except ImageDecodeError as err:
        raise BuildError(f"{err} Remove it from --images.") from None


def _png(image: Image.Image) -> bytes:
    buf = io.BytesIO()
    image.save(buf, **PNG_SETTINGS)
    return buf.getvalue()


def _per_class(photos: Sequence[Photo], names: Sequence[str]) -> dict[str, int]:
    return {names[k]: n for k, n in sorted(Counter(p.label for p in photos).items())}


def _watermark_facts(watermarker: Watermarker) -> dict[str, Any]:
    """What the package drew (read from its transform, for the report and the card)."""
    facts: dict[str, Any] = {"package": "imagenet-w", "version": package_version()}
    for attr in ("text", "opacity", "color", "x_pos", "y_pos"):
        if hasattr(watermarker, attr):
            value = getattr(watermarker, attr)
            facts[attr] = list(value) if isinstance(value, tuple) else value
    font = getattr(watermarker, "font", None)
    if font is not None:
        facts["font"] = " ".join(font.getname())
        facts["font_size"] = font.size
    return facts
