"""PUG: ImageNet's 151 classes and the authors' map of ImageNet-1k classes onto them
(``resources/classes.tsv``, from their ``class_to_imagenet_idx.json``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from hf_bgbench.labels import UNMAPPED, LabelSpace, resource_text


@dataclass(frozen=True)
class PugClass:
    label: int
    authors_name: str  # the authors' key (Great_white_shark), their tarball's class folder
    name: str  # as prompts and reports write it (great white shark)
    imagenet: tuple[int, ...]  # the ImageNet-1k classes that count as this class


@lru_cache(maxsize=1)
def pug_classes() -> tuple[PugClass, ...]:
    """The classes in label order (the authors' order: their names sorted)."""
    lines = [ln for ln in resource_text(__package__, "classes.tsv").splitlines() if ln.strip()]
    rows = [ln.split("\t") for ln in lines if not ln.startswith("#")][1:]  # no header
    out = tuple(
        PugClass(int(label), key, name, tuple(int(i) for i in indices.split(",")))
        for label, key, name, indices in rows
    )
    if [c.label for c in out] != list(range(len(out))) or [c.authors_name for c in out] != sorted(
        c.authors_name for c in out
    ):
        raise RuntimeError("resources/classes.tsv: labels must be 0..150 in sorted-name order")
    return out


def pug_label_space() -> LabelSpace:
    return LabelSpace("pug-imagenet", tuple(c.name for c in pug_classes()))


def class_key(name: str) -> str:
    """A class name as the data may spell it, reduced to compare: case, '_', '-' and spaces
    ignored (the authors' notebook writes ``GoldFish`` where their map has ``Goldfish``)."""
    return re.sub(r"[\s_\-]+", "", str(name)).lower()


@lru_cache(maxsize=1)
def class_labels() -> dict[str, int]:
    """:func:`class_key` of the authors' name -> label."""
    return {class_key(c.authors_name): c.label for c in pug_classes()}


@lru_cache(maxsize=1)
def imagenet_to_pug() -> np.ndarray:
    """int64[1000]: the label a 1000-way prediction counts as, -1 outside the 151 classes
    (wrong for every image). Built as the authors' ``run_pug_imagenet`` builds its table:
    classes in sorted order, each index set to its class, so an index two classes list
    (841 sweatshirt: Shirt and Sweatshirt) belongs to the later one (Sweatshirt) and a
    Shirt image is never counted right (:func:`shared_indices`)."""
    out = np.full(1000, UNMAPPED, dtype=np.int64)
    for c in pug_classes():
        out[list(c.imagenet)] = c.label
    return out


@lru_cache(maxsize=1)
def shared_indices() -> dict[int, tuple[int, ...]]:
    """ImageNet index -> the classes that list it, where more than one does (the map's one
    collision: 841 -> Shirt, Sweatshirt)."""
    listed: dict[int, list[int]] = {}
    for c in pug_classes():
        for index in c.imagenet:
            listed.setdefault(index, []).append(c.label)
    return {i: tuple(labels) for i, labels in listed.items() if len(labels) > 1}
