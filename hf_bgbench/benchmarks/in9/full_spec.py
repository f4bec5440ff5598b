"""Full-IN: the eight IN-9 variants built over all 1000 ImageNet classes (SPEC §1).

Same construction as :mod:`hf_bgbench.benchmarks.in9.spec` (``bgbench build in9 --label-space
imagenet``), but labels are ImageNet-1k indices and ``mixed_next`` takes its background from
the next ImageNet class, ``(y + 1) mod 1000``. A 1000-class model is scored directly.
"""

from __future__ import annotations

from hf_bgbench.benchmarks.in9.protocols import IN9_PROTOCOLS
from hf_bgbench.benchmarks.in9.spec import IN9_CITATION, IN9_METRICS, IN9_TASKS
from hf_bgbench.benchmarks.in9.variants import IN9_LAYOUT, IN9_VARIANTS
from hf_bgbench.labels import full_imagenet_label_space, identity_imagenet_map
from hf_bgbench.spec import BenchmarkSpec

IN9_FULL = BenchmarkSpec(
    name="in9_full",
    title="Backgrounds Challenge variants of full ImageNet (Full-IN)",
    label_space=full_imagenet_label_space(),
    variants=IN9_VARIANTS,
    reference_variant="original",
    hub_repo="bgbench/in9_full",
    build_commands=("bgbench build in9 --label-space imagenet",),
    label_maps={"imagenet-1k": identity_imagenet_map},
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
    short_name="Full-IN",
    layout=IN9_LAYOUT,
    protocols=IN9_PROTOCOLS,
)
