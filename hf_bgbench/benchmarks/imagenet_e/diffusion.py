"""The diffusion background edits of ``bgbench build imagenet-e --diffusion-model ...``.

With a diffusers UNet given, the background edits are made the paper's way
(:mod:`hf_bgbench.edits.diffusion`): ``bg_inversion`` (λ = 0), ``bg_simpler`` (λ = -20),
``bg_complex`` (λ = +20) and ``bg_complex_adv`` (λ = +20 plus adversarial guidance away from
the image's ImageNet-1k class by ``--adv-model``), each started from the image's inpainted
background with its object re-noised and blended at every step. Without one, ``bg_simpler`` /
``bg_complex`` are the CPU edits (another image's background from the simplest / most
complex third) and the other two cannot be made.
"""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from hf_bgbench.edits import EditResult, seeded_rng
from hf_bgbench.edits.diffusion_model import ADVERSARIAL_SCALE, DIFFUSION_EDITS, STARTS

DIFFUSION_ONLY_EDITS = ("bg_inversion", "bg_complex_adv")
"""Edits only the diffusion path makes."""
DIFFUSION_BACKGROUND_EDITS = ("bg_inversion", "bg_simpler", "bg_complex", "bg_complex_adv")
"""Edits made by diffusion guidance when a diffusion model is given."""
NEEDS_MODEL = (
    "made by diffusion guidance (ImageNet-E's method): give --diffusion-model PATH_OR_ID "
    '(a diffusers UNet folder or Hub id, safetensors weights; pip install "hf-bgbench[diffusion]")'
)


@dataclass(frozen=True)
class DiffusionSettings:
    """What the diffusion edits of a build use; recorded in the build parameters."""

    model: str
    steps: int = 20
    strength: float = 0.5
    start: str = "invert"
    adv_model: str = ""
    adv_scale: float = ADVERSARIAL_SCALE
    device: str = "cpu"

    def check(self, edits: tuple[str, ...], label_space: str | None = None) -> None:
        if self.steps < 1 or not 0 < self.strength <= 1 or self.start not in STARTS:
            raise ValueError(
                "--diffusion-steps must be at least 1, --diffusion-strength in (0, 1] and "
                f"--diffusion-start one of {list(STARTS)}."
            )
        if "bg_complex_adv" in edits:
            if not self.adv_model or self.adv_scale <= 0:
                raise ValueError(
                    "bg_complex_adv needs --adv-model NAME (the ImageNet-1k classifier whose "
                    "true-class probability the adversarial guidance lowers) and --adv-scale > 0."
                )
            if label_space is not None and label_space != "imagenet-1k":
                raise ValueError(
                    f"bg_complex_adv needs ImageNet-1k labels; this source has {label_space!r} "
                    "labels (ids without an ImageNet wnid). Leave bg_complex_adv out of --edits."
                )

    def describe(self) -> dict[str, Any]:
        return asdict(self)


@functools.lru_cache(maxsize=2)
def _model(location: str, device: str) -> Any:
    from hf_bgbench.edits.diffusion import load_diffusion_model

    return load_diffusion_model(location, device=device)


@functools.lru_cache(maxsize=2)
def _classifier(name: str, device: str) -> Any:
    from hf_bgbench.edits.diffusion_model import classifier_guidance
    from hf_bgbench.models import load_classifier

    clf = load_classifier(name, device=device)
    if clf.num_classes != 1000:
        raise ValueError(
            f"--adv-model {name} has {clf.num_classes} classes; the adversarial guidance needs "
            "an ImageNet-1k (1000-class) classifier."
        )
    clf.model.requires_grad_(False)
    return classifier_guidance(clf)


def preload(settings: DiffusionSettings, edits: tuple[str, ...]) -> None:
    """Load the diffusion model (and adversarial classifier) now, so a bad path or a missing
    extra fails before any image is processed rather than in a worker later."""
    _model(settings.model, settings.device)
    if "bg_complex_adv" in edits:
        _classifier(settings.adv_model, settings.device)


def diffusion_background(
    settings: DiffusionSettings,
    edit: str,
    image: np.ndarray,
    mask: np.ndarray,
    clean: np.ndarray,
    *,
    label: int,
    seed: int,
    image_id: str,
) -> EditResult:
    """``edit`` (one of :data:`DIFFUSION_BACKGROUND_EDITS`) of one image; the noise seed is
    drawn from (``seed``, ``image_id``, ``edit``) so it does not depend on the order."""
    from hf_bgbench.edits.diffusion import diffusion_edit  # torch: only where it runs

    adversarial = edit == "bg_complex_adv"
    noise_seed = int(seeded_rng(seed, image_id, edit, "diffusion").integers(2**62))
    result = diffusion_edit(
        _model(settings.model, settings.device),
        image,
        mask,
        start_image=clean,
        lam=DIFFUSION_EDITS[edit],
        steps=settings.steps,
        strength=settings.strength,
        start=settings.start,
        seed=noise_seed,
        classifier=_classifier(settings.adv_model, settings.device) if adversarial else None,
        label=label if adversarial else None,
        adversarial_scale=settings.adv_scale if adversarial else 0.0,
    )
    result.params.update(start_image="inpainted background")
    if adversarial:
        result.params["adv_model"] = settings.adv_model
    return result
