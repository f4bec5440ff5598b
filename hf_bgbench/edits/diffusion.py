"""ImageNet-E's diffusion path (SPEC §3) over any ``diffusers`` UNet + scheduler (optional
extra: ``pip install "hf-bgbench[diffusion]"``).

:func:`diffusion_edit` regenerates the background of a masked image with a DDIM loop
(deterministic, η = 0) while keeping the object:

1. start: the background image (by default the image itself; the builder passes the
   inpainted clean background, as the authors' toolkit does) is taken to an intermediate
   timestep -- by DDIM inversion (``start="invert"``, deterministic: with λ = 0 the loop is a
   round trip, the ``bg_inversion`` control) or by forward noising with seeded noise
   (``start="noise"``, the authors' ``skip_timesteps``); ``strength`` is the fraction of the
   schedule used;
2. every denoising step is guided by the gradient of :func:`.guidance.background_objective`
   -- λ·L_c of the predicted clean image (λ > 0 more complex, λ < 0 simpler), optionally
   minus a classifier's log-probability of the true label (adversarial guidance) -- taken
   through the UNet with respect to x_t and applied to the noise prediction as in
   classifier guidance (ε̂ = ε − sqrt(1 − ᾱ_t)·∇);
3. after every step the object region is replaced by the object image re-noised (seeded) to
   the new noise level, so the background is generated around the object; at the last step
   the noise level is zero and the object pixels are pasted back exactly.

Size and position (:func:`diffusion_geometry`) map the object and its mask with the CPU
toolkit's T_size / T_position / T_direction, lay it on the clean background, and let the same
loop (λ = 0 by default) blend it in. Every random draw comes from one ``torch.Generator``
seeded by ``seed``, recorded in the edit's parameters with the model and settings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from hf_bgbench.edits.diffusion_model import (
    ADVERSARIAL_SCALE,
    DIFFUSION_EDITS,
    LAMBDA_COMPLEX,
    STARTS,
    DiffusionModel,
    DiffusionUnavailableError,
    load_diffusion_model,
    require_diffusers,
)
from hf_bgbench.edits.geometry import (
    ROTATION_MAX_ANGLE,
    SIZE_OBJECT,
    move_object,
    resize_object,
    rotate_object,
)
from hf_bgbench.edits.guidance import ImageClassifier, background_objective
from hf_bgbench.edits.types import EditError, EditResult, as_image, as_mask

__all__ = [
    "ADVERSARIAL_SCALE",
    "DIFFUSION_EDITS",
    "LAMBDA_COMPLEX",
    "STARTS",
    "DiffusionModel",
    "DiffusionUnavailableError",
    "diffusion_edit",
    "diffusion_geometry",
    "load_diffusion_model",
    "require_diffusers",
]


def _to_tensor(image: np.ndarray, device: torch.device) -> torch.Tensor:
    """uint8 (H, W, 3) -> float (1, 3, H, W) in [-1, 1]."""
    t = torch.from_numpy(np.array(image)).permute(2, 0, 1)[None].float()  # a writable copy
    return (t / 127.5 - 1.0).to(device)


def _to_uint8(x: torch.Tensor) -> np.ndarray:
    x = ((x.clamp(-1, 1) + 1) * 127.5).round().to(torch.uint8)
    return x[0].permute(1, 2, 0).cpu().numpy()


class _Loop:
    """The noise-level arithmetic of one edit (model prediction -> ε and x0)."""

    def __init__(self, model: DiffusionModel, steps: int, strength: float) -> None:
        if steps < 1:
            raise EditError(f"The number of diffusion steps must be at least 1, got {steps}.")
        if not 0 < strength <= 1:
            raise EditError(f"strength must be in (0, 1], got {strength}.")
        self.model = model
        scheduler = model.scheduler
        scheduler.set_timesteps(steps)
        timesteps = [int(t) for t in scheduler.timesteps]
        used = max(1, min(len(timesteps), round(len(timesteps) * strength)))
        self.timesteps = timesteps[len(timesteps) - used :]  # descending
        self.alphas = scheduler.alphas_cumprod.double()
        final = getattr(scheduler, "final_alpha_cumprod", None)
        self.final_alpha = 1.0 if final is None else float(final)
        self.clip = bool(getattr(scheduler.config, "clip_sample", False)) and model.vae is None

    def alpha(self, t: int | None) -> float:
        return self.final_alpha if t is None else float(self.alphas[t])

    def predict(self, x: torch.Tensor, t: int) -> tuple[torch.Tensor, torch.Tensor]:
        """(ε, x0) at timestep ``t`` from the UNet's output."""
        a = self.alpha(t)
        out = self.model.unet(x, torch.tensor(t, device=x.device))
        out = out.sample if hasattr(out, "sample") else out[0]
        kind = self.model.prediction_type
        if kind == "epsilon":
            eps = out
            x0 = (x - (1 - a) ** 0.5 * eps) / a**0.5
        elif kind == "sample":
            x0 = out
            eps = (x - a**0.5 * x0) / (1 - a) ** 0.5
        else:  # v_prediction
            x0 = a**0.5 * x - (1 - a) ** 0.5 * out
            eps = a**0.5 * out + (1 - a) ** 0.5 * x
        return eps, x0

    def x0_of(self, x: torch.Tensor, eps: torch.Tensor, t: int) -> torch.Tensor:
        a = self.alpha(t)
        x0 = (x - (1 - a) ** 0.5 * eps) / a**0.5
        return x0.clamp(-1, 1) if self.clip else x0


