"""The released ImageNet-E layout (SPEC §3): detect it, name its edits, read it.

The released archive (as read by the evaluation code of two independent public repositories,
see dataset_scripts/README.md) holds one **flat** folder per edit and a label file::

    ROOT/labels.txt                 # "<file name>\t<ImageNet-1k index>" per line
    ROOT/<edit folder>/<stem>.<ext> # e.g. ROOT/20_hard/ILSVRC2012_val_00000293.png

with the edit folders of :data:`RELEASE_FOLDERS` (``ori`` and ``full`` hold ``.JPEG``, the
others ``.png``). The form with ImageNet class folders inside each edit folder
(``ROOT/<edit folder>/<wnid>/<stem>.<ext>``, the label from the wnid) is read too, e.g. for
``--original`` ImageNet validation photos or trees written by hand.

``ROOT`` may also be the parent of a single folder holding the edit folders (what an archive
unpacks to). Edit folder names are mapped onto the benchmark's edit names
(:data:`.edit_names.IMAGENET_E_EDITS`) by :data:`FOLDER_ALIASES` after
normalising them (lower case; spaces, ``=`` and ``-`` between words become ``_``); our own
names are accepted as they are. The id of a row is the file stem, shared across edits. Rows
are sorted by (label, id) so every edit lists the same ids in the same order.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import datasets
import numpy as np

from hf_bgbench.data.reader import DataSourceError, Reader
from hf_bgbench.data.schema import ID, IMAGE, LABEL, benchmark_features
from hf_bgbench.files import IMAGE_SUFFIXES
from hf_bgbench.labels import imagenet_wnid_index
from hf_bgbench.spec import BenchmarkSpec

OBJECT_PIXEL_RATE = "object_pixel_rate"
EDIT_PARAMS = "edit_params"
WNID_PATTERN = re.compile(r"^n\d{8}$")

LABELS_FILE = "labels.txt"
RELEASE_FOLDERS: dict[str, str] = {
    "ori": "original",
    "rec": "bg_inversion",  # reconstruction: λ = 0
    "20_smooth": "bg_simpler",  # λ = -20 (the authors' "smooth" guidance)
    "20_hard": "bg_complex",  # λ = +20 (their "hard" flag)
    "20_adv": "bg_complex_adv",
    "random_bg": "bg_random",
    "full": "size_full",
    "01": "size_0.1",
    "008": "size_0.08",
    "005": "size_0.05",
    "rp": "position",  # random position
    "rd": "rotation",  # random direction
}
"""The released folder names (verified, see dataset_scripts/README.md) -> our edit names."""

# normalised folder name -> our edit name: the release's names, then other spellings (the
# paper's λ values, object pixel rates, our own names) for trees written by hand.
FOLDER_ALIASES: dict[str, str] = {
    **RELEASE_FOLDERS,
    **{a: "original" for a in ("original", "origin", "ori", "clean", "imagenet", "val")},
    **{a: "bg_inversion" for a in ("0", "lambda_0", "inversion", "bg_0", "bg_inversion")},
    **{a: "bg_simpler" for a in ("_20", "lambda__20", "bg__20", "simpler", "bg_simpler")},
    **{a: "bg_complex" for a in ("20", "lambda_20", "bg_20", "complex", "bg_complex")},
    **{
        a: "bg_complex_adv"
        for a in ("20_adv", "lambda_20_adv", "bg_20_adv", "adv", "complex_adv", "bg_complex_adv")
    },
    **{a: "bg_random" for a in ("random_bg", "bg_random", "random_background", "rand_bg")},
    **{a: "size_full" for a in ("full", "size_full", "rate_full")},
    **{a: "size_0.1" for a in ("0.1", "size_0.1", "rate_0.1", "0.10")},
    **{a: "size_0.08" for a in ("0.08", "size_0.08", "rate_0.08")},
    **{a: "size_0.05" for a in ("0.05", "size_0.05", "rate_0.05")},
    **{a: "position" for a in ("position", "random_pos", "random_position", "pos", "rp")},
    **{a: "rotation" for a in ("rotation", "rot", "random_rot", "random_rotation", "direction")},
}
LAYOUT_TEXT = (
    "one folder per edit (the release's 'ori', 'rec', '20_smooth', '20_hard', '20_adv', "
    "'random_bg', 'full', '01', '008', '005', 'rp', 'rd', or our names 'bg_complex', "
    "'size_0.05', ...) holding the images, with labels.txt ('<file>\\t<ImageNet-1k index>') "
    "next to them, or holding ImageNet class folders named by wnid ('n01440764/')"
)


class ImageNetELayoutError(DataSourceError):
    """The folder is not the released ImageNet-E layout."""


def normalise_folder_name(name: str) -> str:
    """Lower case; spaces, '=' and '-' become '_' (so '-20' -> '_20', 'λ=20' -> 'λ_20')."""
    return re.sub(r"[\s=\-]", "_", name.strip().lower()).replace("λ", "lambda")


def edit_of_folder(name: str, known: tuple[str, ...]) -> str | None:
    """Our edit name of a release folder (None: not an edit folder)."""
    if name in known:
        return name
    edit = FOLDER_ALIASES.get(normalise_folder_name(name))
    return edit if edit in known else None


def _class_dirs(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_dir() and WNID_PATTERN.match(p.name))


def _flat_images(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES)


def read_labels(root: Path) -> dict[str, int] | None:
    """id (file stem) -> ImageNet-1k index from ``root/labels.txt`` (None: no such file).
    Each line is ``<file name>\t<index>``; a malformed line or an index outside 0-999 is an
    error naming the line."""
    path = Path(root) / LABELS_FILE
    if not path.is_file():
        return None
    labels: dict[str, int] = {}
    lines: dict[str, int] = {}  # id -> the line that gave its label
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        parts = line.strip().split("\t") if "\t" in line else line.split()
        try:
            name, label = parts
            index = int(label)
        except ValueError:
            index, name = -1, line
        if not 0 <= index < 1000:
            raise ImageNetELayoutError(
                f"{path}, line {number}: expected '<file name><TAB><ImageNet-1k index 0-999>', "
                f"got {line.strip()!r}."
            )
        key = name.split(".")[0]
        if key in labels and labels[key] != index:
            raise ImageNetELayoutError(
                f"{path}: {key!r} is listed twice with different labels (line {lines[key]}: "
                f"{labels[key]}, line {number}: {index}); keep the line with its right label."
            )
        labels[key], lines[key] = index, number
    return labels


def edit_folders(root: Path, spec: BenchmarkSpec, *, strict: bool = False) -> dict[str, Path]:
    """edit -> its folder under ``root`` (in the spec's order); an error if two folders
    map onto one edit. ``strict`` (reading or converting a tree found to be this layout): a
    folder that is no edit, or an edit folder without images, is an error too -- it would
    otherwise be left out of the scores without a word."""
    found: dict[str, Path] = {}
    unknown: list[str] = []
    empty: list[str] = []
    for child in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        edit = edit_of_folder(child.name, spec.variants)
        if edit is None:
            unknown.append(child.name)
            continue
        if not (_class_dirs(child) or _flat_images(child)):
            empty.append(f"{child.name} ({edit})")
            continue
        if edit in found:
            raise ImageNetELayoutError(
                f"{root}: both {found[edit].name!r} and {child.name!r} map onto edit {edit!r}; "
                "keep one of them (or rename the other to an edit it stands for)."
            )
        found[edit] = child
    if strict and found and unknown:
        raise ImageNetELayoutError(
            f"{root}: folder(s) {', '.join(repr(u) for u in unknown)} are no ImageNet-E edit "
            f"(the release's {', '.join(RELEASE_FOLDERS)} or our {', '.join(spec.variants)}); "
            "rename each to the edit it holds, or move it out of the tree."
        )
    if strict and found and empty:
        raise ImageNetELayoutError(
            f"{root}: edit folder(s) {', '.join(empty)} hold no images, directly or in wnid "
            "class folders; fill them or remove them."
        )
    return {e: found[e] for e in spec.variants if e in found}


def find_imagenet_e_root(path: str | Path, spec: BenchmarkSpec) -> Path:
    """The folder holding the edit folders (``path`` itself or its only sub-folder)."""
    path = Path(path).expanduser()
    if not path.is_dir():
        raise ImageNetELayoutError(f"{path}: no such folder (expected {LAYOUT_TEXT}).")
    candidates = [path]
    subdirs = [p for p in path.iterdir() if p.is_dir() and not p.name.startswith(".")]
    if len(subdirs) == 1:
        candidates.append(subdirs[0])
    for candidate in candidates:
        if edit_folders(candidate, spec):
            return candidate
    seen = ", ".join(sorted(p.name for p in subdirs)[:12]) or "nothing"
    raise ImageNetELayoutError(
        f"{path} is not the released ImageNet-E layout: expected {LAYOUT_TEXT}; found "
        f"{seen}. Folder names understood: {', '.join(sorted(FOLDER_ALIASES))}."
    )


def is_imagenet_e_layout(path: str | Path, spec: BenchmarkSpec) -> bool:
    try:
        find_imagenet_e_root(path, spec)
    except ImageNetELayoutError:
        return False
    return True


def list_edit_items(
    folder: Path, edit: str, labels: dict[str, int] | None = None
) -> tuple[list[tuple[str, int, str]], list[str]]:
    """((path, label, id) sorted by label then id; files skipped with the reason). Images
    directly in ``folder`` take their label from ``labels`` (the release's labels.txt), those
    in wnid class folders from the wnid."""
    index = imagenet_wnid_index()
    items: list[tuple[str, int, str]] = []
    skipped: list[str] = []
    flat = _flat_images(folder)
    if flat and labels is None:
        raise ImageNetELayoutError(
            f"{folder} ({edit}) holds images directly but there is no {LABELS_FILE} next to "
            "it giving their labels ('<file name><TAB><ImageNet-1k index>' per line, as in the "
            "released archive); add it, or sort the images into wnid class folders."
        )
    for p in flat:
        label = labels.get(p.stem) if labels is not None else None
        if label is None:
            skipped.append(f"{p} (not in {LABELS_FILE})")
        else:
            items.append((str(p), label, p.stem))
    for class_dir in _class_dirs(folder):
        label = index.get(class_dir.name)
        files = sorted(p for p in class_dir.iterdir() if p.is_file())
        if label is None:
            skipped += [f"{p} (wnid {class_dir.name} is not an ImageNet-1k class)" for p in files]
            continue
        for p in files:
            if p.suffix.lower() in IMAGE_SUFFIXES:
                items.append((str(p), label, p.stem))
    ids = [i for _, _, i in items]
    if len(set(ids)) != len(ids):
        dup = sorted({i for i in ids if ids.count(i) > 1})[:3]
        raise ImageNetELayoutError(
            f"{folder} ({edit}): the file stem is the image id and must be unique, but "
            f"{dup} occur more than once (e.g. in two class folders); remove the duplicates."
        )
    if not items:
        raise ImageNetELayoutError(
            f"{folder} ({edit}) holds no labelled images, directly or in wnid class folders "
            f"(image suffixes: {', '.join(sorted(IMAGE_SUFFIXES))})."
        )
    items.sort(key=lambda it: (it[1], it[2]))
    return items, skipped


def imagenet_e_features(class_names: tuple[str, ...], with_mask: bool = False) -> datasets.Features:
    """The shared schema: image, label, id, [mask,] object_pixel_rate, edit_params."""
    return benchmark_features(
        class_names,
        with_mask=with_mask,
        extra={OBJECT_PIXEL_RATE: datasets.Value("float32"), EDIT_PARAMS: datasets.Value("string")},
    )


def release_edit_params(edit: str, folder: Path) -> str:
    """What the release says about an edit: its name and the folder it came from."""
    return json.dumps({"edit": edit, "release_folder": folder.name}, sort_keys=True)


def load_edit_folder(folder: Path, edit: str, spec: BenchmarkSpec) -> datasets.Dataset:
    """One edit folder as a Dataset in the shared schema (images stay files on disk; the
    object pixel rate is unknown in the release: NaN)."""
    items, _ = list_edit_items(folder, edit, read_labels(folder.parent))
    params = release_edit_params(edit, folder)
    rows = {
        IMAGE: [p for p, _, _ in items],
        LABEL: [y for _, y, _ in items],
        ID: [i for _, _, i in items],
        OBJECT_PIXEL_RATE: [np.nan] * len(items),
        EDIT_PARAMS: [params] * len(items),
    }
    return datasets.Dataset.from_dict(rows, features=imagenet_e_features(spec.classes))


class ImageNetERelease(Reader):
    """The released ImageNet-E tree: one folder per edit (images + labels.txt, or wnid class
    folders inside)."""

    kind = "imagenet-e-release"
    precropped = False  # photos: the model's own eval transform
    layout_hint = f"the released ImageNet-E layout ({LAYOUT_TEXT})"

    @classmethod
    def detect(cls, data: str, spec: BenchmarkSpec) -> Reader | None:
        path = Path(data).expanduser()
        if not path.is_dir() or not is_imagenet_e_layout(path, spec):
            return None
        root = find_imagenet_e_root(path, spec)
        reader = cls(str(root.resolve()), tuple(edit_folders(root, spec, strict=True)), spec)
        return reader

    def _load(self, variant: str, columns, split: str) -> datasets.Dataset:
        folder = edit_folders(Path(self.location), self.spec)[variant]
        return load_edit_folder(folder, variant, self.spec)
