"""Size, position and rotation of the object (SPEC §3), and pasting it back.

Each edit maps the object (image pixels under the mask) with a 2x3 affine matrix, the top
two rows of the paper's 3x3 transforms:

- T_size = [[s, 0, Δx], [0, s, Δy]] with Δx = (1 - s)(x + w/2), Δy = (1 - s)(y + h/2):
  scaling by ``s`` about the centre of the object's box (x, y, w, h), ``s`` chosen so that
  the object pixel rate (object pixels / image pixels) reaches the target;
- T_position = translation of the box to (x', y'), x' ∈ [0, W - w], y' ∈ [0, H - h] drawn
  uniformly, so the object stays inside the frame;
- T_direction = rotation by θ about the box centre.

The mapped object is pasted onto a background (usually the image's own inpainted background,
:func:`hf_bgbench.edits.inpaint.remove_object`) by :func:`paste`: Poisson blending
(``cv2.seamlessClone``) at the seam, the object's own colours inside.
"""

from __future__ import annotations

import cv2
import numpy as np

from hf_bgbench.edits.types import EditError, EditResult, as_image, as_mask

BLENDS = ("poisson", "alpha")
FEATHER = 3.0
"""Pixels over which a Poisson paste goes from the blended seam to the object's own colours.
Poisson blending alone keeps only gradients, so a uniform object would take the colour of
the background around it; the ramp keeps the object recognisable and the seam invisible."""
_PAD = 2  # seamlessClone ignores the outermost pixel of the mask; objects may touch the border


def object_box(mask: np.ndarray) -> tuple[int, int, int, int]:
    """(x, y, w, h) of the object's bounding box."""
    return tuple(int(v) for v in cv2.boundingRect(mask.astype(np.uint8)))  # type: ignore[return-value]


