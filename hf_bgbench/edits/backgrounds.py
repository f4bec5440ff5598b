"""Background replacement: another image's (inpainted) background, or an out-of-distribution
texture (checker, stripes, procedural noise), with the object pasted back in place."""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from hf_bgbench.edits.geometry import paste
from hf_bgbench.edits.types import EditError, EditResult, as_image, as_mask

TEXTURES = ("checker", "stripes", "noise")


def fit_background(background: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``background`` resized to ``shape``'s height and width (area interpolation)."""
    bg = as_image(background)
    if bg.shape[:2] == tuple(shape[:2]):
        return bg
    return cv2.resize(bg, (shape[1], shape[0]), interpolation=cv2.INTER_AREA)


def replace_background(
    image: np.ndarray,
    mask: np.ndarray,
    background: np.ndarray,
    *,
    blend: str = "poisson",
    params: dict[str, Any] | None = None,
) -> EditResult:
    """The object of ``image`` on ``background`` (resized to the image); the mask is kept."""
    img = as_image(image)
    m = as_mask(mask, img)
    out = paste(fit_background(background, img.shape), img, m, blend=blend)
    return EditResult(out, m, {"edit": "background", "blend": blend, **(params or {})})


def _colours(rng: np.random.Generator) -> tuple[list[int], list[int]]:
    a = rng.integers(0, 256, 3)
    b = (a + rng.integers(64, 193, 3)) % 256  # far enough apart to make a visible pattern
    return a.tolist(), b.tolist()


def texture(
    kind: str, height: int, width: int, rng: np.random.Generator
) -> tuple[np.ndarray, dict[str, Any]]:
    """A (height, width, 3) uint8 texture and its parameters.

    - checker: squares of side ``cell`` in two colours;
    - stripes: a square wave of period ``period`` at ``angle`` degrees in two colours;
    - noise: fractal value noise (``octaves`` of bicubically upsampled uniform noise, halving
      the amplitude per octave) mapped between two colours.
    """
    if kind not in TEXTURES:
        raise EditError(f"Unknown texture {kind!r}; use one of {list(TEXTURES)}.")
    a, b = _colours(rng)
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    params: dict[str, Any] = {"texture": kind, "colours": [a, b]}
    if kind == "checker":
        cell = int(rng.integers(8, 33))
        t = ((xx // cell + yy // cell) % 2).astype(np.float32)
        params["cell"] = cell
    elif kind == "stripes":
        period = int(rng.integers(8, 41))
        angle = float(rng.uniform(0, 180))
        rad = np.deg2rad(angle)
        phase = (xx * np.cos(rad) + yy * np.sin(rad)) / period
        t = (np.floor(phase * 2) % 2).astype(np.float32)
        params.update(period=period, angle=round(angle, 4))
    else:
        octaves = int(rng.integers(3, 6))
        t = np.zeros((height, width), np.float32)
        total = 0.0
        for o in range(octaves):
            cells = 2 ** (o + 2)
            grid = rng.random((cells, cells)).astype(np.float32)
            t += 0.5**o * cv2.resize(grid, (width, height), interpolation=cv2.INTER_CUBIC)
            total += 0.5**o
        t = np.clip(t / total, 0, 1)
        params["octaves"] = octaves
    out = np.asarray(a, np.float32) * (1 - t[..., None]) + np.asarray(b, np.float32) * t[..., None]
    return np.clip(np.rint(out), 0, 255).astype(np.uint8), params


def texture_background(
    image: np.ndarray,
    mask: np.ndarray,
    rng: np.random.Generator,
    *,
    kind: str | None = None,
    blend: str = "poisson",
) -> EditResult:
    """The object on an OOD texture; ``kind`` None draws one of :data:`TEXTURES`."""
    img = as_image(image)
    m = as_mask(mask, img)
    chosen = kind if kind is not None else TEXTURES[int(rng.integers(len(TEXTURES)))]
    bg, params = texture(chosen, img.shape[0], img.shape[1], rng)
    out = paste(bg, img, m, blend=blend)
    return EditResult(out, m, {"edit": "bg_texture", "blend": blend, **params})
