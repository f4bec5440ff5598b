"""Loading the diffusion model of the optional diffusion path: a ``diffusers`` UNet, its noise
scheduler and, for latent diffusion, a VAE.

``diffusers`` is an optional extra (``pip install "hf-bgbench[diffusion]"``); everything here
imports it lazily and says how to install it when it is missing. Weights load from safetensors
only (``use_safetensors=True``) and never with remote code.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hf_bgbench.edits.types import EditError

if TYPE_CHECKING:  # torch is imported by whoever runs the model, not by importing this module
    import torch

INSTALL_HINT = 'pip install "hf-bgbench[diffusion]"'
LAMBDA_COMPLEX = 20.0
DIFFUSION_EDITS: dict[str, float] = {
    "bg_inversion": 0.0,
    "bg_simpler": -LAMBDA_COMPLEX,
    "bg_complex": LAMBDA_COMPLEX,
    "bg_complex_adv": LAMBDA_COMPLEX,
}
"""The paper's background edits and their guidance weight λ (bg_complex_adv adds the
adversarial guidance of a classifier)."""
ADVERSARIAL_SCALE = 10.0
"""Default weight of the adversarial guidance (the authors' ``classifier_scale`` default)."""
STARTS = ("invert", "noise")


class DiffusionUnavailableError(EditError):
    """The diffusion path was asked for but cannot run (diffusers missing, no model given,
    a model that cannot be loaded)."""


def require_diffusers() -> Any:
    """The ``diffusers`` module, or a clear error naming the extra to install."""
    try:
        import diffusers
    except ImportError:
        raise DiffusionUnavailableError(
            f"The diffusion edits need the 'diffusers' package; install it with {INSTALL_HINT}."
        ) from None
    return diffusers


@dataclass
class DiffusionModel:
    """A UNet predicting noise (or x0 / v, per the scheduler's ``prediction_type``), the
    scheduler giving its noise levels (``alphas_cumprod``) and timesteps, and an optional VAE
    (the UNet then works on its latents). ``source`` is what the edit parameters record."""

    unet: torch.nn.Module
    scheduler: Any
    vae: torch.nn.Module | None = None
    source: str = "in-memory"

    def __post_init__(self) -> None:
        for attr in ("alphas_cumprod", "set_timesteps", "config"):
            if not hasattr(self.scheduler, attr):
                raise DiffusionUnavailableError(
                    f"The scheduler {type(self.scheduler).__name__} has no {attr!r}; give a "
                    "DDPM-family diffusers scheduler (DDIMScheduler, DDPMScheduler, ...)."
                )
        kind = self.prediction_type
        if kind not in ("epsilon", "sample", "v_prediction"):
            raise DiffusionUnavailableError(f"Unsupported prediction_type {kind!r}.")
        config = getattr(self.unet, "config", None)
        if config is not None and getattr(config, "num_class_embeds", None):
            raise DiffusionUnavailableError(
                "Class-conditional UNets are not supported; give an unconditional UNet2DModel."
            )

    @property
    def prediction_type(self) -> str:
        return str(getattr(self.scheduler.config, "prediction_type", "epsilon"))

    @property
    def device(self) -> torch.device:
        return next(self.unet.parameters()).device

    @property
    def downsampling(self) -> int:
        """Factor by which the UNet (and VAE) shrink the image: sides must be multiples of it."""
        config = getattr(self.unet, "config", None)
        blocks = len(getattr(config, "block_out_channels", ()) or ()) if config else 0
        factor = 2 ** max(blocks - 1, 0)
        if self.vae is not None:
            vae_blocks = len(getattr(self.vae.config, "block_out_channels", ()) or ())
            factor *= 2 ** max(vae_blocks - 1, 0)
        return factor

    def describe(self) -> dict[str, Any]:
        """JSON-able summary recorded in every edit's parameters."""
        return {
            "model": self.source,
            "unet": type(self.unet).__name__,
            "scheduler": type(self.scheduler).__name__,
            "prediction_type": self.prediction_type,
            "latent": self.vae is not None,
        }


def _from_pretrained(cls: Any, location: str, subfolders: tuple[str, ...], what: str) -> Any:
    errors = []
    for sub in subfolders:
        kwargs = {"subfolder": sub} if sub else {}
        if Path(location).is_dir() and not (Path(location) / sub).is_dir():
            continue
        try:
            if what == "scheduler":
                return cls.from_pretrained(location, **kwargs)
            return cls.from_pretrained(location, use_safetensors=True, **kwargs)
        except (OSError, ValueError) as err:
            errors.append(f"{sub or '.'}: {str(err).splitlines()[0]}")
    found = "; ".join(errors) or "no such folder"
    raise DiffusionUnavailableError(
        f"Could not load the {what} of diffusion model {location!r} ({found}). Give a folder "
        "written by diffusers' save_pretrained (a UNet folder with scheduler_config.json, or a "
        "pipeline folder with unet/ and scheduler/), with safetensors weights, or a Hub id "
        "reachable from here."
    )


def own_storage(module: torch.nn.Module) -> torch.nn.Module:
    """``module`` with every parameter and buffer copied into its own allocation.

    safetensors loads the weights as views into one file buffer at arbitrary byte offsets
    (e.g. 24 or 36 mod 64); CPU kernels take another code path for unaligned weights, whose
    sums differ in the last bits (1e-6 on a UNet output), so a model loaded from a folder
    did not reproduce the in-memory model's edit grey level for grey level on every
    machine. Fresh allocations are aligned: the same weights then give the same pixels."""
    import torch

    with torch.no_grad():
        for sub in module.modules():
            for param in sub._parameters.values():
                if param is not None:
                    param.data = param.data.clone()
            for name, buffer in sub._buffers.items():
                if buffer is not None:
                    sub._buffers[name] = buffer.clone()
    return module


def load_diffusion_model(
    location: str | Path, device: str | torch.device = "cpu"
) -> DiffusionModel:
    """A :class:`DiffusionModel` from a diffusers folder or Hub id: the UNet
    (``UNet2DModel``) from ``unet/`` or the folder itself, the scheduler (as a
    ``DDIMScheduler``) from ``scheduler/`` or the folder, and a VAE (``AutoencoderKL``) from
    ``vae/`` when the folder has one. Safetensors only."""
    diffusers = require_diffusers()
    location = str(location)
    unet = _from_pretrained(diffusers.UNet2DModel, location, ("unet", ""), "UNet")
    scheduler = _from_pretrained(diffusers.DDIMScheduler, location, ("scheduler", ""), "scheduler")
    vae = None
    if Path(location).is_dir() and (Path(location) / "vae").is_dir():
        vae = _from_pretrained(diffusers.AutoencoderKL, location, ("vae",), "VAE")
        own_storage(vae.eval().requires_grad_(False).to(device))
    own_storage(unet.eval().requires_grad_(False).to(device))
    return DiffusionModel(unet=unet, scheduler=scheduler, vae=vae, source=location)


def classifier_guidance(classifier: Any) -> Any:
    """An :data:`~hf_bgbench.edits.guidance.ImageClassifier` (images in [0, 1] -> logits)
    from a loaded :class:`hf_bgbench.models.Classifier`: resized (bilinear, differentiable) to
    the model's input size and normalised its way, so gradients reach the image."""
    import torch.nn.functional as F

    size = tuple(classifier.preprocessing.input_size)

    def logits(images: torch.Tensor) -> torch.Tensor:
        if tuple(images.shape[-2:]) != size:
            images = F.interpolate(images, size=size, mode="bilinear", align_corners=False)
        return classifier.logits(classifier.preprocessing.normalize_unit_batch(images))

    return logits
