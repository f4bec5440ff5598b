"""What a built (or converted) benchmark's variants hold, per benchmark name: the one table
the builders write by and ``bgbench validate`` checks against.

The benchmark spec (:mod:`hf_bgbench.benchmarks`) says which variants exist; this table
adds what only the builder knows: the size of every variant image, the mask column, which
splits every variant has, whether classes are balanced, benchmark-specific row checks and,
for the mixed variants, where the background photo must come from.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from hf_bgbench.benchmarks import BenchmarkSpec
from hf_bgbench.benchmarks.in9.geometry import CROP

SAME_CLASS = "same_class"
"""Another photo of the foreground's class (mixed_same)."""
ANY_CLASS = "any_class"
"""Another photo of any class (mixed_rand)."""
NEXT_CLASS = "next_class"
"""A photo of class (y + 1) mod C, skipping classes with no photo in the build (mixed_next)."""

RULE_TEXT = {
    SAME_CLASS: "another photo of the same class",
    ANY_CLASS: "another photo of any class",
    NEXT_CLASS: "a photo of class (y + 1) mod C",
}


@dataclass(frozen=True)
class BuiltLayout:
    image_size: tuple[int, int] | None
    """(width, height) of every variant image; None: each image keeps its own size."""
    backgrounds: Mapping[str, str] = field(default_factory=dict)
    """Mixed variant -> the rule its background photo follows (never the photo itself)."""
    mask_column: str = "mask"
    """The binary foreground mask ("L", 0/255, the image's size) checked on every row."""
    balanced: bool = True
    """Every class has the same number of images in each split."""
    splits: tuple[str, ...] = ()
    """Splits every variant config must have, non-empty (empty: whatever the card lists)."""
    row_checks: str | None = None
    """``"module:function"`` run on each config/split as ``function(files, where, result)``
    for what only this benchmark has (e.g. RIVAL10's attributes and attribute masks)."""
    masks_shared: bool = True
    """One mask per image, the same in every variant (False: an edit moves the object)."""
    required_variants: tuple[str, ...] | None = None
    """Variants the card must declare (None: all of the benchmark's; the others are noted)."""


IN9_LAYOUT = BuiltLayout(
    image_size=(CROP, CROP),
    backgrounds={"mixed_same": SAME_CLASS, "mixed_rand": ANY_CLASS, "mixed_next": NEXT_CLASS},
)

RIVAL10_LAYOUT = BuiltLayout(
    image_size=None,
    mask_column="object_mask",
    balanced=False,
    splits=("train", "test"),
    row_checks="hf_bgbench.benchmarks.rival10.validate:check_rival10_split",
)

IMAGENET_E_LAYOUT = BuiltLayout(
    image_size=None,
    balanced=False,
    splits=("test",),
    row_checks="hf_bgbench.benchmarks.imagenet_e.validate:check_imagenet_e_split",
    masks_shared=False,  # the mask is the object's after the edit
    required_variants=("original",),  # a release or a CPU build holds a subset of the edits
)

LAYOUTS: dict[str, BuiltLayout] = {
    "in9": IN9_LAYOUT,
    "in9_full": IN9_LAYOUT,
    "rival10": RIVAL10_LAYOUT,
    "imagenet-e": IMAGENET_E_LAYOUT,
}
"""Benchmark name -> its built layout (benchmarks without a builder have no entry)."""


def layout_for(spec: BenchmarkSpec) -> BuiltLayout | None:
    """The built layout of ``spec``, or None when no builder makes this benchmark."""
    return LAYOUTS.get(spec.name)
