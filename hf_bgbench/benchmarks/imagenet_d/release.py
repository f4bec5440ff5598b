"""The ImageNet-D release as the Hub dataset ``zcs15/ImageNet-D`` (and the authors' tarball)
lays it out, read as it is::

    ImageNet-D/{background,texture,material}/<class folder>/<name>.png
    ImageNet-D/questions/{background,texture,material}.csv

A subset folder is a variant; a class folder is one of the 113 (``alarm_clock`` ...), and a
folder that is not is refused by name (a wrong copy would otherwise score as if complete).
An image's id is its path under the release (``background/alarm_clock/x.png``), as the
questions table names it. The ``negative`` column, each image's hard negative for the
authors' VQA question, comes from ``questions/<subset>.csv``; a table whose rows disagree
with the folders is refused.
"""

from __future__ import annotations

import csv
import hashlib
from collections.abc import Sequence
from pathlib import Path

import datasets

from hf_bgbench.benchmarks.imagenet_d.download import imagenet_d_snapshot
from hf_bgbench.benchmarks.imagenet_d.facts import (
    CLEAN,
    NEGATIVE,
    QUESTION_COLUMNS,
    QUESTIONS_DIRNAME,
    RELEASE_DIRNAME,
    SOURCE_REPO,
    SPLIT,
    SUBSETS,
)
from hf_bgbench.benchmarks.imagenet_d.labels import folder_labels, name_labels
from hf_bgbench.data.imagefolder import OUTSIDE_CLASSES, is_image_folder, labelled_files
from hf_bgbench.data.reader import DataSourceError, Reader, files_signature
from hf_bgbench.data.schema import ID, IMAGE, LABEL, benchmark_features
from hf_bgbench.files import IMAGE_SUFFIXES
from hf_bgbench.hub.snapshots import snapshot_commit
from hf_bgbench.labels import UNMAPPED
from hf_bgbench.spec import BenchmarkSpec

LAYOUT_TEXT = (
    f"'{RELEASE_DIRNAME}/{{{','.join(SUBSETS)}}}/<class folder>/<image>.png' with "
    f"'{QUESTIONS_DIRNAME}/<subset>.csv' beside them"
)
NOT_IMAGES = "not_an_image"
EXAMPLES = 3


class ImageNetDLayoutError(DataSourceError):
    """The folder is not ImageNet-D's release layout, or its parts disagree."""


def find_release_root(path: str | Path) -> Path | None:
    """The folder holding the subset folders (``path`` or its ``ImageNet-D``), or None."""
    path = Path(path).expanduser()
    for candidate in (path, path / RELEASE_DIRNAME):
        if any(_class_dirs(candidate / s) for s in SUBSETS):
            return candidate
    return None


