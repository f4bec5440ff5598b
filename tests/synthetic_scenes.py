"""Synthetic ImageNet-style photos with a known object, box and mask, for the builder tests.

Each scene is a textured background in a class-specific hue with one elliptical object of a
contrasting colour. Photos are written as ImageNet distributes them
(``images/<wnid>/<wnid>_<k>.JPEG`` and PASCAL-VOC ``boxes/<wnid>/<wnid>_<k>.xml``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

from hf_bgbench.benchmarks.in9.labels import imagenet_to_in9
from hf_bgbench.labels import imagenet_classes

SIZE = (200, 160)  # width, height of a photo (small: GrabCut time grows with pixels)


def class_wnids() -> list[str]:
    """The first ImageNet wnid of each IN-9 class, in label order."""
    wnids, table = imagenet_classes()[0], imagenet_to_in9()
    return [wnids[int(np.flatnonzero(table == y)[0])] for y in range(9)]


def scene(label: int, k: int, size=SIZE, box_scale: float = 1.0):
    """(rgb uint8, truth mask bool, box (x0, y0, x1, y1)) of one synthetic photo."""
    w, h = size
    rng = np.random.default_rng(1000 * label + k)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    hue = np.array(
        [(label * 37) % 256, (label * 91 + 60) % 256, (label * 53 + 120) % 256], np.float32
    )
    stripes = 20 * np.sin(xx / (6 + label) + yy / 11)[..., None]
    background = 0.55 * hue + 40 + stripes + rng.normal(0, 6, (h, w, 3))
    cx, cy = w * (0.45 + 0.1 * rng.random()), h * (0.45 + 0.1 * rng.random())
    rx, ry = w * 0.16 * box_scale, h * 0.22 * box_scale
    truth = ((xx - cx) / rx) ** 2 + ((yy - cy) / ry) ** 2 <= 1.0
    colour = 255 - 0.55 * hue - 40
    obj = colour + 12 * np.sin(xx / 3)[..., None] + rng.normal(0, 4, (h, w, 3))
    rgb = np.where(truth[..., None], obj, background).clip(0, 255).astype(np.uint8)
    margin_x, margin_y = 0.12 * rx, 0.12 * ry
    box = (cx - rx - margin_x, cy - ry - margin_y, cx + rx + margin_x, cy + ry + margin_y)
    return rgb, truth, tuple(float(v) for v in box)


def voc_xml(filename: str, size, boxes) -> str:
    objects = "".join(
        f"<object><name>x</name><bndbox><xmin>{b[0]:.0f}</xmin><ymin>{b[1]:.0f}</ymin>"
        f"<xmax>{b[2]:.0f}</xmax><ymax>{b[3]:.0f}</ymax></bndbox></object>"
        for b in boxes
    )
    return (
        f"<annotation><filename>{filename}</filename><size><width>{size[0]}</width>"
        f"<height>{size[1]}</height><depth>3</depth></size>{objects}</annotation>"
    )


def write_photos(root: Path, per_class: int = 2, extras: bool = True) -> tuple[Path, Path]:
    """Write ``per_class`` photos per IN-9 class (+ awkward extras); returns (images, boxes).

    Extras (all in class 0, "dog"): one more good photo (dropped by balancing), one with two
    boxes, one whose box covers the whole crop, one whose box lies mostly outside the crop,
    one without annotation, and a photo of a class outside IN-9 (skipped).
    """
    images, boxes = root / "images", root / "boxes"
    wnids = class_wnids()
    for label, wnid in enumerate(wnids):
        for k in range(per_class + (1 if extras and label == 0 else 0)):
            _write(images, boxes, wnid, f"{wnid}_{k}", *scene(label, k))
    if extras:
        wnid = wnids[0]
        rgb, _, box = scene(0, 50)
        _write(images, boxes, wnid, f"{wnid}_multi", rgb, None, box, extra_box=(1, 1, 30, 30))
        rgb, _, _ = scene(0, 51)
        _write(images, boxes, wnid, f"{wnid}_huge", rgb, None, (0, 0, SIZE[0], SIZE[1]))
        rgb, _, _ = scene(0, 52)
        _write(images, boxes, wnid, f"{wnid}_edge", rgb, None, (0, 0, 24, SIZE[1]))
        rgb, _, _ = scene(0, 53)
        _write(images, None, wnid, f"{wnid}_nobox", rgb, None, None)
        outside = next(
            w for w, y in zip(imagenet_classes()[0], imagenet_to_in9(), strict=True) if y == -1
        )
        rgb, _, box = scene(0, 54)
        _write(images, boxes, outside, f"{outside}_0", rgb, None, box)
    return images, boxes


def _write(images, boxes, wnid, stem, rgb, _truth, box, extra_box=None) -> None:
    (images / wnid).mkdir(parents=True, exist_ok=True)
    Image.fromarray(rgb).save(images / wnid / f"{stem}.JPEG", quality=95)
    if boxes is not None and box is not None:
        (boxes / wnid).mkdir(parents=True, exist_ok=True)
        all_boxes = [box] + ([extra_box] if extra_box else [])
        size = (rgb.shape[1], rgb.shape[0])
        (boxes / wnid / f"{stem}.xml").write_text(voc_xml(f"{stem}.JPEG", size, all_boxes))
