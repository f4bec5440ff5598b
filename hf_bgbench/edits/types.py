"""The value every edit returns, input checks, and the per-image seeded generator."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np


class EditError(ValueError):
    """An edit cannot run on the inputs given (empty mask, mismatched sizes, ...)."""


@dataclass
class EditResult:
    image: np.ndarray  # (H, W, 3) uint8 RGB
    mask: np.ndarray  # (H, W) bool: the object after the edit
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def object_pixel_rate(self) -> float:
        """Object pixels / image pixels after the edit."""
        return float(self.mask.mean())


def as_image(image: np.ndarray) -> np.ndarray:
    """``image`` as a contiguous (H, W, 3) uint8 RGB array (grey and RGBA are converted)."""
    arr = np.asarray(image)
    if arr.ndim == 2:
        arr = np.repeat(arr[..., None], 3, axis=2)
    if arr.ndim != 3 or arr.shape[2] not in (3, 4):
        raise EditError(f"Expected an RGB image of shape (H, W, 3), got shape {arr.shape}.")
    if arr.dtype != np.uint8:
        raise EditError(f"Expected a uint8 image, got {arr.dtype}; convert it with PIL first.")
    return np.ascontiguousarray(arr[..., :3])


def as_mask(mask: np.ndarray, image: np.ndarray | None = None) -> np.ndarray:
    """``mask`` as a boolean (H, W) array (non-zero = object); checked against ``image``."""
    arr = np.asarray(mask)
    if arr.ndim == 3:
        arr = arr.max(axis=2)
    if arr.ndim != 2:
        raise EditError(f"Expected a 2-D object mask, got shape {arr.shape}.")
    out = arr > (127 if arr.dtype == np.uint8 and arr.max() > 1 else 0)
    if image is not None and out.shape != image.shape[:2]:
        raise EditError(
            f"The mask is {out.shape[1]}x{out.shape[0]} but the image is "
            f"{image.shape[1]}x{image.shape[0]}; give a mask of the image's size."
        )
    if not out.any():
        raise EditError("The object mask is empty (no object pixel); nothing to edit.")
    return out


def seeded_rng(seed: int, *keys: object) -> np.random.Generator:
    """A generator determined by ``seed`` and ``keys`` (e.g. image id and edit name) only,
    so an image's edit is the same whatever the order or process it runs in."""
    digest = hashlib.sha256("|".join(map(str, (seed, *keys))).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:16], "little"))
