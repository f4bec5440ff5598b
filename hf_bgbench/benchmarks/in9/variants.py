"""The eight IN-9 variants and what their built images hold (SPEC §1): the facts the build,
the release converter and the download share. :mod:`.spec` assembles them into the spec;
nothing in this folder imports the spec (its hooks point back here)."""

from __future__ import annotations

from hf_bgbench.benchmarks.in9.geometry import CROP
from hf_bgbench.spec import ANY_CLASS, NEXT_CLASS, SAME_CLASS, BuiltLayout

IN9_VARIANTS = (
    "original",
    "only_bg_b",
    "only_bg_t",
    "no_fg",
    "only_fg",
    "mixed_same",
    "mixed_rand",
    "mixed_next",
)

IN9_LAYOUT = BuiltLayout(
    image_size=(CROP, CROP),
    backgrounds={"mixed_same": SAME_CLASS, "mixed_rand": ANY_CLASS, "mixed_next": NEXT_CLASS},
    checks="balanced classes, 224x224 images, mixed backgrounds by their rule",
)
"""224x224 images, one mask per photo shared by every variant, balanced classes, and the
background rule of each mixed variant."""
