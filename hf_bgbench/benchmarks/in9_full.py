"""Full-IN: the eight IN-9 variants built over all 1000 ImageNet classes (SPEC §1).

Same construction as :mod:`hf_bgbench.benchmarks.in9` (``bgbench build in9 --label-space
imagenet``), but labels are ImageNet-1k indices and ``mixed_next`` takes its background from
the next ImageNet class, ``(y + 1) mod 1000``. A 1000-class model is scored directly.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from hf_bgbench.benchmarks import BenchmarkSpec, register
from hf_bgbench.benchmarks.in9 import IN9_CITATION, IN9_METRICS, IN9_TASKS, IN9_VARIANTS
from hf_bgbench.labels import LabelSpace, imagenet_classes


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


def _identity() -> np.ndarray:
    return np.arange(1000, dtype=np.int64)


IN9_FULL = register(
    BenchmarkSpec(
        name="in9_full",
        title="Backgrounds Challenge variants of full ImageNet (Full-IN)",
        label_space=full_imagenet_label_space(),
        variants=IN9_VARIANTS,
        reference_variant="original",
        hub_repo="bgbench/in9_full",
        label_maps={"imagenet-1k": _identity},
        metrics=IN9_METRICS,
        tasks=IN9_TASKS,
        aligned_variants=IN9_VARIANTS,
        mask_variant="original",
        mask_column="mask",
        images_precropped=True,
        citation=IN9_CITATION,
        description=(
            "The eight IN-9 variants over all 1000 ImageNet-1k classes; mixed_next uses a "
            "background of the next ImageNet class."
        ),
    )
)
