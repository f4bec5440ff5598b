"""A plain folder of labelled photos, read as the ``original`` variant.

Labels come from, in this order:

1. ``metadata.csv`` beside the images (or one level up, with images in ``images/``) with a
   ``file`` (or ``file_name``) column and one of: ``label`` (index or class name),
   ``<benchmark>_index`` (e.g. ``in9_index``), ``imagenet_index`` or ``wnid`` (mapped through
   the benchmark's published ImageNet map);
2. class sub-folders named after the benchmark classes (optionally ``NN_`` prefixed, e.g.
   ``00_dog``) or after ImageNet wnids;
3. file names starting with an ImageNet wnid (``n02085620_*.JPEG``).

Photos whose class is outside the benchmark are skipped and counted, never scored.
"""

from __future__ import annotations

import csv
import logging
import re
from collections.abc import Collection
from pathlib import Path

import datasets

from hf_bgbench.data.reader import Reader
from hf_bgbench.data.schema import ID, IMAGE, LABEL, benchmark_features
from hf_bgbench.files import IMAGE_SUFFIXES
from hf_bgbench.labels import UNMAPPED, imagenet_index_of, names_preview
from hf_bgbench.spec import BenchmarkSpec

log = logging.getLogger(__name__)
_WNID = re.compile(r"^(n\d{8})")


class ImageFolderError(ValueError):
    """The photo folder cannot be labelled."""


def _images(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES)


def _metadata_csv(folder: Path) -> tuple[Path, Path] | None:
    """(csv path, image folder) if a metadata.csv describes this folder."""
    if (folder / "metadata.csv").is_file():
        images = folder / "images" if (folder / "images").is_dir() else folder
        return folder / "metadata.csv", images
    return None


def is_image_folder(folder: str | Path) -> bool:
    folder = Path(folder)
    if _metadata_csv(folder):
        return True
    if _images(folder):
        return True
    return any(_images(d) for d in folder.iterdir() if d.is_dir())


class _Labeller:
    """Turns a class name, index or wnid into a benchmark label."""

    def __init__(self, spec: BenchmarkSpec):
        self.spec = spec
        self.names = {n.lower(): i for i, n in enumerate(spec.classes)}
        self.imagenet_map = (
            spec.label_maps["imagenet-1k"]() if "imagenet-1k" in spec.label_maps else None
        )

    def from_imagenet_index(self, index: int) -> int:
        if self.imagenet_map is None:
            raise ImageFolderError(f"The {self.spec.name} benchmark has no ImageNet class map.")
        return int(self.imagenet_map[index])

    def from_wnid(self, wnid: str) -> int:
        try:
            return self.from_imagenet_index(imagenet_index_of(wnid))
        except ValueError as err:
            raise ImageFolderError(str(err)) from None

    def from_name_or_index(self, value: str) -> int:
        value = value.strip()
        if value.lstrip("-").isdigit():
            label = int(value)
            if not -1 <= label < self.spec.num_classes:
                raise ImageFolderError(
                    f"label {label} out of range for {self.spec.name} "
                    f"(0..{self.spec.num_classes - 1})."
                )
            return label
        name = re.sub(r"^\d+_", "", value).lower()
        if name in self.names:
            return self.names[name]
        if _WNID.match(value):
            return self.from_wnid(value)
        raise ImageFolderError(
            f"{value!r} is neither a {self.spec.name} class "
            f"({names_preview(self.spec.classes, self.spec.name)}), a label index, nor an "
            "ImageNet wnid."
        )


