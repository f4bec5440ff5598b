"""Bounding boxes: reading ImageNet's annotations and estimating a box for unannotated photos.

Boxes are ``(xmin, ymin, xmax, ymax)`` float tuples in the pixel coordinates of the
*original* image (ImageNet's convention). Two annotation sources are read:

- PASCAL-VOC XML as ImageNet distributes it (ILSVRC ``Annotation`` layout:
  ``ROOT/<wnid>/<stem>.xml`` for train, ``ROOT/<stem>.xml`` for val), one
  ``<object><bndbox>`` per box;
- a CSV with a header ``file,xmin,ymin,xmax,ymax``, one row per box (several rows for one
  file mean several boxes). ``file`` may be a file name, a relative path or a stem; rows are
  matched to images by stem.

:func:`estimate_box` is the ``--no-boxes`` fallback (spectral-residual saliency, see there).
"""

from __future__ import annotations

import csv
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

import numpy as np

Box = tuple[float, float, float, float]
Rect = tuple[int, int, int, int]
"""Integer ``(x0, y0, x1, y1)``, half-open, in working-image pixels."""

CSV_COLUMNS = ("file", "xmin", "ymin", "xmax", "ymax")


def rect_area(rect: Rect) -> int:
    x0, y0, x1, y1 = rect
    return max(0, x1 - x0) * max(0, y1 - y0)


class BoxFormatError(ValueError):
    """An annotation file could not be read as boxes."""


def parse_voc_xml(path: str | Path) -> tuple[list[Box], tuple[int, int] | None]:
    """Boxes of a PASCAL-VOC XML file, and the ``(width, height)`` it declares (or None).

    The declared size matters: a few ImageNet annotations were made on a differently sized
    copy of the photo, and their boxes must be rescaled (see :func:`rescale_boxes`).
    """
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as err:
        raise BoxFormatError(f"{path}: not a valid PASCAL-VOC XML file ({err}).") from None
    size = None
    width, height = root.findtext("size/width"), root.findtext("size/height")
    if width and height and int(float(width)) > 0 and int(float(height)) > 0:
        size = (int(float(width)), int(float(height)))
    boxes: list[Box] = []
    for obj in root.iter("object"):
        bnd = obj.find("bndbox")
        if bnd is None:
            continue
        try:
            coords = tuple(float(bnd.findtext(k)) for k in ("xmin", "ymin", "xmax", "ymax"))
        except (TypeError, ValueError):
            raise BoxFormatError(
                f"{path}: an <object><bndbox> lacks numeric xmin/ymin/xmax/ymax."
            ) from None
        boxes.append(coords)  # type: ignore[arg-type]
    return boxes, size


def read_box_csv(path: str | Path) -> dict[str, list[Box]]:
    """stem -> boxes from a ``file,xmin,ymin,xmax,ymax`` CSV."""
    out: dict[str, list[Box]] = defaultdict(list)
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in CSV_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise BoxFormatError(
                f"{path}: box CSV lacks column(s) {missing}; expected a header "
                f"{','.join(CSV_COLUMNS)} (one row per box)."
            )
        for line, row in enumerate(reader, start=2):
            try:
                box = tuple(float(row[k]) for k in CSV_COLUMNS[1:])
            except (TypeError, ValueError):
                raise BoxFormatError(f"{path}:{line}: non-numeric box coordinates.") from None
            out[Path(row["file"]).stem].append(box)  # type: ignore[arg-type]
    return dict(out)


