"""The official RIVAL10 release (SPEC §2): its layout, its features, and a reader for it.

Layout (``rival10.zip`` unzips to ``RIVAL10/``)::

    RIVAL10/{train,test}/ordinary/<wnid>_<n>.JPEG
    RIVAL10/{train,test}/ordinary/<stem>_attr_labels.npy     # (2, 18) present / changed
    RIVAL10/{train,test}/ordinary/<stem>_merged_mask.JPEG    # union of attribute masks
    RIVAL10/{train,test}/ordinary/<stem>_attr_dict.pkl       # name -> base64 mask image

Only ``ordinary/`` holds the benchmark; other folders beside it (``superimposed/``, ...)
are ignored. The class is the wnid before the first ``_`` of the file name, mapped through
the published ``wnid_to_class.json`` and ``label_mappings.json``. Rows are sorted by label,
then id. How a row is read: :mod:`hf_bgbench.benchmarks.rival10.items`.
"""

from __future__ import annotations

import hashlib
import logging
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import datasets

from hf_bgbench.benchmarks.rival10.items import (
    ATTRIBUTE_MASKS,
    ATTRIBUTES,
    CHANGED_ATTRIBUTES,
    COMPANION_SUFFIXES,
    MERGED_MASK,
    MISSING_FILES,
    OBJECT_MASK,
    OUTSIDE_LABEL_SPACE,
    RIVAL10_COLUMNS,
    WNID,
    ItemError,
    ItemFiles,
    read_item,
)
from hf_bgbench.benchmarks.rival10.labels import imagenet_to_rival10, rival10_attributes
from hf_bgbench.data.reader import DataSourceError, Reader, image_paths
from hf_bgbench.data.schema import ID, IMAGE, LABEL, benchmark_features
from hf_bgbench.labels import imagenet_index_of
from hf_bgbench.spec import BenchmarkSpec

RELEASE_DIRNAME = "RIVAL10"
VARIANT_DIRNAME = "ordinary"
SPLITS = ("train", "test")
IMAGE_SUFFIX = ".JPEG"
LAYOUT_TEXT = (
    f"'{RELEASE_DIRNAME}/{{train,test}}/{VARIANT_DIRNAME}/<wnid>_<n>{IMAGE_SUFFIX}' with "
    "<stem>_attr_labels.npy, <stem>_merged_mask.JPEG and <stem>_attr_dict.pkl beside each image"
)

log = logging.getLogger(__name__)


class Rival10LayoutError(DataSourceError):
    """The folder is not the official RIVAL10 release layout."""


def rival10_features(
    class_names: Sequence[str], columns: Sequence[str] = RIVAL10_COLUMNS
) -> datasets.Features:
    """The features of a RIVAL10 config (all columns, or those in ``columns``), in order."""
    attrs = datasets.Features({a: datasets.Value("bool") for a in rival10_attributes()})
    extra = {
        OBJECT_MASK: datasets.Image(),
        ATTRIBUTES: attrs,
        CHANGED_ATTRIBUTES: attrs.copy(),
        ATTRIBUTE_MASKS: datasets.List(
            {"attribute": datasets.Value("string"), "mask": datasets.Image()}
        ),
        MERGED_MASK: datasets.Image(),
        WNID: datasets.Value("string"),
    }
    base = benchmark_features(class_names, extra=extra)
    keep = {*columns, IMAGE, LABEL, ID}
    return datasets.Features({c: base[c] for c in RIVAL10_COLUMNS if c in keep})


def find_rival10_root(path: str | Path) -> Path:
    """The ``RIVAL10`` folder of a release (``path`` may be it or its parent)."""
    path = Path(path).expanduser()
    for candidate in (path / RELEASE_DIRNAME, path):
        if any((candidate / s / VARIANT_DIRNAME).is_dir() for s in SPLITS):
            return candidate
    raise Rival10LayoutError(
        f"{path} is not the RIVAL10 release: expected {LAYOUT_TEXT} (give the RIVAL10 folder "
        "that rival10.zip unpacks to, or its parent; `bgbench download rival10` fetches it)."
    )


def is_rival10_layout(path: str | Path) -> bool:
    try:
        find_rival10_root(path)
    except Rival10LayoutError:
        return False
    return True


def release_splits(root: Path) -> list[str]:
    """The splits present under a release root (train, test order)."""
    return [s for s in SPLITS if (root / s / VARIANT_DIRNAME).is_dir()]


def label_of_wnid(wnid: str) -> int | None:
    """The RIVAL10 label of an ImageNet wnid (None outside RIVAL10's 20 source classes)."""
    try:
        label = int(imagenet_to_rival10()[imagenet_index_of(wnid)])
    except ValueError:
        return None
    return label if label >= 0 else None


