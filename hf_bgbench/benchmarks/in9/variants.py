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

# What each variant (and IN-9L) holds, in a phrase: the card and the reports define them.
VARIANT_TEXT = {
    "original": "the image, unmodified (resized to 256, centre-cropped to 224)",
    "only_bg_b": "the bounding box filled with black",
    "only_bg_t": "the bounding box filled with a tiled strip of the image's own background",
    "no_fg": "the GrabCut foreground filled with black (its shape is kept)",
    "only_fg": "the GrabCut foreground on black",
    "mixed_same": "the foreground on the only_bg_t background of another image of the same class",
    "mixed_rand": "the foreground on the only_bg_t background of another, random image",
    "mixed_next": "the foreground on the only_bg_t background of an image of class (y + 1) mod C",
    "in9l": "IN-9L: every training photo of the classes, balanced, bytes unchanged (train only)",
}
