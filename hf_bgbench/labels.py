"""Label spaces and the published class mappings (ImageNet-1k -> IN-9, -> RIVAL10).

The mapping files in ``resources/`` are the ones the benchmark authors published;
they are read once and cached.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import numpy as np

UNMAPPED = -1
"""Prediction value for a model class that falls outside the benchmark's classes (always wrong)."""


def _resource_text(name: str) -> str:
    return resources.files("hf_bgbench").joinpath("resources", name).read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def imagenet_classes() -> tuple[list[str], list[str]]:
    """(wnids, names) of the 1000 ImageNet-1k classes in index order."""
    wnids, names = [], []
    for line in _resource_text("imagenet_classes.tsv").splitlines()[1:]:
        _, wnid, name = line.split("\t")
        wnids.append(wnid)
        names.append(name)
    return wnids, names


@lru_cache(maxsize=1)
def imagenet_wnid_index() -> dict[str, int]:
    """wnid -> ImageNet-1k class index (0..999)."""
    return {w: i for i, w in enumerate(imagenet_classes()[0])}


def imagenet_index_of(wnid: str) -> int:
    """ImageNet-1k class index of ``wnid``; a ValueError names a wnid outside ImageNet-1k."""
    try:
        return imagenet_wnid_index()[wnid]
    except KeyError:
        raise ValueError(
            f"{wnid!r} is not an ImageNet-1k wnid (expected e.g. 'n02085620')."
        ) from None


@lru_cache(maxsize=1)
def in9_classes() -> tuple[list[str], list[str]]:
    """(names, ancestor wnids) of the nine IN-9 classes in label order; names lower-case."""
    names, wnids = [], []
    for line in _resource_text("in9_classes.txt").splitlines():
        if line.strip():
            name, wnid = line.split()
            names.append(name.lower())
            wnids.append(wnid)
    return names, wnids


@lru_cache(maxsize=1)
def imagenet_to_in9() -> np.ndarray:
    """int64[1000]: IN-9 label of each ImageNet-1k class, ``UNMAPPED`` (-1) outside IN-9."""
    table = json.loads(_resource_text("in_to_in9.json"))
    out = np.full(1000, UNMAPPED, dtype=np.int64)
    for k, v in table.items():
        out[int(k)] = int(v)
    return out


@lru_cache(maxsize=1)
def rival10_classes() -> list[str]:
    """The ten RIVAL10 class names in label order."""
    table = json.loads(_resource_text("rival10_label_mappings.json"))
    by_label = {label: name for name, label in table.values()}
    return [by_label[i] for i in range(len(by_label))]


@lru_cache(maxsize=1)
def rival10_attributes() -> list[str]:
    """The 18 RIVAL10 attribute names in attribute-index order."""
    return [a.strip() for a in _resource_text("rival10_attributes.txt").splitlines() if a.strip()]


@lru_cache(maxsize=1)
def imagenet_to_rival10() -> np.ndarray:
    """int64[1000]: RIVAL10 label of each of the 20 source ImageNet classes, -1 elsewhere."""
    table = json.loads(_resource_text("rival10_label_mappings.json"))
    wnid_to_name = json.loads(_resource_text("rival10_wnid_to_class.json"))
    name_to_wnid = {name: wnid for wnid, name in wnid_to_name.items()}
    out = np.full(1000, UNMAPPED, dtype=np.int64)
    for name, (_, label) in table.items():
        out[imagenet_index_of(name_to_wnid[name])] = int(label)
    return out


def wnid_to_in9(wnid: str) -> int:
    """IN-9 label of an ImageNet-1k wnid (``UNMAPPED`` if it is not one of the 370 classes)."""
    return int(imagenet_to_in9()[imagenet_index_of(wnid)])


@dataclass(frozen=True)
class LabelSpace:
    """The classes a model (or a dataset) speaks in.

    ``kind`` is one of ``"imagenet-1k"``, ``"in9"``, ``"rival10"`` or ``"custom"``.
    """

    kind: str
    names: tuple[str, ...]

    @property
    def num_classes(self) -> int:
        return len(self.names)


def imagenet_label_space() -> LabelSpace:
    return LabelSpace("imagenet-1k", tuple(imagenet_classes()[1]))


def in9_label_space() -> LabelSpace:
    return LabelSpace("in9", tuple(in9_classes()[0]))


def rival10_label_space() -> LabelSpace:
    return LabelSpace("rival10", tuple(rival10_classes()))