def _class_dirs(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(d for d in folder.iterdir() if d.is_dir() and not d.name.startswith("."))


def subset_files(root: Path, subset: str) -> tuple[list[tuple[str, Path, int]], list[str]]:
    """((id, path, label) of every image of ``subset``, in the authors' order: class folders
    sorted, files sorted; the files that are not images). A class folder that is not one of
    the 113 is refused."""
    labels = folder_labels()
    dirs = _class_dirs(root / subset)
    unknown = [d.name for d in dirs if d.name not in labels]
    if unknown:
        raise ImageNetDLayoutError(
            f"{root / subset}: {len(unknown)} class folder(s) are not ImageNet-D classes: "
            f"{', '.join(unknown[:EXAMPLES])}{' ...' if len(unknown) > EXAMPLES else ''}. "
            "The release has one folder per class (alarm_clock ... wok; `bgbench list "
            "--classes imagenet-d` lists the classes); move the others out of it."
        )
    rows, others = [], []
    for d in dirs:
        for f in sorted(p for p in d.iterdir() if p.is_file()):
            image_id = f"{subset}/{d.name}/{f.name}"
            if f.suffix.lower() in IMAGE_SUFFIXES:
                rows.append((image_id, f, labels[d.name]))
            else:
                others.append(image_id)
    if not rows:
        raise ImageNetDLayoutError(f"{root / subset} holds no image.")
    return rows, others


def read_questions(path: Path, subset: str, labels: dict[str, int]) -> dict[str, int]:
    """image id -> hard negative label from a questions table (``labels``: id -> the folder's
    label). The authors' rule: the top guess when it is wrong, else the second. A row whose
    ground truth is not its folder's class, or that names no ImageNet-D class, is refused;
    rows of images not in the folder are left out (a partial copy of the release)."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            table = csv.DictReader(f, delimiter="\t")
            header, rows = table.fieldnames or [], list(table)
    except (OSError, UnicodeDecodeError, csv.Error) as err:
        raise ImageNetDLayoutError(
            f"{path}: cannot read it as a questions table ({err})."
        ) from None
    missing = [c for c in QUESTION_COLUMNS if c not in header]
    if missing:
        raise ImageNetDLayoutError(
            f"{path} does not match ImageNet-D's questions table: it lacks column(s) "
            f"{', '.join(missing)} (a tab-separated table with {', '.join(QUESTION_COLUMNS)})."
        )
    names = name_labels()
    out: dict[str, int] = {}
    for n, row in enumerate(rows, start=2):
        image_id = (row["image_dir"] or "").strip()  # a short row's missing cells: None
        if image_id not in labels:
            continue
        where = f"{path}, line {n} ({image_id})"
        said = [(row[c] or "").strip() for c in QUESTION_COLUMNS[1:]]
        unknown = [s for s in said if s not in names]
        if unknown:
            raise ImageNetDLayoutError(f"{where}: {unknown[0]!r} is not an ImageNet-D class name.")
        truth, top1, top2 = (names[s] for s in said)
        if truth != labels[image_id]:
            raise ImageNetDLayoutError(
                f"{where}: its ground truth {said[0]!r} is not the class of the image's folder; "
                f"the questions table does not match the images of {subset!r}."
            )
        negative = top1 if top1 != truth else top2
        if negative == truth:
            raise ImageNetDLayoutError(f"{where}: both guesses are the ground truth.")
        out[image_id] = negative
    return out


class ImageNetDRelease(Reader):
    """The release's own folders (see the module docstring)."""

    kind = "imagenet-d-release"
    clean_folder: Path
    precropped = False  # generated PNGs at their own size: the model's own eval transform
    layout_hint = LAYOUT_TEXT
    hub_repos = (SOURCE_REPO,)

    @classmethod
    def detect(
        cls, data: str, spec: BenchmarkSpec, clean: str | Path | None = None
    ) -> Reader | None:
        """A reader of the release at ``data`` (or the Hub id); ``clean``: the folder of clean
        ImageNet photos (default: ``clean/`` beside the subsets, when there)."""
        if str(data).lower() == SOURCE_REPO.lower():  # the Hub dataset, in its own layout
            data = str(imagenet_d_snapshot())
        root = find_release_root(data)
        if root is None or not Path(data).is_dir():
            return None
        clean = Path(clean).expanduser() if clean is not None else root / CLEAN
        if clean.exists() and not (clean.is_dir() and is_image_folder(clean)):
            raise ImageNetDLayoutError(f"{clean} holds no photo (ImageNet wnid class folders).")
        present = tuple(s for s in SUBSETS if _class_dirs(root / s))
        reader = cls(str(root.resolve()), present + ((CLEAN,) if clean.is_dir() else ()), spec)
        reader.clean_folder = clean
        return reader

    def revision(self) -> str | None:
        """The Hub commit, when the folder is a snapshot in the Hugging Face cache."""
        return snapshot_commit(self.location)

    def questions_path(self, subset: str) -> Path:
        return Path(self.location) / QUESTIONS_DIRNAME / f"{subset}.csv"

    def _load(self, variant: str, columns: Sequence[str], split: str) -> datasets.Dataset:
        self._test_split_only(split)
        if variant == CLEAN:
            return self._clean(columns)
        files, others = subset_files(Path(self.location), variant)
        self.note_skipped(variant, split, {NOT_IMAGES: others})
        data = {
            IMAGE: [str(p) for _, p, _ in files],
            LABEL: [y for _, _, y in files],
            ID: [i for i, _, _ in files],
        }
        extra = {}
        if NEGATIVE in columns or self.questions_path(variant).is_file():
            data[NEGATIVE] = self._negatives(variant, {i: y for i, _, y in files})
            extra[NEGATIVE] = datasets.ClassLabel(names=list(self.spec.classes))
        features = benchmark_features(self.spec.classes, extra=extra)
        return datasets.Dataset.from_dict(data, features=features)

    def _clean(self, columns: Sequence[str]) -> datasets.Dataset:
        """The clean photos, labelled by their wnid folders through the 113 -> 125 map (photos
        of other classes skipped and counted); they have no question to ask."""
        if NEGATIVE in columns:
            raise ImageNetDLayoutError(
                f"The {CLEAN} photos have no two-way question (no hard negative): score them "
                "with a classifier or a zero-shot model, or leave them out with --variants."
            )
        folder = self.clean_folder
        files, outside = labelled_files(folder, self.spec)
        self.note_skipped(CLEAN, SPLIT, {OUTSIDE_CLASSES: outside})
        data = {
            IMAGE: [str(p) for p, _ in files],
            LABEL: [y for _, y in files],
            ID: [f"{CLEAN}/{p.relative_to(folder).as_posix()}" for p, _ in files],
        }
        return datasets.Dataset.from_dict(data, features=benchmark_features(self.spec.classes))

    def _negatives(self, subset: str, labels: dict[str, int]) -> list[int]:
        path = self.questions_path(subset)
        if not path.is_file():
            raise ImageNetDLayoutError(
                f"{path} is missing: each image's question (the authors' VQA protocol) is read "
                f"from it. The Hub dataset {QUESTIONS_DIRNAME}/ folder has it; copy it beside "
                "the subsets."
            )
        negatives = read_questions(path, subset, labels)
        absent = [i for i in labels if i not in negatives]
        if absent:
            raise ImageNetDLayoutError(
                f"{path} does not match the images of {subset!r}: {len(absent)} of {len(labels)} "
                f"image(s) have no row, e.g. {', '.join(absent[:EXAMPLES])}. Use the questions "
                "table released with these images."
            )
        return [negatives.get(i, UNMAPPED) for i in labels]

    def _signature(self, ds: datasets.Dataset) -> str:
        # the questions decide a VLM's prompts, so they are part of what the data is
        h = hashlib.sha256(files_signature(ds).encode())
        for subset in SUBSETS:
            path = self.questions_path(subset)
            if path.is_file():
                h.update(f"{subset}|".encode() + hashlib.sha256(path.read_bytes()).digest())
        return h.hexdigest()

    def _missing_variant_hint(self) -> str:
        return (
            f" The release has the subsets {', '.join(SUBSETS)}; the {CLEAN} photos (real "
            f"ImageNet photos of its classes) go in a {CLEAN}/ folder of wnid class folders "
            "beside them."
        )
