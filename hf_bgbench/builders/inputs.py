"""Finding the photos of a build and their classes.

Three input forms are accepted (checked in this order):

1. ``--metadata CSV`` with at least the columns ``file`` (path relative to ``--images``) and
   ``wnid`` -- any folder structure, e.g. ImageNet's flat validation folder with the labels
   in a CSV, or ``/work/shared/data/in9_samples/metadata.csv``;
2. ImageNet's class-folder layout ``ROOT/<wnid>/<stem>.JPEG`` (the train layout, or a val
   folder sorted into class folders);
3. a flat folder of ``<wnid>_<anything>.JPEG`` (ImageNet's train file names, or photo
   collections named that way): the wnid is the file-name prefix.

The image id is the file stem (``n01440764_10026``), which must be unique.
"""

from __future__ import annotations

import csv
import re
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hf_bgbench.files import is_image_file
from hf_bgbench.labels import UNMAPPED, imagenet_index_of

WNID = re.compile(r"^n\d{8}$")
WNID_PREFIX = re.compile(r"^(n\d{8})_")


class InputLayoutError(ValueError):
    """The --images folder is in none of the accepted layouts."""


@dataclass(frozen=True)
class Photo:
    id: str
    path: str
    wnid: str
    label: int


def _from_metadata(root: Path, metadata: Path) -> list[tuple[Path, str]]:
    with open(metadata, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in ("file", "wnid") if c not in (reader.fieldnames or [])]
        if missing:
            raise InputLayoutError(
                f"--metadata {metadata}: missing column(s) {missing}; expected at least "
                "'file' (relative to --images) and 'wnid'."
            )
        found = [(root / row["file"], row["wnid"].strip()) for row in reader]
    absent = [str(p) for p, _ in found if not p.is_file()]
    if absent:
        raise FileNotFoundError(
            f"--metadata {metadata}: {len(absent)} listed file(s) are not under {root}, "
            f"e.g. {absent[0]}."
        )
    return found


def _xml_class(boxes: Path | None, stem: str) -> str | None:
    """The wnid in ``<boxes>/<stem>.xml``'s ``<object><name>`` (ImageNet's val annotations
    name the class there; the val photos themselves sit in one flat folder)."""
    if boxes is None or not (boxes / f"{stem}.xml").is_file():
        return None
    try:
        name = ET.parse(boxes / f"{stem}.xml").getroot().findtext("object/name")
    except ET.ParseError:
        return None
    return name.strip() if name and WNID.match(name.strip()) else None


def _scan(root: Path, boxes: Path | None = None) -> list[tuple[Path, str]]:
    class_dirs = sorted(p for p in root.iterdir() if p.is_dir() and WNID.match(p.name))
    if class_dirs:
        return [(f, d.name) for d in class_dirs for f in sorted(d.iterdir()) if is_image_file(f)]
    files = sorted(f for f in root.iterdir() if is_image_file(f))
    if not files:
        raise InputLayoutError(
            f"--images {root}: no photos found. Expected ROOT/<wnid>/<stem>.JPEG, "
            "a flat folder of <wnid>_<anything>.JPEG, or --metadata CSV (file,wnid)."
        )
    found, unnamed = [], []
    for f in files:
        prefix = WNID_PREFIX.match(f.name)
        wnid = prefix.group(1) if prefix else _xml_class(boxes, f.stem)
        if wnid is None:
            unnamed.append(f.name)
        else:
            found.append((f, wnid))
    if unnamed:
        raise InputLayoutError(
            f"--images {root}: {len(unnamed)} photo(s) have no class, e.g. {unnamed[0]!r}: "
            "in a flat folder, file names must start with the ImageNet wnid "
            "('n01440764_...'), or --boxes must hold <stem>.xml naming the class in "
            "<object><name> (ImageNet's val layout); otherwise give --metadata CSV with "
            "columns file,wnid."
        )
    return found


def class_of(wnid: str, imagenet_map: np.ndarray) -> int:
    """The benchmark label of an ImageNet-1k wnid: ``imagenet_map`` (int64[1000], the
    spec's ``label_maps["imagenet-1k"]``) at its index; ``UNMAPPED`` outside the benchmark.
    A ValueError names a wnid outside ImageNet-1k."""
    return int(imagenet_map[imagenet_index_of(wnid)])


def discover_photos(
    images: str | Path,
    imagenet_map: np.ndarray,
    metadata: str | Path | None = None,
    boxes: str | Path | None = None,
) -> tuple[list[Photo], Counter]:
    """Labelled photos sorted by id, and counts of skipped ones by reason.

    ``imagenet_map``: int64[1000], the benchmark label of each ImageNet-1k class
    (``UNMAPPED`` outside it; the spec's ``label_maps["imagenet-1k"]()``). ``boxes`` (an
    XML folder) names the class of flat, wnid-less files (ImageNet val).

    Skipped (counted, not fatal): ``outside_label_space`` (an ImageNet class outside the
    benchmark) and ``not_imagenet_wnid`` (not one of the 1000 ImageNet-1k wnids).
    """
    root = Path(images)
    if not root.is_dir():
        raise FileNotFoundError(f"--images {root}: no such folder.")
    xml_dir = Path(boxes) if boxes is not None and Path(boxes).is_dir() else None
    found = _from_metadata(root, Path(metadata)) if metadata else _scan(root, xml_dir)
    skipped: Counter = Counter()
    photos = []
    for path, wnid in found:
        try:
            label = class_of(wnid, imagenet_map)
        except ValueError:
            skipped["not_imagenet_wnid"] += 1
            continue
        if label == UNMAPPED:
            skipped["outside_label_space"] += 1
            continue
        photos.append(Photo(id=path.stem, path=str(path), wnid=wnid, label=label))
    photos.sort(key=lambda p: p.id)
    ids = [p.id for p in photos]
    repeated = [i for i, n in Counter(ids).items() if n > 1]
    if repeated:
        raise InputLayoutError(
            f"--images {root}: {len(repeated)} file stem(s) occur more than once "
            f"(e.g. {repeated[0]!r}); the stem is the image id and must be unique."
        )
    return photos, skipped