def _encode(model: DiffusionModel, x: torch.Tensor) -> torch.Tensor:
    if model.vae is None:
        return x
    scale = float(getattr(model.vae.config, "scaling_factor", 1.0))
    return model.vae.encode(x).latent_dist.mode() * scale


def _decode(model: DiffusionModel, z: torch.Tensor) -> torch.Tensor:
    if model.vae is None:
        return z
    scale = float(getattr(model.vae.config, "scaling_factor", 1.0))
    return model.vae.decode(z / scale).sample


def _check_size(model: DiffusionModel, image: np.ndarray) -> None:
    factor = model.downsampling
    h, w = image.shape[:2]
    if h % factor or w % factor:
        raise EditError(
            f"The diffusion model needs image sides that are multiples of {factor}; the image is "
            f"{w}x{h}. Resize it (a build's --size, e.g. 256)."
        )


def diffusion_edit(
    model: DiffusionModel,
    image: np.ndarray,
    mask: np.ndarray,
    *,
    start_image: np.ndarray | None = None,
    lam: float = 0.0,
    steps: int = 20,
    strength: float = 0.5,
    start: str = "invert",
    seed: int = 0,
    classifier: ImageClassifier | None = None,
    label: int | None = None,
    adversarial_scale: float = 0.0,
) -> EditResult:
    """The background of ``image`` regenerated by guided DDIM, the object (``mask``) kept.

    ``start_image``: where the background starts from (default ``image``). ``lam``: the
    complexity guidance weight λ (0: no guidance). ``classifier``/``label``/
    ``adversarial_scale``: adversarial guidance away from ``label``. See the module's text."""
    img = as_image(image)
    m = as_mask(mask, img)
    base = img if start_image is None else as_image(start_image)
    _check_edit(model, img, base, start, adversarial_scale, classifier, label)
    loop = _Loop(model, steps, strength)
    noise = _Noise(model.device, seed)
    guidance = {
        "lam": lam,
        "classifier": classifier,
        "label": label,
        "adversarial_scale": adversarial_scale,
    }
    with torch.no_grad():
        scene = _Scene.encode(model, img, base, m)
        x = _start_latent(loop, start, scene.z_base, noise)
    x = _denoise(model, loop, x, scene, guidance, noise)
    with torch.no_grad():
        out = _to_uint8(_decode(model, x))
    out[m] = img[m]  # exact object pixels whatever the VAE or the last noise level did
    params = _edit_params(model, loop, x.device, steps, strength, start, seed, guidance)
    return EditResult(out, m, params)


