"""The ImageNet-E edit set on the CPU, by name (the config names of a built dataset)."""

from __future__ import annotations

from typing import Any

import numpy as np

from hf_bgbench.edits.backgrounds import replace_background, texture_background
from hf_bgbench.edits.geometry import move_object, resize_object, rotate_object
from hf_bgbench.edits.types import EditError, EditResult, as_image, as_mask

SIZE_RATES: dict[str, float | None] = {
    "size_full": None,
    "size_0.1": 0.1,
    "size_0.08": 0.08,
    "size_0.05": 0.05,
}
POSITION_RATE = 0.05
"""The position edit moves the object of the size-0.05 image, as the paper does."""
OTHER_BACKGROUND_EDITS = ("bg_random", "bg_simpler", "bg_complex")
CPU_EDITS = (
    "original",
    *OTHER_BACKGROUND_EDITS,
    "bg_texture",
    *SIZE_RATES,
    "position",
    "rotation",
)
"""Every edit the CPU toolkit makes (the diffusion ones, bg_inversion and bg_complex_adv,
are not among them)."""


def apply_edit(
    name: str,
    image: np.ndarray,
    mask: np.ndarray,
    *,
    clean: np.ndarray,
    rng: np.random.Generator,
    other: np.ndarray | None = None,
    other_params: dict[str, Any] | None = None,
    max_angle: float = 180.0,
    blend: str = "poisson",
) -> EditResult:
    """Edit ``name`` of ``image`` (object ``mask``). ``clean`` is the image's inpainted
    background; ``other`` the background to use for the bg_random/bg_simpler/bg_complex
    edits (another image's clean background), described by ``other_params``."""
    img = as_image(image)
    m = as_mask(mask, img)
    if name == "original":
        result = EditResult(img.copy(), m, {"edit": "original"})
    elif name in OTHER_BACKGROUND_EDITS:
        if other is None:
            raise EditError(f"The {name} edit needs another image's background (--background).")
        result = replace_background(img, m, other, blend=blend, params=other_params)
    elif name == "bg_texture":
        result = texture_background(img, m, rng, blend=blend)
    elif name in SIZE_RATES:
        result = resize_object(img, m, clean, SIZE_RATES[name], blend=blend)
    elif name == "position":
        small = resize_object(img, m, clean, POSITION_RATE, blend=blend)
        result = move_object(small.image, small.mask, clean, rng, blend=blend)
        result.params["from"] = {k: small.params[k] for k in ("scale", "dx", "dy")}
    elif name == "rotation":
        result = rotate_object(img, m, clean, rng, max_angle=max_angle, blend=blend)
    else:
        raise EditError(f"Unknown edit {name!r}; the CPU edits are: {', '.join(CPU_EDITS)}.")
    result.params["edit"] = name
    return result
