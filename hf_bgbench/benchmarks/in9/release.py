"""Read the official Backgrounds Challenge release as ``datasets.Dataset`` in our schema.

Layout (what users download)::

    bg_challenge/<variant>/val/<class-dir>/<stem>.JPEG     # eight variants
    bg_challenge/fg_mask/val/<class-dir>/<stem>.npy        # 224x224 foreground masks

Class directories sort in label order (ImageFolder convention, e.g. ``00_dog`` ... ``08_fish``).
The image id is the file stem, which is the same in every variant.
"""

from __future__ import annotations

from pathlib import Path

import datasets
import numpy as np

from hf_bgbench.data.reader import Reader
from hf_bgbench.data.schema import ID, IMAGE, LABEL, MASK, benchmark_features, encode_mask
from hf_bgbench.files import IMAGE_SUFFIXES
from hf_bgbench.labels import names_preview
from hf_bgbench.spec import BenchmarkSpec

RELEASE_DIRNAME = "bg_challenge"
RELEASE_SPLIT = "val"
MASK_DIRNAME = "fg_mask"


class ReleaseLayoutError(ValueError):
    """The folder is not the official Backgrounds Challenge release layout."""


def _has_variant_dirs(folder: Path, spec: BenchmarkSpec) -> bool:
    return any((folder / v / RELEASE_SPLIT).is_dir() for v in spec.variants)


def find_release_root(path: str | Path, spec: BenchmarkSpec) -> Path:
    """The ``bg_challenge`` folder of a release (``path`` may be it or its parent)."""
    path = Path(path)
    for candidate in (path / RELEASE_DIRNAME, path):
        if candidate.is_dir() and _has_variant_dirs(candidate, spec):
            return candidate
    raise ReleaseLayoutError(
        f"{path} is not a Backgrounds Challenge release: expected "
        f"'{RELEASE_DIRNAME}/<variant>/{RELEASE_SPLIT}/<class-dir>/<image>.JPEG' with variants "
        f"among {', '.join(spec.variants)}."
    )


def is_release_layout(path: str | Path, spec: BenchmarkSpec) -> bool:
    try:
        find_release_root(path, spec)
    except ReleaseLayoutError:
        return False
    return True


def release_variants(root: Path, spec: BenchmarkSpec) -> list[str]:
    """Variants present in a release root, in the benchmark's order."""
    return [v for v in spec.variants if (root / v / RELEASE_SPLIT).is_dir()]


def _class_dirs(split_dir: Path, spec: BenchmarkSpec) -> list[Path]:
    dirs = sorted(p for p in split_dir.iterdir() if p.is_dir())
    if len(dirs) != spec.num_classes:
        raise ReleaseLayoutError(
            f"{split_dir} has {len(dirs)} class folder(s) "
            f"({', '.join(d.name for d in dirs) or 'none'}); the {spec.name} release has "
            f"{spec.num_classes} ({names_preview(spec.classes, spec.name)}), sorted in label "
            "order."
        )
    return dirs


def release_files(root: Path, variant: str, spec: BenchmarkSpec) -> list[tuple[Path, int]]:
    """(image path, label) of every image of ``variant``, sorted by class then file name."""
    split_dir = root / variant / RELEASE_SPLIT
    if not split_dir.is_dir():
        raise ReleaseLayoutError(
            f"Variant {variant!r} is missing from the release at {root} (no {split_dir}). "
            f"Present: {', '.join(release_variants(root, spec)) or 'none'}."
        )
    files = []
    for label, class_dir in enumerate(_class_dirs(split_dir, spec)):
        images = sorted(p for p in class_dir.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
        files.extend((p, label) for p in images)
    if not files:
        raise ReleaseLayoutError(f"{split_dir} holds no images (.JPEG/.jpg/.png).")
    stems = [p.stem for p, _ in files]
    if len(set(stems)) != len(stems):
        raise ReleaseLayoutError(f"{split_dir}: image file names repeat across class folders.")
    return files


def mask_path(root: Path, image_path: Path) -> Path:
    """Where the release keeps the foreground mask of ``image_path``."""
    return root / MASK_DIRNAME / RELEASE_SPLIT / image_path.parent.name / f"{image_path.stem}.npy"


def mask_png_bytes(npy_path: Path) -> bytes:
    """A release mask (.npy, any numeric dtype) as an "L" PNG with values 0/255."""
    try:
        mask = np.load(npy_path, allow_pickle=False)
    except (OSError, ValueError, EOFError) as err:  # numpy's own words named no file
        raise ReleaseLayoutError(
            f"{npy_path}: not a readable .npy mask ({type(err).__name__}: {err}). Replace it "
            "with the release's file (re-download the release), or score without masks."
        ) from None
    if mask.ndim not in (2, 3) or mask.dtype.kind not in "biuf":
        raise ReleaseLayoutError(
            f"{npy_path}: a mask of shape {mask.shape} ({mask.dtype}); expected a numeric 2-D "
            "array (or 3-D with one or three channels). Replace it with the release's file."
        )
    if mask.ndim == 3:
        mask = mask[..., 0] if mask.shape[-1] in (1, 3) else mask[0]
    return encode_mask(mask)


def load_release_variant(
    root: str | Path, variant: str, spec: BenchmarkSpec, *, with_mask: bool = False
) -> datasets.Dataset:
    """One variant of a release as a Dataset with columns image, label, id (and mask).

    ``with_mask`` reads ``fg_mask/val/<class-dir>/<stem>.npy`` for every image; a missing
    mask is an error (a variant without its masks cannot be used for the challenge).
    """
    root = find_release_root(root, spec)
    spec.check_variants([variant])
    files = release_files(root, variant, spec)
    columns: dict[str, list] = {
        IMAGE: [str(p) for p, _ in files],
        LABEL: [label for _, label in files],
        ID: [p.stem for p, _ in files],
    }
    if with_mask:
        missing = [p for p, _ in files if not mask_path(root, p).is_file()]
        if missing:
            raise ReleaseLayoutError(
                f"{len(missing)} image(s) of {variant!r} have no foreground mask, e.g. "
                f"{mask_path(root, missing[0])}; the release keeps masks under "
                f"'{MASK_DIRNAME}/{RELEASE_SPLIT}/<class-dir>/<stem>.npy'."
            )
        columns[MASK] = [
            {"bytes": mask_png_bytes(mask_path(root, p)), "path": None} for p, _ in files
        ]
    features = benchmark_features(spec.classes, with_mask=with_mask)
    return datasets.Dataset.from_dict(columns, features=features)


class BackgroundsChallengeRelease(Reader):
    """The official Backgrounds Challenge release (``bg_challenge/<variant>/val/...``), given
    as the ``bg_challenge`` folder or its parent."""

    kind = "release"
    layout_hint = (
        f"the official release ('{RELEASE_DIRNAME}/<variant>/{RELEASE_SPLIT}/<class-dir>/...')"
    )

    @classmethod
    def detect(cls, data: str, spec: BenchmarkSpec) -> Reader | None:
        path = Path(data).expanduser()
        if not (path.is_dir() and is_release_layout(path, spec)):
            return None
        root = find_release_root(path, spec)
        return cls(str(root.resolve()), release_variants(root, spec), spec)

    def _load(self, variant: str, columns, split: str) -> datasets.Dataset:
        self._test_split_only(split)
        return load_release_variant(self.location, variant, self.spec, with_mask=MASK in columns)