def _from_csv(csv_path: Path, image_dir: Path, lab: _Labeller) -> list[tuple[Path, int]]:
    with open(csv_path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise ImageFolderError(f"{csv_path} has no rows.")
    cols = rows[0].keys()
    file_col = next((c for c in ("file", "file_name") if c in cols), None)
    if file_col is None:
        raise ImageFolderError(
            f"{csv_path} needs a 'file' or 'file_name' column (has {list(cols)})."
        )
    bench_col = f"{lab.spec.name}_index"
    out = []
    for line, row in enumerate(rows, start=2):  # line 1: the header
        if None in row.values():  # csv.DictReader fills a row cut short with None
            raise ImageFolderError(
                f"{csv_path}, line {line}: the row has fewer fields than the header "
                f"({', '.join(cols)}); give every photo a value in each column."
            )
        try:
            label = _csv_label(row, cols, bench_col, lab)
        except ImageFolderError as err:
            raise ImageFolderError(f"{csv_path}, line {line} ({row[file_col]}): {err}") from None
        if label is None:
            raise ImageFolderError(
                f"{csv_path} needs a label column: 'label', '{bench_col}', "
                "'imagenet_index' or 'wnid'."
            )
        path = image_dir / row[file_col]
        if not path.is_file():
            raise ImageFolderError(
                f"{csv_path} lists {row[file_col]!r}, which is not in {image_dir}."
            )
        out.append((path, label))
    return out


def _csv_index(value: str, column: str, count: int, what: str, outside: bool = False) -> int:
    """A class index of a metadata.csv column, checked to be a whole number in 0..count-1
    (with ``outside``, also -1: a photo outside the benchmark's classes, skipped and counted)."""
    text = value.strip()
    lowest = -1 if outside else 0
    if not re.fullmatch(r"-?\d+", text) or not lowest <= int(text) < count:
        also = " (or -1 for a photo outside them, skipped and counted)" if outside else ""
        raise ImageFolderError(
            f"{column} {value!r} is not {what}: give a whole number 0..{count - 1}{also}."
        )
    return int(text)


def _csv_label(
    row: dict[str, str], cols: Collection[str], bench_col: str, lab: _Labeller
) -> int | None:
    """The benchmark label of one metadata.csv row (None: the file has no label column)."""
    if "label" in cols:
        return lab.from_name_or_index(row["label"])
    if bench_col in cols:
        count = lab.spec.num_classes
        what = f"one of the {count} {lab.spec.name} class indices"
        return _csv_index(row[bench_col], bench_col, count, what, outside=True)
    if "imagenet_index" in cols:
        index = _csv_index(row["imagenet_index"], "imagenet_index", 1000, "an ImageNet-1k index")
        return lab.from_imagenet_index(index)
    if "wnid" in cols:
        return lab.from_wnid(row["wnid"])
    return None


def _from_layout(folder: Path, lab: _Labeller) -> list[tuple[Path, int]]:
    subdirs = sorted(d for d in folder.iterdir() if d.is_dir() and _images(d))
    loose = _images(folder)
    if subdirs and loose:  # read by folder names, they would be left out without a word
        raise ImageFolderError(
            f"{folder} holds photos both in class sub-folders ({subdirs[0].name}/, ...) and at "
            f"its top level ({len(loose)}, e.g. {loose[0].name}), where no folder names their "
            "class: move each into its class's sub-folder (or out of the folder), or list "
            "every photo with its label in a metadata.csv."
        )
    if subdirs:
        return [(p, lab.from_name_or_index(d.name)) for d in subdirs for p in _images(d)]
    out = []
    for p in loose:
        m = _WNID.match(p.name)
        if not m:
            raise ImageFolderError(
                f"Cannot tell the class of {p.name}: use class sub-folders, a metadata.csv, or "
                "file names starting with the ImageNet wnid (n02085620_...)."
            )
        out.append((p, lab.from_wnid(m.group(1))))
    return out


OUTSIDE_CLASSES = "outside_benchmark_classes"
"""Why a photo is skipped: its class is not one of the benchmark's (counted in results)."""
MIN_PHOTO_SIDE = 16
TOO_SMALL = f"smaller_than_{MIN_PHOTO_SIDE}_px"
"""Why a photo is skipped: its shorter side is below :data:`MIN_PHOTO_SIDE` pixels (read
from its header), so upsampled to the model's input it would hold no object to classify."""


def label_source(folder: str | Path) -> str:
    """Where the labels of a photo folder come from, in words (recorded as an assumption
    when they are read from names rather than stated in a metadata.csv)."""
    folder = Path(folder)
    if _metadata_csv(folder):
        return "metadata.csv"
    if any(d.is_dir() and _images(d) for d in folder.iterdir()):
        return "folder names"
    return "file names"


def labelled_files(
    folder: str | Path, spec: BenchmarkSpec
) -> tuple[list[tuple[Path, int]], list[str]]:
    """(path, label) pairs of the photos in the benchmark, and the photos outside it."""
    folder = Path(folder)
    lab = _Labeller(spec)
    meta = _metadata_csv(folder)
    pairs = _from_csv(*meta, lab) if meta else _from_layout(folder, lab)
    kept = [(p, y) for p, y in pairs if y != UNMAPPED]
    skipped = [str(p.relative_to(folder)) for p, y in pairs if y == UNMAPPED]
    if skipped:
        log.warning(
            "%s: %d photo(s) are outside the %s classes and are skipped (counted in results).",
            folder,
            len(skipped),
            spec.name,
        )
    if not kept:
        raise ImageFolderError(f"{folder}: no photo belongs to a {spec.name} class.")
    return kept, skipped


def load_image_folder(folder: str | Path, spec: BenchmarkSpec) -> datasets.Dataset:
    ds, _ = _image_folder(folder, spec)
    return ds


def too_small(files: list[tuple[Path, int]]) -> list[Path]:
    """The photos whose shorter side is below :data:`MIN_PHOTO_SIDE`, from their headers
    alone (one whose header cannot be read, or too large to open, is left to the decoder,
    which names it)."""
    from PIL import Image

    small = []
    for path, _ in files:
        try:
            with Image.open(path) as image:
                width, height = image.size
        except (OSError, ValueError, Image.DecompressionBombError):  # the decoder names it
            continue
        if min(width, height) < MIN_PHOTO_SIDE:
            small.append(path)
    return small


def _image_folder(
    folder: str | Path, spec: BenchmarkSpec
) -> tuple[datasets.Dataset, dict[str, list[str]]]:
    files, skipped = labelled_files(folder, spec)
    small = set(too_small(files))
    if small:
        log.warning(
            "%s: %d photo(s) are smaller than %d px on a side and are skipped (counted in "
            "results): upsampled to the model's input they hold no object to classify.",
            folder,
            len(small),
            MIN_PHOTO_SIDE,
        )
        files = [(p, y) for p, y in files if p not in small]
        if not files:
            raise ImageFolderError(
                f"{folder}: every photo of a {spec.name} class is smaller than "
                f"{MIN_PHOTO_SIDE} px on a side; give photos of the object itself."
            )
    ds = datasets.Dataset.from_dict(
        {
            IMAGE: [str(p) for p, _ in files],
            LABEL: [y for _, y in files],
            ID: [p.stem for p, _ in files],
        },
        features=benchmark_features(spec.classes),
    )
    ds.info.description = f"skipped_outside_benchmark={len(skipped)}"
    relative = [str(p.relative_to(folder)) for p in sorted(small)]
    return ds, {OUTSIDE_CLASSES: skipped, TOO_SMALL: relative}


class PhotoFolder(Reader):
    """A folder of labelled photos: the benchmark's reference variant (``original``) only."""

    kind = "image-folder"
    precropped = False  # raw photos get the model's own resize + centre crop
    layout_hint = "a folder of photos (class sub-folders, or a metadata.csv with file and label)"

    @classmethod
    def detect(cls, data: str, spec: BenchmarkSpec) -> Reader | None:
        path = Path(data).expanduser()
        if not (path.is_dir() and is_image_folder(path)):
            return None
        return cls(str(path.resolve()), (spec.reference_variant,), spec)

    def _load(self, variant: str, columns, split: str) -> datasets.Dataset:
        self._test_split_only(split)
        if label_source(self.location) == "file names":
            self.assume(
                "the photos' labels are read from the ImageNet wnid each file name starts with "
                "(n02085620_...); a metadata.csv (file, label columns) or class sub-folders "
                "state them instead"
            )
        ds, skipped = _image_folder(self.location, self.spec)
        self.note_skipped(variant, split, skipped)
        return ds

    def _missing_variant_hint(self) -> str:
        return f" A plain photo folder only provides {self.spec.reference_variant!r}."