def paste(
    background: np.ndarray, image: np.ndarray, mask: np.ndarray, *, blend: str = "poisson"
) -> np.ndarray:
    """``image``'s pixels under ``mask`` over ``background`` (all the same size)."""
    if blend not in BLENDS:
        raise EditError(f"Unknown blend {blend!r}; use one of {list(BLENDS)}.")
    m = mask.astype(bool)
    if background.shape != image.shape:
        raise EditError(f"Background {background.shape} and image {image.shape} differ in size.")
    out = background.copy()
    if not m.any():
        return out
    if blend == "alpha" or m.sum() < 16:
        out[m] = image[m]
        return out
    pad = ((_PAD, _PAD), (_PAD, _PAD), (0, 0))
    dst = np.pad(background, pad, mode="reflect")
    src = np.pad(image, pad, mode="reflect")
    mk = np.pad(m, pad[:2]).astype(np.uint8) * 255
    x, y, w, h = cv2.boundingRect(mk)
    centre = (x + w // 2, y + h // 2)  # OpenCV puts the mask's box at centre - (w//2, h//2)
    cloned = cv2.seamlessClone(src, dst, mk, centre, cv2.NORMAL_CLONE)[_PAD:-_PAD, _PAD:-_PAD]
    inside = cv2.distanceTransform(m.astype(np.uint8), cv2.DIST_L2, 3)
    alpha = np.clip(inside / FEATHER, 0.0, 1.0)[..., None]
    mixed = alpha * image.astype(np.float32) + (1.0 - alpha) * cloned.astype(np.float32)
    out[m] = np.clip(np.rint(mixed[m]), 0, 255).astype(np.uint8)
    return out


def warp_object(
    image: np.ndarray,
    mask: np.ndarray,
    background: np.ndarray,
    matrix: np.ndarray,
    *,
    blend: str = "poisson",
) -> tuple[np.ndarray, np.ndarray]:
    """Map the object with the 2x3 ``matrix`` and paste it on ``background``; returns the
    edited image and the mapped mask (parts mapped outside the frame are cut)."""
    h, w = mask.shape
    moved = cv2.warpAffine(
        image, matrix, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )
    moved_mask = (
        cv2.warpAffine(mask.astype(np.uint8) * 255, matrix, (w, h), flags=cv2.INTER_LINEAR) > 127
    )
    return paste(background, moved, moved_mask, blend=blend), moved_mask


def _inputs(image, mask, background):
    img = as_image(image)
    m = as_mask(mask, img)
    bg = as_image(background)
    if bg.shape != img.shape:
        raise EditError(f"The background is {bg.shape[:2]}, the image {img.shape[:2]}.")
    return img, m, bg


def size_matrix(mask: np.ndarray, scale: float) -> np.ndarray:
    """T_size: scale by ``scale`` about the centre of the object's box."""
    x, y, w, h = object_box(mask)
    dx, dy = (1 - scale) * (x + w / 2), (1 - scale) * (y + h / 2)
    return np.array([[scale, 0.0, dx], [0.0, scale, dy]])


def resize_object(
    image: np.ndarray,
    mask: np.ndarray,
    background: np.ndarray,
    rate: float | None,
    *,
    blend: str = "poisson",
) -> EditResult:
    """T_size to the object pixel rate ``rate`` (None: "Full", the object re-pasted at its
    own size, s = 1). A rate the frame cannot hold about the centre is cut at the frame; the
    rate reached is recorded as ``object_pixel_rate``."""
    img, m, bg = _inputs(image, mask, background)
    if rate is not None and not 0 < rate <= 1:
        raise EditError(f"The object pixel rate must be in (0, 1], got {rate}.")
    before = float(m.mean())
    scale = 1.0 if rate is None else float(np.sqrt(rate / before))
    matrix = size_matrix(m, scale)
    out, new_mask = warp_object(img, m, bg, matrix, blend=blend)
    params = {
        "edit": "size",
        "target_rate": "full" if rate is None else rate,
        "rate_before": round(before, 6),
        "object_pixel_rate": round(float(new_mask.mean()), 6),
        "scale": round(scale, 6),
        "dx": round(float(matrix[0, 2]), 3),
        "dy": round(float(matrix[1, 2]), 3),
        "blend": blend,
    }
    return EditResult(out, new_mask, params)


def move_object(
    image: np.ndarray,
    mask: np.ndarray,
    background: np.ndarray,
    rng: np.random.Generator,
    *,
    blend: str = "poisson",
) -> EditResult:
    """T_position: the object's box moved to a uniformly drawn (x', y') inside the frame."""
    img, m, bg = _inputs(image, mask, background)
    x, y, w, h = object_box(m)
    height, width = m.shape
    nx = int(rng.integers(0, width - w + 1))
    ny = int(rng.integers(0, height - h + 1))
    matrix = np.array([[1.0, 0.0, nx - x], [0.0, 1.0, ny - y]])
    out, new_mask = warp_object(img, m, bg, matrix, blend=blend)
    params = {"edit": "position", "x": nx, "y": ny, "dx": nx - x, "dy": ny - y, "blend": blend}
    return EditResult(out, new_mask, params)


def rotation_matrix(mask: np.ndarray, angle: float) -> np.ndarray:
    """T_direction: rotation by ``angle`` degrees (counter-clockwise) about the box centre."""
    x, y, w, h = object_box(mask)
    return cv2.getRotationMatrix2D((x + (w - 1) / 2, y + (h - 1) / 2), angle, 1.0)


def rotate_object(
    image: np.ndarray,
    mask: np.ndarray,
    background: np.ndarray,
    rng: np.random.Generator | None = None,
    *,
    angle: float | None = None,
    max_angle: float = 180.0,
    blend: str = "poisson",
) -> EditResult:
    """T_direction by ``angle`` degrees, or by θ drawn uniformly in [-max_angle, max_angle]."""
    img, m, bg = _inputs(image, mask, background)
    if angle is None:
        if rng is None:
            raise EditError("Give an angle or a random generator to draw one.")
        angle = float(rng.uniform(-max_angle, max_angle))
    out, new_mask = warp_object(img, m, bg, rotation_matrix(m, angle), blend=blend)
    params = {
        "edit": "rotation",
        "angle": round(float(angle), 4),
        "object_pixel_rate": round(float(new_mask.mean()), 6),
        "blend": blend,
    }
    return EditResult(out, new_mask, params)
