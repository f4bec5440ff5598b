"""Synthetic ImageNet-style photos with a known object, box and mask, for the builder tests.

Each scene is the demo's (:mod:`hf_bgbench.benchmarks.in9.demo`): a textured background in a
class-specific hue with one elliptical object of a contrasting colour. Photos are written as
ImageNet distributes them (``images/<wnid>/<wnid>_<k>.JPEG`` and PASCAL-VOC
``boxes/<wnid>/<wnid>_<k>.xml``).
"""

from __future__ import annotations

from pathlib import Path

from hf_bgbench.benchmarks.in9.demo import (  # noqa: F401 -- the tests' names for them
    PHOTO_SIZE,
    class_wnids,
    scene,
    voc_xml,
    write_photo,
)
from hf_bgbench.benchmarks.in9.labels import imagenet_to_in9
from hf_bgbench.labels import imagenet_classes

SIZE = PHOTO_SIZE  # width, height of a photo (the demo's: GrabCut time grows with pixels)


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
    box_list = [box] + ([extra_box] if extra_box else []) if box is not None else []
    write_photo(images, boxes, wnid, stem, rgb, box_list if boxes is not None else [])
