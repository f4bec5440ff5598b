"""Test-time geometry of IN-9 (SPEC §1): shorter side to 256, centre crop 224.

Every variant is composited on the 256-pixel *working image* and then centre-cropped, so
the crop conventions here are torchvision's ``Resize(256)`` + ``CenterCrop(224)`` (the
preprocessing the published models were evaluated with). The two crop filters decide
whether an image's box is usable at all.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from PIL import Image

from hf_bgbench.builders.boxes import Box, Rect, rect_area

RESIZE = 256
CROP = 224
MAX_BOX_COVER = 0.90
"""Drop an image whose box covers more than this fraction of the 224 crop."""
MIN_BOX_SURVIVAL = 0.50
"""Drop an image when less than this fraction of its box lies inside the 224 crop."""


@dataclass(frozen=True)
class Geometry:
    """Where one photo lands: working size (after the resize) and the crop offset."""

    width: int
    height: int
    scale_x: float
    scale_y: float
    left: int
    top: int

    def to_working(self, box: Box) -> Box:
        """A box in original-image pixels, in working-image pixels."""
        x0, y0, x1, y1 = box
        return (x0 * self.scale_x, y0 * self.scale_y, x1 * self.scale_x, y1 * self.scale_y)

    def crop(self, array: np.ndarray) -> np.ndarray:
        """The centre 224x224 crop of a working-size array."""
        return array[self.top : self.top + CROP, self.left : self.left + CROP]

    def rect_in_crop(self, rect: Rect) -> Rect:
        """A working-image rect in crop coordinates, clipped to the crop."""
        x0, y0, x1, y1 = rect
        return (
            min(max(x0 - self.left, 0), CROP),
            min(max(y0 - self.top, 0), CROP),
            min(max(x1 - self.left, 0), CROP),
            min(max(y1 - self.top, 0), CROP),
        )


def working_geometry(width: int, height: int) -> Geometry:
    """torchvision's ``Resize(256)`` size rule and ``CenterCrop(224)`` offsets."""
    if width <= height:
        new_w, new_h = RESIZE, int(RESIZE * height / width)
    else:
        new_w, new_h = int(RESIZE * width / height), RESIZE
    return Geometry(
        width=new_w,
        height=new_h,
        scale_x=new_w / width,
        scale_y=new_h / height,
        left=int(round((new_w - CROP) / 2.0)),
        top=int(round((new_h - CROP) / 2.0)),
    )


def resize_to_working(image: Image.Image, geometry: Geometry) -> np.ndarray:
    """The RGB working image (uint8, HxWx3); PIL bilinear, as torchvision does on PIL input."""
    resized = image.convert("RGB").resize((geometry.width, geometry.height), Image.BILINEAR)
    return np.asarray(resized, dtype=np.uint8).copy()


def box_to_rect(box: Box, width: int, height: int) -> Rect:
    """The smallest integer rect holding a float box, clipped to the image."""
    x0, y0, x1, y1 = box
    rx0 = min(max(int(math.floor(x0)), 0), width)
    ry0 = min(max(int(math.floor(y0)), 0), height)
    rx1 = min(max(int(math.ceil(x1)), 0), width)
    ry1 = min(max(int(math.ceil(y1)), 0), height)
    return rx0, ry0, rx1, ry1


def crop_filter(rect: Rect, geometry: Geometry) -> str | None:
    """None if the box is usable, else the reason it is not.

    ``"box_covers_crop"``: the box covers more than 90% of the 224 crop (only-background
    variants would be nearly empty). ``"box_outside_crop"``: less than half of the box
    survives the crop (the foreground would be mostly gone). ``"empty_box"``: degenerate.
    """
    area = rect_area(rect)
    if area == 0:
        return "empty_box"
    inside = rect_area(geometry.rect_in_crop(rect))
    if inside > MAX_BOX_COVER * CROP * CROP:
        return "box_covers_crop"
    if inside < MIN_BOX_SURVIVAL * area:
        return "box_outside_crop"
    return None
