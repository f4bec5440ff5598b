"""Object removal by inpainting (OpenCV Telea / Navier-Stokes) for a clean background."""

from __future__ import annotations

import cv2
import numpy as np

from hf_bgbench.edits.types import EditError, EditResult, as_image, as_mask

METHODS = {"telea": cv2.INPAINT_TELEA, "ns": cv2.INPAINT_NS}
DEFAULT_DILATE = 7
"""Pixels the mask grows by before inpainting: masks miss the object's soft edge, and an
edge left behind would be smeared into the whole hole."""


def dilate_mask(mask: np.ndarray, pixels: int) -> np.ndarray:
    """``mask`` grown by ``pixels`` (elliptic structuring element)."""
    if pixels <= 0:
        return mask.copy()
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * pixels + 1, 2 * pixels + 1))
    return cv2.dilate(mask.astype(np.uint8), kernel) > 0


def remove_object(
    image: np.ndarray,
    mask: np.ndarray,
    *,
    method: str = "telea",
    dilate: int = DEFAULT_DILATE,
    radius: int = 5,
) -> EditResult:
    """The background with the object inpainted away; the returned mask is empty.

    ``method``: "telea" (fast marching, Telea 2004) or "ns" (Navier-Stokes, Bertalmio 2001).
    """
    if method not in METHODS:
        raise EditError(f"Unknown inpainting method {method!r}; use one of {sorted(METHODS)}.")
    img = as_image(image)
    m = as_mask(mask, img)
    hole = dilate_mask(m, dilate)
    if hole.all():
        raise EditError("The object covers the whole image; there is no background to inpaint.")
    out = cv2.inpaint(img, hole.astype(np.uint8) * 255, radius, METHODS[method])
    params = {"edit": "remove", "method": method, "dilate": dilate, "radius": radius}
    return EditResult(out, np.zeros_like(m), params)
