"""ImageNet-D's 113 classes, their ImageNet-1k classes (125: nine classes take two or three)
and the answer words of the authors' VQA scoring (``resources/``)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from hf_bgbench.labels import UNMAPPED, LabelSpace, resource_text


@dataclass(frozen=True)
class ImageNetDClass:
    label: int
    folder: str  # the class folder in the release (alarm_clock)
    name: str  # the authors' class name as their CLIP and VQA code write it (alarm clock)
    imagenet: tuple[int, ...]  # the ImageNet-1k classes that count as this class


def authors_name(release_name: str) -> str:
    """A class name as ``evaluate_vlm.py`` writes it: underscores and hyphens become spaces,
    a slash " or ", lower case (``coffee/french press`` -> ``coffee or french press``)."""
    return release_name.replace("_", " ").replace("-", " ").replace("/", " or ").lower()


def _rows(resource: str) -> list[list[str]]:
    lines = [ln for ln in resource_text(__package__, resource).splitlines() if ln.strip()]
    return [ln.split("\t") for ln in lines if not ln.startswith("#")][1:]  # no header


@lru_cache(maxsize=1)
def imagenet_d_classes() -> tuple[ImageNetDClass, ...]:
    """The classes in label order (the authors' order: sorted folder names)."""
    out = []
    for label, folder, name, indices in _rows("classes.tsv"):
        imagenet = tuple(int(i) for i in indices.split(","))
        out.append(ImageNetDClass(int(label), folder, authors_name(name), imagenet))
    if [c.label for c in out] != list(range(len(out))):
        raise RuntimeError("resources/classes.tsv: labels must be 0..112 in order")
    return tuple(out)


def imagenet_d_label_space() -> LabelSpace:
    return LabelSpace("imagenet-d", tuple(c.name for c in imagenet_d_classes()))


@lru_cache(maxsize=1)
def folder_labels() -> dict[str, int]:
    """Class folder name -> label."""
    return {c.folder: c.label for c in imagenet_d_classes()}


@lru_cache(maxsize=1)
def name_labels() -> dict[str, int]:
    """The authors' class name -> label (how the questions table names classes)."""
    return {c.name: c.label for c in imagenet_d_classes()}


@lru_cache(maxsize=1)
def imagenet_to_imagenet_d() -> np.ndarray:
    """int64[1000]: the ImageNet-D label of each of the 125 mapped ImageNet-1k classes, -1
    elsewhere. The authors count a 1000-way prediction right when it is any of its class's
    ImageNet indices, and no index belongs to two classes, so mapping the argmax through
    this table is their rule exactly."""
    out = np.full(1000, UNMAPPED, dtype=np.int64)
    for c in imagenet_d_classes():
        for index in c.imagenet:
            if out[index] != UNMAPPED:
                raise RuntimeError(f"ImageNet class {index} is mapped to two ImageNet-D classes")
            out[index] = c.label
    return out


@lru_cache(maxsize=1)
def answer_words() -> dict[str, tuple[str, ...]]:
    """Class name -> the other words an answer may use for it (the authors' table)."""
    return {name: tuple(also.split("|")) for name, also in _rows("answer_words.tsv")}
