"""The per-image and per-shard work of ``bgbench build imagenet-e`` (run in worker processes).

Stage 1 (:func:`prepare_image`): decode, fit to the ``size`` x ``size`` canvas (by default
the authors' 256 x 256, the whole photo resized to it as their scripts do; or shorter side
resized and centre crop), inpaint the object away (the clean background), measure the background's
complexity; cached as ``<work>/<id>.npz``. Stage 2 (:func:`edit_shard`): one shard of one
edit, each image edited with a generator seeded by (seed, id, edit) only.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from PIL import Image

from hf_bgbench.benchmarks.imagenet_e.diffusion import DiffusionSettings, diffusion_background
from hf_bgbench.benchmarks.imagenet_e.edit_set import METHOD_DIFFUSION, apply_edit
from hf_bgbench.data.schema import PNG_SETTINGS, encode_mask
from hf_bgbench.edits import EditError, seeded_rng
from hf_bgbench.edits.complexity import complexity
from hf_bgbench.edits.inpaint import remove_object
from hf_bgbench.files import open_image

KEPT, UNREADABLE, EMPTY_MASK, NO_BACKGROUND = "kept", "unreadable", "empty_mask", "no_background"
CANVAS = 256
"""Side of the square canvas the edits are made on: the authors' (``app.py`` and
``change_place.py`` resize every photo and mask to (256, 256); their diffusion model is 256)."""
FIT_RESIZE, FIT_CROP = "resize", "crop"
FITS = (FIT_RESIZE, FIT_CROP)
"""How a photo reaches the canvas: ``resize`` the whole photo to the square (the authors'
``Image.resize((256, 256))``: the aspect ratio is not kept, the object is never cut), or
``crop`` (shorter side resized, centre crop: the aspect ratio kept, the object may be cut)."""
MIN_BACKGROUND = 0.05
"""Fraction of the image the background must cover for a clean background to be inpainted."""


@dataclass(frozen=True)
class PrepareTask:
    id: str
    image: bytes | str
    mask: bytes | str
    size: int
    method: str
    cache: str
    fit: str = FIT_RESIZE


@dataclass(frozen=True)
class EditRow:
    id: str
    label: int
    other: str = ""  # id of the image whose clean background is used (bg_* edits)
    other_params: str = "{}"  # JSON: what is recorded about that background


@dataclass(frozen=True)
class ShardTask:
    edit: str
    rows: tuple[EditRow, ...]
    work: str
    seed: int
    image_format: str
    max_angle: float
    diffusion: DiffusionSettings | None = None  # set: a background edit by diffusion guidance
    size_method: str = "whole"  # size edits: the whole photo scaled, or the object alone
    inpaint: str = "telea"  # position (size_method whole): the small object's hole
    blend: str = "alpha"  # how objects are pasted: alpha (the authors' composite) or poisson


def decode_image(data: bytes | str, mode: str) -> np.ndarray:
    """An image file (path) or its bytes as a PIL-converted array (mode "RGB" or "L"),
    decoded through the one guarded path (:func:`hf_bgbench.files.open_image`: an
    unreadable or oversized image raises its ValueError, naming the file)."""
    return np.asarray(open_image(data).convert(mode))


def fit(
    image: np.ndarray, mask: np.ndarray, size: int, how: str = FIT_CROP
) -> tuple[np.ndarray, np.ndarray]:
    """The photo and mask on the ``size`` x ``size`` canvas: ``how`` = "resize" (the whole
    photo, aspect ratio not kept, as the authors) or "crop" (shorter side to ``size``, centre
    crop). Area interpolation for the photo, nearest for the mask."""
    if mask.shape != image.shape[:2]:
        mask = cv2.resize(mask, (image.shape[1], image.shape[0]), interpolation=cv2.INTER_NEAREST)
    h, w = mask.shape
    if how == FIT_RESIZE and (h, w) != (size, size):
        image = cv2.resize(image, (size, size), interpolation=cv2.INTER_AREA)
        mask = cv2.resize(mask, (size, size), interpolation=cv2.INTER_NEAREST)
    elif (h, w) != (size, size):
        scale = size / min(h, w)
        nw, nh = max(size, round(w * scale)), max(size, round(h * scale))
        image = cv2.resize(image, (nw, nh), interpolation=cv2.INTER_AREA)
        mask = cv2.resize(mask, (nw, nh), interpolation=cv2.INTER_NEAREST)
        top, left = (nh - size) // 2, (nw - size) // 2
        image = image[top : top + size, left : left + size]
        mask = mask[top : top + size, left : left + size]
    return np.ascontiguousarray(image), mask > 127


def prepare_image(task: PrepareTask) -> tuple[str, str, dict[str, float]]:
    """Stage 1 for one image: (id, status, complexity of its clean background)."""
    cache = Path(task.cache)
    if cache.is_file():
        with np.load(cache) as z:
            return task.id, KEPT, json.loads(str(z["complexity"]))
    try:
        image, mask = fit(
            decode_image(task.image, "RGB"), decode_image(task.mask, "L"), task.size, task.fit
        )
    except (OSError, ValueError):
        return task.id, UNREADABLE, {}
    if not mask.any():
        return task.id, EMPTY_MASK, {}
    if mask.mean() > 1 - MIN_BACKGROUND:
        return task.id, NO_BACKGROUND, {}
    try:
        clean = remove_object(image, mask, method=task.method).image
    except EditError:
        return task.id, NO_BACKGROUND, {}
    measures = {k: round(v, 6) for k, v in complexity(clean).items()}
    tmp = cache.with_name(f".{cache.stem}.tmp.npz")
    np.savez(tmp, image=image, mask=mask, clean=clean, complexity=json.dumps(measures))
    tmp.replace(cache)
    return task.id, KEPT, measures


def _load(work: str, image_id: str) -> dict[str, np.ndarray]:
    with np.load(Path(work) / f"{image_id}.npz") as z:
        return {k: z[k] for k in ("image", "mask", "clean")}


def encode_image(image: np.ndarray, image_format: str) -> bytes:
    buf = io.BytesIO()
    if image_format == "png":
        Image.fromarray(image).save(buf, **PNG_SETTINGS)
    else:
        Image.fromarray(image).save(buf, format="JPEG", quality=95, subsampling=0)
    return buf.getvalue()


def edit_shard(task: ShardTask) -> dict[str, list[Any]]:
    """Stage 2: the columns of one shard of one edit."""
    cols: dict[str, list[Any]] = {
        k: [] for k in ("image", "label", "id", "mask", "object_pixel_rate", "edit_params")
    }
    for row in task.rows:
        data = _load(task.work, row.id)
        other_params = json.loads(row.other_params)
        if task.diffusion is not None:
            result = diffusion_background(
                task.diffusion,
                task.edit,
                data["image"],
                data["mask"],
                data["clean"],
                label=row.label,
                seed=task.seed,
                image_id=row.id,
            )
            result.params["edit_method"] = METHOD_DIFFUSION
        else:
            result = apply_edit(
                task.edit,
                data["image"],
                data["mask"],
                clean=data["clean"],
                rng=seeded_rng(task.seed, row.id, task.edit),
                other=_load(task.work, row.other)["clean"] if row.other else None,
                other_params=other_params or None,
                max_angle=task.max_angle,
                size_method=task.size_method,
                inpaint=task.inpaint,
                blend=task.blend,
            )
        result.params["edit"] = task.edit
        result.params["seed"] = task.seed
        cols["image"].append({"bytes": encode_image(result.image, task.image_format), "path": None})
        cols["label"].append(row.label)
        cols["id"].append(row.id)
        cols["mask"].append({"bytes": encode_mask(result.mask), "path": None})
        cols["object_pixel_rate"].append(np.float32(result.object_pixel_rate))
        cols["edit_params"].append(json.dumps(result.params, sort_keys=True))
    return cols
