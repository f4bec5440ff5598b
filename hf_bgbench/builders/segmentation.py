"""Foreground masks by GrabCut (SPEC §1), reproducible per image.

``cv2.grabCut`` initialises its colour models with k-means, which draws from OpenCV's
per-thread RNG. Seeding that RNG from ``(build seed, image id, attempt)`` right before each
call makes every mask a function of the image alone, independent of which worker process
handles it or in what order.
"""

from __future__ import annotations

import hashlib

import cv2
import numpy as np

from hf_bgbench.builders.boxes import Rect, rect_area

GRABCUT_ITERATIONS = 5
MIN_FOREGROUND_FRACTION = 0.10
"""Segmentation fails when the foreground is less than this fraction of the box area."""
GRABCUT_ATTEMPTS = 3
"""Tries (each with its own RNG seed) before an image is dropped as a GrabCut failure."""


def image_seed(seed: int, image_id: str, attempt: int = 0) -> int:
    """A 31-bit seed derived from the build seed, the image id and the attempt number."""
    digest = hashlib.sha256(f"{seed}/{image_id}/{attempt}".encode()).digest()
    return int.from_bytes(digest[:4], "little") & 0x7FFFFFFF


def grabcut_once(rgb: np.ndarray, rect: Rect, rng_seed: int) -> np.ndarray:
    """Boolean foreground mask of one GrabCut run (5 iterations, GC_INIT_WITH_RECT)."""
    x0, y0, x1, y1 = rect
    mask = np.zeros(rgb.shape[:2], np.uint8)
    bgd_model = np.zeros((1, 65), np.float64)
    fgd_model = np.zeros((1, 65), np.float64)
    bgr = np.ascontiguousarray(rgb[:, :, ::-1])
    cv2.setRNGSeed(int(rng_seed))
    cv2.grabCut(
        bgr,
        mask,
        (x0, y0, x1 - x0, y1 - y0),
        bgd_model,
        fgd_model,
        GRABCUT_ITERATIONS,
        cv2.GC_INIT_WITH_RECT,
    )
    return (mask == cv2.GC_FGD) | (mask == cv2.GC_PR_FGD)


def grabcut_foreground(
    rgb: np.ndarray,
    rect: Rect,
    seed: int,
    image_id: str,
    attempts: int = GRABCUT_ATTEMPTS,
) -> tuple[np.ndarray | None, int]:
    """(foreground mask or None on failure, attempts used) for the object inside ``rect``.

    An attempt fails when the foreground is under 10% of the box area or OpenCV raises
    (e.g. a box that leaves no background pixel to model). Retrying with a fresh seed
    re-draws the k-means initialisation, which is what occasionally collapses the mask.
    """
    box_area = rect_area(rect)
    for attempt in range(attempts):
        try:
            fg = grabcut_once(rgb, rect, image_seed(seed, image_id, attempt))
        except cv2.error:
            continue
        if box_area and fg.sum() >= MIN_FOREGROUND_FRACTION * box_area:
            return fg, attempt + 1
    return None, attempts
