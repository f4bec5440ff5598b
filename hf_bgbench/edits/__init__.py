"""CPU image editing toolkit for ImageNet-E-style edits (SPEC §3).

Every edit works on an RGB ``uint8`` image (H, W, 3) and a boolean object mask (H, W), takes
a seeded ``numpy.random.Generator`` for its random choices, and returns an
:class:`~hf_bgbench.edits.types.EditResult`: the edited image, the object mask after the edit
and the edit's parameters (JSON-serialisable), so every edited image can be reproduced.

- :mod:`.inpaint`      -- object removal (OpenCV Telea / Navier-Stokes) for a clean background;
- :mod:`.geometry`     -- size (T_size), position (T_position), rotation (T_direction) and the
  paste-back of the object with Poisson (seamless) blending;
- :mod:`.backgrounds`  -- another image's background, out-of-distribution textures;
- :mod:`.complexity`   -- background complexity: Fourier amplitude sum L_c and GLCM measures;
- :mod:`.diffusion`    -- the paper's diffusion path over any ``diffusers`` UNet + scheduler
  (optional extra ``pip install "hf-bgbench[diffusion]"``): background guidance by ∇L_c
  (:mod:`.guidance`), the object re-noised and blended every step, geometry blending.
"""

from hf_bgbench.edits.types import EditError, EditResult, as_image, as_mask, seeded_rng

__all__ = ["EditError", "EditResult", "as_image", "as_mask", "seeded_rng"]
