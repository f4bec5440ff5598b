"""The nine IN-9 classes and the authors' ImageNet-1k -> IN-9 mapping (``resources/``)."""

from __future__ import annotations

import json
from functools import lru_cache

import numpy as np

from hf_bgbench.labels import UNMAPPED, LabelSpace, imagenet_index_of, resource_text


@lru_cache(maxsize=1)
def in9_classes() -> tuple[list[str], list[str]]:
    """(names, ancestor wnids) of the nine IN-9 classes in label order; names lower-case."""
    names, wnids = [], []
    for line in resource_text(__package__, "in9_classes.txt").splitlines():
        if line.strip():
            name, wnid = line.split()
            names.append(name.lower())
            wnids.append(wnid)
    return names, wnids


@lru_cache(maxsize=1)
def imagenet_to_in9() -> np.ndarray:
    """int64[1000]: IN-9 label of each ImageNet-1k class, ``UNMAPPED`` (-1) outside IN-9."""
    table = json.loads(resource_text(__package__, "in_to_in9.json"))
    out = np.full(1000, UNMAPPED, dtype=np.int64)
    for k, v in table.items():
        out[int(k)] = int(v)
    return out


def wnid_to_in9(wnid: str) -> int:
    """IN-9 label of an ImageNet-1k wnid (``UNMAPPED`` if it is not one of the 370 classes)."""
    return int(imagenet_to_in9()[imagenet_index_of(wnid)])


def in9_label_space() -> LabelSpace:
    return LabelSpace("in9", tuple(in9_classes()[0]))
