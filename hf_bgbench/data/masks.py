"""Attribute masks as the tasks use them: the optional ``attribute_masks`` column (a list of
``{"attribute": str, "mask": image}`` per row, RIVAL10's) decoded, sized like the image and
binarised, in one place for saliency, graying and attribution."""

from __future__ import annotations

from typing import Any

import numpy as np
from PIL import Image

from hf_bgbench.data.loader import Geometry, decode_image

ATTRIBUTE_MASKS = "attribute_masks"
MASK_THRESHOLD = 128  # masks are stored 0/255: a pixel is part of the mask at >= 128


def attribute_masks(entries: Any, geometry: Geometry | None) -> tuple[list[str], np.ndarray]:
    """(names, bool (k, H, W) masks) of one row's non-empty attribute masks, sized like the
    image (the same geometry, nearest neighbour, so they stay binary)."""
    names, masks = [], []
    for entry in entries or ():
        mask = entry["mask"]
        if isinstance(mask, dict):  # stored undecoded: {"bytes", "path"}
            mask = decode_image(mask, f"the {entry['attribute']} mask")
        if not isinstance(mask, Image.Image):
            mask = Image.fromarray(np.asarray(mask, dtype=np.uint8))
        mask = mask.convert("L")
        if geometry is not None:
            mask = geometry(mask, mask=True)
        binary = np.asarray(mask) >= MASK_THRESHOLD
        if binary.any():
            names.append(str(entry["attribute"]))
            masks.append(binary)
    return names, np.asarray(masks, bool)
