"""Differentiable guidance objectives of the diffusion path (:mod:`.diffusion`).

- :func:`torch_fourier_complexity` -- L_c of :func:`hf_bgbench.edits.complexity.fourier_complexity`
  in torch, so its gradient can steer the denoising: the same grey weights (ITU-R BT.601, what
  ``cv2.COLOR_RGB2GRAY`` uses), grey levels in [0, 1], the "forward"-normalised 2-D DFT and the
  DC term left out. It differs from the NumPy value only by OpenCV's rounding of grey levels to
  integers. (The authors' guidance loss is the mean |FFT| over the three channels, DC
  included: the channel average of this sum, so a λ means about the same here and there.)
- :func:`background_objective` -- what the guidance ascends: λ·L_c of the background (the
  object region replaced by the fixed object pixels, so only background pixels get a
  gradient), minus ``adversarial_scale``·log p(label | image) when a classifier is given
  (the "adversarial guidance" of ImageNet-E's λ = 20 + adv edit: away from the true class).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

GREY_WEIGHTS = (0.299, 0.587, 0.114)
"""RGB -> grey weights of ``cv2.COLOR_RGB2GRAY`` (ITU-R BT.601)."""

ImageClassifier = Callable[[torch.Tensor], torch.Tensor]
"""(N, 3, H, W) float images in [0, 1] -> (N, C) logits."""


def torch_fourier_complexity(images: torch.Tensor) -> torch.Tensor:
    """L_c of each image of a (N, 3, H, W) batch in [0, 1]: shape (N,), differentiable."""
    if images.ndim != 4 or images.shape[1] != 3:
        raise ValueError(f"Expected (N, 3, H, W) images, got shape {tuple(images.shape)}.")
    weights = images.new_tensor(GREY_WEIGHTS).view(1, 3, 1, 1)
    grey = (images * weights).sum(dim=1)
    amplitude = torch.fft.fft2(grey, norm="forward").abs()
    # The DC term is the mean brightness, not complexity (and a flat image must score 0).
    return amplitude.sum(dim=(-2, -1)) - amplitude[..., 0, 0]


def background_objective(
    images: torch.Tensor,
    object_images: torch.Tensor,
    object_mask: torch.Tensor,
    *,
    lam: float,
    classifier: ImageClassifier | None = None,
    label: int | None = None,
    adversarial_scale: float = 0.0,
) -> torch.Tensor:
    """The scalar the guidance ascends, for predicted clean ``images`` in [0, 1].

    ``object_images`` (same shape, no gradient) supply the object pixels where
    ``object_mask`` (N, 1, H, W, 1 = object) is set: the final image holds them, so L_c is
    measured on the image the edit will produce, and only the background is pushed."""
    composite = images * (1 - object_mask) + object_images.detach() * object_mask
    objective = lam * torch_fourier_complexity(composite).sum()
    if adversarial_scale:
        if classifier is None or label is None:
            raise ValueError("Adversarial guidance needs a classifier and the true label.")
        log_probs = torch.log_softmax(classifier(composite).float(), dim=-1)
        objective = objective - adversarial_scale * log_probs[:, int(label)].sum()
    return objective