class BoxSource:
    """Looks up the annotated boxes of an image, from an XML folder or a CSV file."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if not self.path.exists():
            raise FileNotFoundError(f"--boxes {self.path}: no such file or folder.")
        self._csv = read_box_csv(self.path) if self.path.is_file() else None

    def lookup(self, wnid: str, stem: str) -> tuple[list[Box], tuple[int, int] | None] | None:
        """(boxes, declared size) of one image, or None when it has no annotation."""
        if self._csv is not None:
            return (self._csv[stem], None) if stem in self._csv else None
        for candidate in (self.path / wnid / f"{stem}.xml", self.path / f"{stem}.xml"):
            if candidate.is_file():
                return parse_voc_xml(candidate)
        return None


def rescale_boxes(
    boxes: list[Box], declared: tuple[int, int] | None, actual: tuple[int, int]
) -> list[Box]:
    """Map boxes annotated on a ``declared`` (w, h) image to the ``actual`` image size."""
    if declared is None or declared == actual:
        return boxes
    sx, sy = actual[0] / declared[0], actual[1] / declared[1]
    return [(x0 * sx, y0 * sy, x1 * sx, y1 * sy) for x0, y0, x1, y1 in boxes]


# --------------------------------------------------------------------------- estimation

ESTIMATE_SIDE = 64
"""The saliency map is computed on a thumbnail whose longer side is this many pixels."""


def spectral_residual_saliency(rgb: np.ndarray) -> np.ndarray:
    """Saliency map (float32, in [0, 1], thumbnail size) by the spectral residual method.

    Hou & Zhang (CVPR 2007): the log-amplitude spectrum minus its local average keeps what is
    "unexpected" in the image; transforming it back with the original phase highlights the
    object. Deterministic (no random state), cheap, and needs only NumPy/OpenCV.
    """
    import cv2  # here, not at the top: specs import the box types at registry load

    gray = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY).astype(np.float32)
    h, w = gray.shape
    scale = ESTIMATE_SIDE / max(h, w)
    small = cv2.resize(
        gray, (max(1, round(w * scale)), max(1, round(h * scale))), interpolation=cv2.INTER_AREA
    )
    spectrum = np.fft.fft2(small)
    log_amplitude = np.log(np.abs(spectrum) + 1e-8).astype(np.float32)
    residual = log_amplitude - cv2.blur(log_amplitude, (3, 3))
    saliency = np.abs(np.fft.ifft2(np.exp(residual + 1j * np.angle(spectrum)))) ** 2
    saliency = cv2.GaussianBlur(saliency.astype(np.float32), (0, 0), sigmaX=2.5)
    top = float(saliency.max())
    return saliency / top if top > 0 else saliency


ESTIMATE_MASS = 0.80
"""The estimated box holds this share of the (centre-weighted) saliency along each axis."""


def estimate_box(rgb: np.ndarray) -> Box:
    """Estimate the object's box in an RGB photo that has no annotation (``--no-boxes``).

    Method (documented in the dataset card): spectral-residual saliency on a 64-pixel
    thumbnail, weighted by a centre prior (a Gaussian with sigma = 1/3 of each side, because
    ImageNet objects are mostly centred); the box spans the central 80% of the saliency mass
    along each axis (10th to 90th percentile of the column and row sums). Percentiles of the
    mass, rather than a threshold, keep the box from collapsing onto one small salient patch
    (ImageNet objects typically fill half of the photo). Deterministic, so a ``--no-boxes``
    build stays byte-reproducible. A photo with no saliency at all gets the central 50%.
    """
    h, w = rgb.shape[:2]
    saliency = spectral_residual_saliency(rgb)
    sh, sw = saliency.shape
    ys = (np.arange(sh, dtype=np.float64) - (sh - 1) / 2) / (sh / 3)
    xs = (np.arange(sw, dtype=np.float64) - (sw - 1) / 2) / (sw / 3)
    weighted = saliency * np.exp(-0.5 * (ys[:, None] ** 2 + xs[None, :] ** 2))
    if not np.isfinite(weighted).all() or weighted.sum() <= 0:
        return (w * 0.25, h * 0.25, w * 0.75, h * 0.75)
    tail = (1.0 - ESTIMATE_MASS) / 2

    def span(marginal: np.ndarray) -> tuple[int, int]:
        cumulative = np.cumsum(marginal) / marginal.sum()
        lo = int(np.searchsorted(cumulative, tail))
        hi = int(np.searchsorted(cumulative, 1.0 - tail)) + 1
        return lo, min(max(hi, lo + 1), len(marginal))

    x0, x1 = span(weighted.sum(axis=0))
    y0, y1 = span(weighted.sum(axis=1))
    sx, sy = w / sw, h / sh
    return (x0 * sx, y0 * sy, min(float(w), x1 * sx), min(float(h), y1 * sy))