def _check_edit(
    model: DiffusionModel,
    img: np.ndarray,
    base: np.ndarray,
    start: str,
    adversarial_scale: float,
    classifier: ImageClassifier | None,
    label: int | None,
) -> None:
    """An EditError for arguments :func:`diffusion_edit` cannot edit with."""
    if base.shape != img.shape:
        raise EditError(f"start_image is {base.shape[:2]}, the image {img.shape[:2]}.")
    if start not in STARTS:
        raise EditError(f"Unknown start {start!r}; use one of {list(STARTS)}.")
    if adversarial_scale and (classifier is None or label is None):
        raise EditError("Adversarial guidance needs a classifier and the image's label.")
    _check_size(model, img)


class _Noise:
    """Gaussian noise from one seeded generator, drawn in the edit's order."""

    def __init__(self, device: torch.device, seed: int) -> None:
        self.device = device
        self.generator = torch.Generator(device="cpu").manual_seed(int(seed))

    def like(self, x: torch.Tensor) -> torch.Tensor:
        """Noise of ``x``'s shape and dtype, on the edit's device."""
        # drawn on the CPU: the same on any device
        return torch.randn(x.shape, generator=self.generator, dtype=x.dtype).to(self.device)


@dataclass
class _Scene:
    """The photo and its object in pixels and latents: what every step keeps or compares."""

    pixels_obj: torch.Tensor
    pixel_mask: torch.Tensor
    z_obj: torch.Tensor
    z_base: torch.Tensor
    z_mask: torch.Tensor

    @classmethod
    def encode(
        cls, model: DiffusionModel, img: np.ndarray, base: np.ndarray, m: np.ndarray
    ) -> _Scene:
        """Encode the photo ``img``, the start ``base`` and the object mask ``m``."""
        device = model.device
        pixels_obj = _to_tensor(img, device)
        pixel_mask = torch.from_numpy(m)[None, None].float().to(device)
        z_obj = _encode(model, pixels_obj)
        z_base = _encode(model, _to_tensor(base, device))
        # A latent cell is object when any of its pixels is, so the object is never generated.
        z_mask = (F.interpolate(pixel_mask, size=z_obj.shape[-2:], mode="area") > 0).float()
        return cls(pixels_obj, pixel_mask, z_obj, z_base, z_mask)


def _start_latent(loop: _Loop, start: str, z_base: torch.Tensor, noise: _Noise) -> torch.Tensor:
    """The latent the denoising starts from: ``z_base`` inverted by DDIM up to the first
    timestep (``invert``), else noised to it."""
    if start == "invert":
        x, lower = z_base, None
        for t in reversed(loop.timesteps):
            eps, _ = loop.predict(x, t)
            x0 = loop.x0_of(x, eps, lower) if lower is not None else x
            x = loop.alpha(t) ** 0.5 * x0 + (1 - loop.alpha(t)) ** 0.5 * eps
            lower = t
        return x
    a = loop.alpha(loop.timesteps[0])
    return a**0.5 * z_base + (1 - a) ** 0.5 * noise.like(z_base)


def _denoise(
    model: DiffusionModel,
    loop: _Loop,
    x: torch.Tensor,
    scene: _Scene,
    guidance: dict[str, Any],
    noise: _Noise,
) -> torch.Tensor:
    """The DDIM steps from ``x``: each step's ε (guided when asked), then the next latent
    with the object's latent put back at that noise level."""
    guided = bool(guidance["lam"]) or bool(guidance["adversarial_scale"])
    for i, t in enumerate(loop.timesteps):
        if guided:
            eps = _guided_eps(model, loop, x, t, scene, guidance)
        else:
            with torch.no_grad():
                eps, _ = loop.predict(x, t)
        with torch.no_grad():
            x0 = loop.x0_of(x.detach(), eps, t)
            t_next = loop.timesteps[i + 1] if i + 1 < len(loop.timesteps) else None
            a_next = loop.alpha(t_next)
            x = a_next**0.5 * x0 + (1 - a_next) ** 0.5 * eps
            obj_t = a_next**0.5 * scene.z_obj + (1 - a_next) ** 0.5 * noise.like(scene.z_obj)
            x = x * (1 - scene.z_mask) + obj_t * scene.z_mask
    return x


