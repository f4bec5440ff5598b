"""The released ImageNet-E layout (SPEC §3): detect it, name its edits, read it.

Layout (one folder per edit, ImageNet-style class folders inside)::

    ROOT/<edit folder>/<wnid>/<stem>.<ext>   # e.g. ROOT/20/n01440764/ILSVRC2012_val_00000293.JPEG

``ROOT`` may also be the parent of a single folder holding the edit folders (what an archive
unpacks to). Edit folder names are mapped onto the benchmark's edit names
(:data:`hf_bgbench.metrics.edits.IMAGENET_E_EDITS`) by :data:`FOLDER_ALIASES` after
normalising them (lower case; spaces, ``=`` and ``-`` between words become ``_``); our own
names are accepted as they are. Class folders are ImageNet-1k wnids (``n01440764``); the
label is the wnid's ImageNet-1k index. The id of a row is the file stem, shared across
edits. Rows are sorted by (label, id) so every edit lists the same ids in the same order.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import datasets
import numpy as np

from hf_bgbench.benchmarks import BenchmarkSpec
from hf_bgbench.data.schema import ID, IMAGE, LABEL, benchmark_features
from hf_bgbench.data.sources import DataSourceError, Reader
from hf_bgbench.files import IMAGE_SUFFIXES
from hf_bgbench.labels import imagenet_wnid_index

OBJECT_PIXEL_RATE = "object_pixel_rate"
EDIT_PARAMS = "edit_params"
WNID_PATTERN = re.compile(r"^n\d{8}$")

# normalised folder name -> our edit name. The paper names background edits by the guidance
# weight λ (-20 simpler, 20 more complex, 20 + adversarial guidance, 0 the inversion
# control), sizes by the object pixel rate (full, 0.1, 0.08, 0.05), and the last two by
# random position / rotation.
FOLDER_ALIASES: dict[str, str] = {
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
    "one folder per edit (e.g. '20', '-20', 'full', '0.05', 'random_pos', 'rot', or our names "
    "'bg_complex', 'size_0.05', ...) holding ImageNet class folders named by wnid "
    "('n01440764/') with the images"
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


def edit_folders(root: Path, spec: BenchmarkSpec) -> dict[str, Path]:
    """edit -> its folder under ``root`` (in the spec's order); an error if two folders
    map onto one edit."""
    found: dict[str, Path] = {}
    for child in sorted(p for p in root.iterdir() if p.is_dir()):
        edit = edit_of_folder(child.name, spec.variants)
        if edit is None or not _class_dirs(child):
            continue
        if edit in found:
            raise ImageNetELayoutError(
                f"{root}: both {found[edit].name!r} and {child.name!r} map onto edit {edit!r}; "
                "keep one of them (or rename the other to an edit it stands for)."
            )
        found[edit] = child
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


def list_edit_items(folder: Path, edit: str) -> tuple[list[tuple[str, int, str]], list[str]]:
    """((path, label, id) sorted by label then id; files skipped with the reason)."""
    index = imagenet_wnid_index()
    items: list[tuple[str, int, str]] = []
    skipped: list[str] = []
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
            f"{folder} ({edit}) holds no images in its wnid class folders "
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
    items, _ = list_edit_items(folder, edit)
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
    """The released ImageNet-E tree: one folder per edit, wnid class folders inside."""

    kind = "imagenet-e-release"
    precropped = False  # photos: the model's own eval transform
    layout_hint = f"the released ImageNet-E layout ({LAYOUT_TEXT})"

    @classmethod
    def detect(cls, data: str, spec: BenchmarkSpec) -> Reader | None:
        path = Path(data).expanduser()
        if not path.is_dir() or not is_imagenet_e_layout(path, spec):
            return None
        root = find_imagenet_e_root(path, spec)
        reader = cls(str(root.resolve()), tuple(edit_folders(root, spec)), spec)
        return reader

    def _load(self, variant: str, columns, split: str) -> datasets.Dataset:
        folder = edit_folders(Path(self.location), self.spec)[variant]
        return load_edit_folder(folder, variant, self.spec)
