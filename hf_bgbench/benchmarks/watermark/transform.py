"""The two images of a photo: the paper's eval crop, and that crop with the ImageNet-W
watermark drawn by the ``imagenet-w`` package (called, never copied: an optional extra).

The package's transform is used exactly as its README and ``eval_watermark_shortcut.py`` do:
Resize(256) → CenterCrop(224) → ToTensor → ``AddWatermark(224)`` (before normalisation). Its
output is a uint8 image divided by 255, so converting it back to 8 bits is exact and the
stored ``watermark`` image is what the paper's model sees.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import metadata

import numpy as np
import torch
from PIL import Image
from torchvision import transforms
from torchvision.transforms.functional import to_pil_image, to_tensor

from hf_bgbench.benchmarks.watermark.facts import CROP, RESIZE

PACKAGE = "imagenet-w"
INSTALL_HINT = 'pip install "hf-bgbench[watermark]"'

Watermarker = Callable[[torch.Tensor], torch.Tensor]


class WatermarkPackageMissing(RuntimeError):
    """The ``imagenet-w`` package (the watermark transform) is not installed."""


def load_watermarker(image_size: int = CROP) -> Watermarker:
    """The package's ``AddWatermark(image_size)``, or a :class:`WatermarkPackageMissing`
    naming the extra to install."""
    try:
        from imagenet_w import AddWatermark
    except ImportError:
        raise WatermarkPackageMissing(
            f"The watermark benchmark draws its watermark with the {PACKAGE!r} package "
            f"(ImageNet-W, Li et al. 2023), which is not installed: {INSTALL_HINT}"
        ) from None
    return AddWatermark(image_size)


def package_version() -> str:
    """The installed ``imagenet-w`` version (recorded in the build report)."""
    try:
        return metadata.version(PACKAGE)
    except metadata.PackageNotFoundError:
        return ""


CROP_TRANSFORM = transforms.Compose([transforms.Resize(RESIZE), transforms.CenterCrop(CROP)])
"""torchvision's Resize(256) (shorter side, bilinear, antialiased) + CenterCrop(224)."""


def eval_crop(photo: Image.Image) -> Image.Image:
    """The photo as the paper's models see it before the watermark: RGB, 224x224."""
    return CROP_TRANSFORM(photo.convert("RGB"))


def watermarked(crop: Image.Image, watermarker: Watermarker) -> Image.Image:
    """``crop`` with the watermark, through the package's tensor interface."""
    return to_pil_image(watermarker(to_tensor(crop)))


def text_mask(watermarker: Watermarker, size: int = CROP) -> np.ndarray:
    """bool[size, size]: the pixels the watermark may change. The text is white, composited
    over the image, so on a black image exactly its pixels (alpha > 0) become non-zero."""
    black = Image.new("RGB", (size, size))
    return np.asarray(watermarked(black, watermarker)).any(axis=2)
