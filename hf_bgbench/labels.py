"""Label spaces, and the ImageNet-1k classes every benchmark maps from.

A benchmark's own classes and its published mapping from ImageNet-1k live in its folder
(``hf_bgbench/benchmarks/<name>/labels.py``), read with :func:`resource_text`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources

import numpy as np

UNMAPPED = -1
"""Prediction value for a model class that falls outside the benchmark's classes (always wrong)."""


def resource_text(package: str, name: str) -> str:
    """The text of ``resources/<name>`` inside ``package`` (read from the installed package)."""
    return resources.files(package).joinpath("resources", name).read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def imagenet_classes() -> tuple[list[str], list[str]]:
    """(wnids, names) of the 1000 ImageNet-1k classes in index order."""
    wnids, names = [], []
    for line in resource_text("hf_bgbench", "imagenet_classes.tsv").splitlines()[1:]:
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


@dataclass(frozen=True)
class LabelSpace:
    """The classes a model (or a dataset) speaks in.

    ``kind`` is ``"imagenet-1k"``, ``"custom"`` or a benchmark's own kind (its spec's label space).
    """

    kind: str
    names: tuple[str, ...]
    # True when the model named no classes (LABEL_0, ...) and this space's order was assumed
    # from its number of outputs (said and recorded in results' label_protocol)
    order_assumed: bool = field(default=False, compare=False)

    @property
    def num_classes(self) -> int:
        return len(self.names)


_BENCHMARK_SPACES: dict[str, LabelSpace] = {}


def remember_label_space(space: LabelSpace) -> None:
    """Offer a registered benchmark's own label space to :func:`benchmark_label_spaces` (the
    registry calls this; ImageNet-1k and custom spaces are not a benchmark's own)."""
    if space.kind not in ("imagenet-1k", "custom"):
        _BENCHMARK_SPACES.setdefault(space.kind, space)


def forget_label_space(kind: str) -> None:
    """Withdraw a label space offered by :func:`remember_label_space` (unregistering)."""
    _BENCHMARK_SPACES.pop(kind, None)


def benchmark_label_spaces() -> tuple[LabelSpace, ...]:
    """The own label spaces of the registered benchmarks, in registration order: what a
    model's label space is recognised as when no caller says (see
    :func:`hf_bgbench.models.classifier.infer_label_space`)."""
    return tuple(_BENCHMARK_SPACES.values())


def imagenet_label_space() -> LabelSpace:
    return LabelSpace("imagenet-1k", tuple(imagenet_classes()[1]))


def full_imagenet_label_space() -> LabelSpace:
    """ImageNet-1k in index order, with names made unique for ``ClassLabel``.

    Two names occur twice in ImageNet-1k ("crane": bird and machine; "maillot"); a
    ``datasets.ClassLabel`` needs unique names, so those four carry their wnid, e.g.
    ``"crane (n02012849)"``. The kind stays "imagenet-1k", so 1000-class models score directly.
    """
    wnids, names = imagenet_classes()
    counts = Counter(names)
    unique = (f"{n} ({w})" if counts[n] > 1 else n for w, n in zip(wnids, names, strict=True))
    return LabelSpace("imagenet-1k", tuple(unique))


def identity_imagenet_map() -> np.ndarray:
    """int64[1000]: each ImageNet-1k class to itself (benchmarks labelled in ImageNet-1k)."""
    return np.arange(1000, dtype=np.int64)


NAMES_SHOWN = 8
"""How many class names a message lists before it says how many more there are."""


def names_preview(names: Sequence[str], benchmark: str | None = None) -> str:
    """``names`` for a message: all of a short list; of a long one (ImageNet's 1000) the
    count, the first :data:`NAMES_SHOWN` and -- for a ``benchmark``'s classes -- the command
    that lists them all."""
    names = list(names)
    if len(names) <= NAMES_SHOWN + 2:
        return ", ".join(names)
    more = f"`bgbench list --classes {benchmark}` lists all" if benchmark else "and more"
    return f"{len(names)} classes: {', '.join(names[:NAMES_SHOWN])}, ... ({more})"
