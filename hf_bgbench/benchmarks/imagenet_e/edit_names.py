"""ImageNet-E's edit names (SPEC §3): the benchmark's variants, the unedited ``original``
first. Declared once here; the spec, the builder and the ``dropped_accuracy`` metric module
(generated from the spec) read them from this module or the spec."""

from __future__ import annotations

REFERENCE_EDIT = "original"

IMAGENET_E_EDITS = (
    REFERENCE_EDIT,
    "bg_inversion",  # background guidance λ = 0: the diffusion round-trip control
    "bg_simpler",  # λ = -20
    "bg_complex",  # λ = +20
    "bg_complex_adv",  # λ = +20 with adversarial guidance
    "bg_random",  # background replaced by a random one
    "bg_texture",  # background replaced by an OOD texture (checker, stripes, noise; CPU build)
    "size_full",  # object pixel rate "Full" (as large as the frame holds it whole)
    "size_0.1",
    "size_0.08",
    "size_0.05",
    "position",  # random position, from the size-0.05 images
    "rotation",  # random rotation
)
"""Edit names: ``original`` plus the 11 ImageNet-E edits and the CPU build's OOD-texture
background ``bg_texture``."""

CONTROL_EDIT = "bg_inversion"
"""The paper's λ = 0 column ("Inver", the release's ``rec``): the diffusion round trip alone.
A control, reported beside the mean, never averaged into it."""
NON_PAPER_EDITS = ("bg_texture",)
"""Edits the paper does not have (our CPU build's OOD-texture background): scored per edit,
never averaged into the paper's mean."""
PAPER_ATTRIBUTE_EDITS = tuple(
    e for e in IMAGENET_E_EDITS if e not in (REFERENCE_EDIT, CONTROL_EDIT, *NON_PAPER_EDITS)
)
"""The paper's attribute edits (background λ = ∓20, λ = 20 adversarial, random background,
the four sizes, position, rotation): what the headline mean DA averages."""