def _guided_eps(
    model: DiffusionModel,
    loop: _Loop,
    x: torch.Tensor,
    t: int,
    scene: _Scene,
    guidance: dict[str, Any],
) -> torch.Tensor:
    """The model's ε at ``t`` moved along the gradient of the background objective."""
    a = loop.alpha(t)
    with torch.enable_grad():
        x_in = x.detach().requires_grad_(True)
        eps, x0 = loop.predict(x_in, t)
        images = (_decode(model, x0) + 1) / 2
        objective = background_objective(
            images, (scene.pixels_obj + 1) / 2, scene.pixel_mask, **guidance
        )
        (grad,) = torch.autograd.grad(objective, x_in)
    return eps.detach() - (1 - a) ** 0.5 * grad


def _edit_params(
    model: DiffusionModel,
    loop: _Loop,
    device: torch.device,
    steps: int,
    strength: float,
    start: str,
    seed: int,
    guidance: dict[str, Any],
) -> dict[str, Any]:
    """The edit's record: its settings, the timesteps, what reproduction depends on and
    the model."""
    params: dict[str, Any] = {
        "edit": "diffusion",
        "method": "diffusion",
        "lambda": float(guidance["lam"]),
        "steps": int(steps),
        "timesteps": list(loop.timesteps),
        "strength": float(strength),
        "start": start,
        "noise_seed": int(seed),
        "adversarial_scale": float(guidance["adversarial_scale"]),
        # what bit-for-bit reproduction of the pixels depends on, besides the seed
        "determinism": {
            "torch": torch.__version__,
            "threads": torch.get_num_threads(),
            "deterministic_algorithms": torch.are_deterministic_algorithms_enabled(),
            "device": str(device),
        },
        **model.describe(),
    }
    if guidance["adversarial_scale"]:
        params["adversarial_label"] = int(guidance["label"])
    return params


def diffusion_geometry(
    model: DiffusionModel,
    edit: str,
    image: np.ndarray,
    mask: np.ndarray,
    clean: np.ndarray,
    *,
    rng: np.random.Generator | None = None,
    rate: float | None = None,
    angle: float | None = None,
    max_angle: float = ROTATION_MAX_ANGLE,
    **diffusion_options: Any,
) -> EditResult:
    """``edit`` in ("size", "position", "rotation"): the object and its mask mapped by the
    CPU toolkit's T_size (to object pixel ``rate``; None = full) / T_position (drawn with
    ``rng``, from the object at ``rate``) / T_direction (``angle`` or drawn with ``rng``), laid
    on the clean background ``clean``, then blended in by :func:`diffusion_edit` started from
    that composite (λ = 0 unless ``lam`` is given)."""
    img = as_image(image)
    m = as_mask(mask, img)
    if edit == "size":
        placed = resize_object(img, m, clean, rate, blend="alpha", method=SIZE_OBJECT)
    elif edit == "position":
        if rng is None:
            raise EditError("The position edit needs a random generator (rng).")
        small = resize_object(img, m, clean, rate, blend="alpha", method=SIZE_OBJECT)
        placed = move_object(small.image, small.mask, clean, rng, blend="alpha")
    elif edit == "rotation":
        placed = rotate_object(img, m, clean, rng, angle=angle, max_angle=max_angle, blend="alpha")
    else:
        raise EditError(f"Unknown geometric edit {edit!r}; use size, position or rotation.")
    if not placed.mask.any():
        raise EditError(f"The {edit} edit left no object pixel inside the frame.")
    result = diffusion_edit(model, placed.image, placed.mask, **diffusion_options)
    params = {**placed.params, **result.params, "edit": edit, "blend": "diffusion"}
    return EditResult(result.image, placed.mask, params)