def list_items(root: Path, split: str) -> tuple[list[ItemFiles], dict[str, list[str]]]:
    """(images with all companion files, sorted by label then id; skipped stems by reason).

    An image missing a companion file, or whose wnid is not one of RIVAL10's 20 source
    classes, is skipped (never silently: the reason and the file are returned)."""
    folder = root / split / VARIANT_DIRNAME
    if not folder.is_dir():
        raise Rival10LayoutError(
            f"Split {split!r} is missing from the RIVAL10 release at {root} (no {folder}). "
            f"Present: {', '.join(release_splits(root)) or 'none'}."
        )
    names = {p.name for p in folder.iterdir()}
    skipped: dict[str, list[str]] = defaultdict(list)
    items = []
    for name in sorted(names):
        stem, suffix = name[: -len(IMAGE_SUFFIX)], name[-len(IMAGE_SUFFIX) :]
        if suffix != IMAGE_SUFFIX or stem.endswith("_merged_mask"):
            continue
        missing = [stem + s for s in COMPANION_SUFFIXES if stem + s not in names]
        label = label_of_wnid(stem.split("_", 1)[0])
        if missing:
            skipped[MISSING_FILES].append(f"{name} (no {', '.join(missing)})")
        elif label is None:
            skipped[OUTSIDE_LABEL_SPACE].append(f"{name} (wnid not a RIVAL10 source class)")
        else:
            items.append(ItemFiles(str(folder / name), label, stem.split("_", 1)[0]))
    if not items:
        raise Rival10LayoutError(
            f"{folder} holds no usable RIVAL10 image ({LAYOUT_TEXT}); "
            + (
                "skipped: " + "; ".join(f"{k}: {v[0]}" for k, v in skipped.items())
                if skipped
                else "it is empty"
            )
            + "."
        )
    items.sort(key=lambda it: (it.label, it.stem))
    return items, dict(skipped)


def load_rival10_split(
    root: str | Path, split: str, spec: BenchmarkSpec, columns: Sequence[str] = ()
) -> datasets.Dataset:
    """One split of the release as a Dataset: image, label, id and the ``columns`` asked for.

    Images stay files on disk (read lazily); masks and attributes are read from the
    companion files now. A file that cannot be read is an error naming it; ``bgbench
    convert rival10`` instead skips such images and reports them."""
    root = find_rival10_root(root)
    items, skipped = list_items(root, split)
    if skipped:
        log.warning(
            "%s/%s: %d image(s) skipped (%s)",
            root,
            split,
            sum(map(len, skipped.values())),
            ", ".join(f"{k} {len(v)}" for k, v in skipped.items()),
        )
    wanted = tuple(c for c in RIVAL10_COLUMNS if c in columns)
    rows = []
    for item in items:
        try:
            row, _ = read_item(item, wanted, embed_image=False)
        except ItemError as err:
            raise Rival10LayoutError(
                f"{err} -- `bgbench convert rival10` converts the release while skipping and "
                "reporting unreadable images."
            ) from None
        rows.append(row)
    features = rival10_features(spec.classes, wanted)
    return datasets.Dataset.from_list(rows, features=features)


class Rival10Release(Reader):
    """The official RIVAL10 release folder (``RIVAL10/{train,test}/ordinary/``) or its parent:
    variant ``ordinary``, splits train and test."""

    kind = "rival10-release"
    precropped = False  # photos at their own size: the model's own resize + centre crop
    layout_hint = f"the official RIVAL10 release ({LAYOUT_TEXT})"

    @classmethod
    def detect(cls, data: str, spec: BenchmarkSpec) -> Reader | None:
        path = Path(data).expanduser()
        if not (path.is_dir() and is_rival10_layout(path)):
            return None
        return cls(str(find_rival10_root(path).resolve()), (VARIANT_DIRNAME,), spec)

    def _load(self, variant: str, columns, split: str) -> datasets.Dataset:
        ds = load_rival10_split(self.location, split, self.spec, columns)
        # the images the listing skipped (a companion file missing, a wnid outside RIVAL10)
        self.note_skipped(variant, split, list_items(find_rival10_root(self.location), split)[1])
        return ds

    def _signature(self, ds: datasets.Dataset) -> str:
        """The images' names, sizes and mtimes, and those of their companion files (masks
        and attributes change what the noise and saliency tasks compute)."""
        parts = [super()._signature(ds)]
        for path in filter(None, image_paths(ds)):
            for suffix in COMPANION_SUFFIXES:
                st = Path(path).with_name(Path(path).stem + suffix).stat()
                parts.append(f"{suffix}|{st.st_size}|{st.st_mtime_ns}")
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()
