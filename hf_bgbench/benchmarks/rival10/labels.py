"""The ten RIVAL10 classes, its 18 attributes and the authors' ImageNet-1k -> RIVAL10 map
(``resources/``)."""

from __future__ import annotations

import json
from functools import lru_cache

import numpy as np

from hf_bgbench.labels import UNMAPPED, LabelSpace, imagenet_index_of, resource_text


@lru_cache(maxsize=1)
def rival10_classes() -> list[str]:
    """The ten RIVAL10 class names in label order."""
    table = json.loads(resource_text(__package__, "rival10_label_mappings.json"))
    by_label = {label: name for name, label in table.values()}
    return [by_label[i] for i in range(len(by_label))]


@lru_cache(maxsize=1)
def rival10_attributes() -> list[str]:
    """The 18 RIVAL10 attribute names in attribute-index order."""
    return [
        a.strip()
        for a in resource_text(__package__, "rival10_attributes.txt").splitlines()
        if a.strip()
    ]


@lru_cache(maxsize=1)
def imagenet_to_rival10() -> np.ndarray:
    """int64[1000]: RIVAL10 label of each of the 20 source ImageNet classes, -1 elsewhere."""
    table = json.loads(resource_text(__package__, "rival10_label_mappings.json"))
    wnid_to_name = json.loads(resource_text(__package__, "rival10_wnid_to_class.json"))
    name_to_wnid = {name: wnid for wnid, name in wnid_to_name.items()}
    out = np.full(1000, UNMAPPED, dtype=np.int64)
    for name, (_, label) in table.items():
        out[imagenet_index_of(name_to_wnid[name])] = int(label)
    return out


def rival10_label_space() -> LabelSpace:
    return LabelSpace("rival10", tuple(rival10_classes()))
