"""The per-image and per-shard work of an IN-9 build, run inside worker processes.

Kept free of ``datasets``/``torch`` imports so worker processes start fast. Two stages:

1. :func:`segment_image` -- one photo: box, crop filters, GrabCut, tiled background. The
   224x224 results (original crop, only_bg_t crop, mask, box) go to a cache file
   ``<work>/<id>.npz`` so a resumed build skips finished images and stage 2 can read any
   image's background.
2. :func:`render_shard` -- one output shard of one variant: composes every row from the
   cache and encodes it (deterministic JPEG/PNG settings, no metadata), returning the
   columns for the parent process to write as Parquet.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from hf_bgbench.benchmarks.in9 import compose
from hf_bgbench.benchmarks.in9.geometry import (
    box_to_rect,
    crop_filter,
    resize_to_working,
    working_geometry,
)
from hf_bgbench.builders.boxes import BoxSource, estimate_box, rescale_boxes
from hf_bgbench.builders.segmentation import grabcut_foreground
from hf_bgbench.data.schema import PNG_SETTINGS, encode_mask
from hf_bgbench.files import ImageDecodeError, ImageTooLarge, open_image

KEPT = "kept"
# Why an image can be dropped in stage 1 (the build report counts each).
DROP_REASONS = (
    "unreadable",
    "too_large",
    "no_box",
    "multiple_boxes",
    "empty_box",
    "box_covers_crop",
    "box_outside_crop",
    "grabcut_failed",
)

JPEG_SETTINGS = {"format": "JPEG", "quality": 95, "subsampling": 0, "optimize": False}


# --------------------------------------------------------------------------- stage 1


@dataclass(frozen=True)
class SegmentTask:
    id: str
    path: str
    wnid: str
    seed: int
    boxes: str | None  # folder of VOC XML or a CSV file
    estimate_missing: bool  # --no-boxes: estimate a box when the photo has none
    cache: str  # the .npz this task writes


_BOX_SOURCES: dict[str, BoxSource] = {}


def _box_source(path: str) -> BoxSource:
    # One per process: a CSV is parsed once, not once per image.
    if path not in _BOX_SOURCES:
        _BOX_SOURCES[path] = BoxSource(path)
    return _BOX_SOURCES[path]


def _save_npz(path: Path, **arrays: np.ndarray) -> None:
    tmp = path.with_name(f".{path.stem}.tmp.npz")
    np.savez_compressed(tmp, **arrays)
    os.replace(tmp, path)


def read_status(cache: str | Path) -> tuple[str, bool, int]:
    """(status, box_estimated, GrabCut attempts) recorded in a stage-1 cache file."""
    with np.load(cache) as data:
        return str(data["status"]), bool(data["box_estimated"]), int(data["attempts"])


def segment_image(task: SegmentTask) -> tuple[str, str, bool, int]:
    """Stage 1 for one photo; returns ``(id, status, box_estimated, attempts)``."""
    cache = Path(task.cache)
    if cache.is_file():
        return (task.id, *read_status(cache))
    status, estimated, attempts, arrays = _segment(task)
    _save_npz(
        cache,
        status=np.array(status),
        box_estimated=np.array(estimated),
        attempts=np.array(attempts),
        **arrays,
    )
    return task.id, status, estimated, attempts


def _segment(task: SegmentTask) -> tuple[str, bool, int, dict[str, np.ndarray]]:
    try:  # the one guarded decode path: an oversized photo is counted, never a traceback
        photo = open_image(task.path).convert("RGB")
    except ImageTooLarge:
        return "too_large", False, 0, {}
    except ImageDecodeError:
        return "unreadable", False, 0, {}
    size = photo.size
    found = _box_source(task.boxes).lookup(task.wnid, Path(task.path).stem) if task.boxes else None
    estimated = False
    if found is None or not found[0]:
        if not task.estimate_missing:
            return "no_box", False, 0, {}
        boxes, estimated = [estimate_box(np.asarray(photo))], True
    else:
        boxes = rescale_boxes(found[0], found[1], size)
    if len(boxes) != 1:
        return "multiple_boxes", estimated, 0, {}

    geometry = working_geometry(*size)
    rect = box_to_rect(geometry.to_working(boxes[0]), geometry.width, geometry.height)
    reason = crop_filter(rect, geometry)
    if reason:
        return reason, estimated, 0, {}
    work = resize_to_working(photo, geometry)
    mask, attempts = grabcut_foreground(work, rect, task.seed, task.id)
    if mask is None:
        return "grabcut_failed", estimated, attempts, {}
    tiled = compose.tiled_background(work, rect)
    arrays = {
        "original": geometry.crop(work),
        "bg_t": geometry.crop(tiled),
        "mask": geometry.crop(mask).astype(np.uint8),
        "rect": np.array(geometry.rect_in_crop(rect), dtype=np.int64),
    }
    return KEPT, estimated, attempts, arrays


# --------------------------------------------------------------------------- stage 2


@dataclass(frozen=True)
class Row:
    id: str
    label: int
    bg_id: str = ""
    bg_label: int = -1
    box_estimated: bool = False


@dataclass(frozen=True)
class ShardTask:
    variant: str
    rows: tuple[Row, ...]
    cache_dir: str
    image_format: str  # "jpeg" | "png"


def encode_image(array: np.ndarray, image_format: str) -> bytes:
    buf = io.BytesIO()
    settings = JPEG_SETTINGS if image_format == "jpeg" else PNG_SETTINGS
    Image.fromarray(array, mode="RGB").save(buf, **settings)
    return buf.getvalue()


def render_variant(
    variant: str, cached: dict[str, np.ndarray], background: np.ndarray | None = None
) -> np.ndarray:
    """One variant of one image from its stage-1 arrays (``background``: for mixed_*)."""
    original, mask = cached["original"], cached["mask"].astype(bool)
    if variant == "original":
        return original
    if variant == "only_bg_b":
        return compose.black_box(original, tuple(int(v) for v in cached["rect"]))
    if variant == "only_bg_t":
        return cached["bg_t"]
    if variant == "no_fg":
        return compose.no_foreground(original, mask)
    if variant == "only_fg":
        return compose.only_foreground(original, mask)
    if variant.startswith("mixed_"):
        if background is None:
            raise ValueError(f"{variant} needs a background image.")
        return compose.paste_foreground(original, mask, background)
    raise ValueError(f"Unknown IN-9 variant {variant!r}.")


def _load(cache_dir: str, image_id: str, keys: tuple[str, ...]) -> dict[str, np.ndarray]:
    with np.load(Path(cache_dir) / f"{image_id}.npz") as data:
        return {k: data[k] for k in keys}


def render_shard(task: ShardTask) -> dict[str, list]:
    """Stage 2: the encoded columns of one shard of one variant."""
    cols: dict[str, list] = {
        k: [] for k in ("image", "label", "id", "mask", "bg_id", "bg_label", "box_estimated")
    }
    for row in task.rows:
        cached = _load(task.cache_dir, row.id, ("original", "bg_t", "mask", "rect"))
        background = None
        if task.variant.startswith("mixed_"):
            background = _load(task.cache_dir, row.bg_id, ("bg_t",))["bg_t"]
        image = render_variant(task.variant, cached, background)
        cols["image"].append({"bytes": encode_image(image, task.image_format), "path": None})
        cols["label"].append(row.label)
        cols["id"].append(row.id)
        cols["mask"].append({"bytes": encode_mask(cached["mask"]), "path": None})
        cols["bg_id"].append(row.bg_id)
        cols["bg_label"].append(row.bg_label)
        cols["box_estimated"].append(row.box_estimated)
    return cols


@dataclass(frozen=True)
class CopyTask:
    """A shard of IN-9L: whole photos, bytes unchanged."""

    rows: tuple[tuple[str, int, str], ...]  # (id, label, path)


def copy_shard(task: CopyTask) -> dict[str, list]:
    cols: dict[str, list] = {"image": [], "label": [], "id": []}
    for image_id, label, path in task.rows:
        cols["image"].append({"bytes": Path(path).read_bytes(), "path": None})
        cols["label"].append(label)
        cols["id"].append(image_id)
    return cols
