"""Pixel operations that turn one image, its box and its mask into the IN-9 variants.

All functions take and return uint8 HxWx3 RGB arrays (masks are boolean HxW) and never
modify their inputs.
"""

from __future__ import annotations

import numpy as np

from hf_bgbench.benchmarks.in9.geometry import Rect


def background_strip(width: int, height: int, rect: Rect) -> tuple[str, int, int]:
    """The largest rectangular strip outside the box: ``(axis, start, stop)``.

    Candidates are the left and right margins (full image height, ``axis="x"``: columns
    ``start:stop``) and the top and bottom margins (full image width, ``axis="y"``: rows
    ``start:stop``); the one with the largest area wins (ties in that order).
    """
    x0, y0, x1, y1 = rect
    candidates = [
        (x0 * height, ("x", 0, x0)),
        ((width - x1) * height, ("x", x1, width)),
        (y0 * width, ("y", 0, y0)),
        ((height - y1) * width, ("y", y1, height)),
    ]
    area, strip = max(candidates, key=lambda c: c[0])  # max keeps the first of equals
    if area <= 0:
        raise ValueError("The box covers the whole image: there is no background to tile.")
    return strip


def tiled_background(image: np.ndarray, rect: Rect) -> np.ndarray:
    """only_bg_t: the box filled with copies of the largest background strip.

    The strip is repeated along its short axis over the whole image, with the tiling
    anchored at the strip itself (a copy sits exactly on the strip), and only the box region
    is replaced. No inpainting: every pixel in the box is a pixel from outside it.
    """
    height, width = image.shape[:2]
    axis, start, stop = background_strip(width, height, rect)
    size = stop - start
    out = image.copy()
    x0, y0, x1, y1 = rect
    if axis == "x":
        cols = start + np.mod(np.arange(x0, x1) - start, size)
        out[y0:y1, x0:x1] = image[y0:y1][:, cols]
    else:
        rows = start + np.mod(np.arange(y0, y1) - start, size)
        out[y0:y1, x0:x1] = image[rows][:, x0:x1]
    return out


def black_box(image: np.ndarray, rect: Rect) -> np.ndarray:
    """only_bg_b: the box filled with black."""
    x0, y0, x1, y1 = rect
    out = image.copy()
    out[y0:y1, x0:x1] = 0
    return out


def only_foreground(image: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """only_fg: the foreground on black."""
    return np.where(mask[..., None], image, 0).astype(np.uint8)


def no_foreground(image: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """no_fg: the foreground (its shape) filled with black."""
    return np.where(mask[..., None], 0, image).astype(np.uint8)


def paste_foreground(image: np.ndarray, mask: np.ndarray, background: np.ndarray) -> np.ndarray:
    """mixed_*: ``bg * (1 - mask) + fg * mask`` -- the foreground pixels over another
    image's only_bg_t background (both at the same size)."""
    if background.shape != image.shape:
        raise ValueError(f"Background {background.shape} and image {image.shape} differ in size.")
    return np.where(mask[..., None], image, background).astype(np.uint8)
