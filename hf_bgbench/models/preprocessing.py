"""A model's own evaluation preprocessing, read from its config (timm or transformers).

:class:`Preprocessing` is a plain, JSON-able description (recorded in results.json) that
also builds the torchvision transforms. Transforms are built from picklable callables so
they work in DataLoader worker processes.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import torch
from PIL import Image

logger = logging.getLogger(__name__)

_PIL_RESAMPLE_NAMES = {
    0: "nearest",
    1: "lanczos",
    2: "bilinear",
    3: "bicubic",
    4: "box",
    5: "hamming",
}


def interpolation_name(value: Any) -> str:
    """Normalise a PIL resample enum/int, torchvision InterpolationMode or string to a name."""
    if value is None:
        return "bilinear"
    if isinstance(value, str):
        name = value.lower()
    elif hasattr(value, "value") and isinstance(value.value, str):  # InterpolationMode
        name = value.value.lower()
    else:
        try:
            name = _PIL_RESAMPLE_NAMES[int(value)]
        except (KeyError, TypeError, ValueError):
            name = str(getattr(value, "name", value)).lower()
    if name in ("random", "bicubic_random"):  # timm training-only modes
        name = "bilinear"
    if name == "antialias":
        name = "bilinear"
    return name


def _torchvision_mode(name: str):
    from torchvision.transforms import InterpolationMode

    try:
        return InterpolationMode(name)
    except ValueError:
        raise ValueError(
            f"Unsupported interpolation {name!r}; expected one of "
            f"{', '.join(m.value for m in InterpolationMode)}."
        ) from None


class _ToRGB:
    """PIL image -> RGB (drops alpha, expands greyscale/palette)."""

    def __call__(self, img: Image.Image) -> Image.Image:
        return img if img.mode == "RGB" else img.convert("RGB")

    def __repr__(self) -> str:
        return "ToRGB()"


class _ResizeIfNeeded:
    """Resize exactly to (H, W) only when the image is not already that size."""

    def __init__(self, size: tuple[int, int], interpolation: str):
        self.size = tuple(size)
        self.interpolation = interpolation

    def __call__(self, img: Image.Image) -> Image.Image:
        h, w = self.size
        if img.size == (w, h):
            return img
        import torchvision.transforms.functional as F

        return F.resize(img, [h, w], interpolation=_torchvision_mode(self.interpolation))

    def __repr__(self) -> str:
        return f"ResizeIfNeeded(size={self.size}, interpolation={self.interpolation})"


@dataclass(frozen=True)
class Preprocessing:
    """Evaluation preprocessing of one model (read from its config, never hard-coded)."""

    input_size: tuple[int, int]  # (H, W) the model expects
    resize: int | tuple[int, int]  # int: shorter side -> this; (H, W): resize exactly
    crop: tuple[int, int] | None  # centre crop after resize (None: no crop)
    interpolation: str  # "bicubic" | "bilinear" | "nearest" ...
    mean: tuple[float, float, float]
    std: tuple[float, float, float]

    def __post_init__(self):
        # Normalise types so equal configs compare/hash/serialise equal.
        object.__setattr__(self, "input_size", tuple(int(x) for x in self.input_size))
        r = self.resize
        object.__setattr__(
            self, "resize", int(r) if isinstance(r, int) else tuple(int(x) for x in r)
        )
        if self.crop is not None:
            object.__setattr__(self, "crop", tuple(int(x) for x in self.crop))
        object.__setattr__(self, "interpolation", interpolation_name(self.interpolation))
        object.__setattr__(self, "mean", tuple(float(x) for x in self.mean))
        object.__setattr__(self, "std", tuple(float(x) for x in self.std))
        if len(self.mean) != 3 or len(self.std) != 3:
            raise ValueError(f"mean/std must have 3 channels, got {self.mean} / {self.std}")

    def _to_tensor(self, normalize: bool):
        from torchvision import transforms as T

        if not normalize:
            return [T.PILToTensor()]  # uint8 CHW; finish with normalize_batch
        return [T.ToTensor(), T.Normalize(self.mean, self.std)]

    def normalize_batch(self, batch: torch.Tensor) -> torch.Tensor:
        """uint8 (N, 3, H, W) -> normalised float, with the same arithmetic as ToTensor +
        Normalize (so results are identical), but once per batch and on the batch's device:
        workers ship 4x fewer bytes and the GPU does the maths."""
        return self.normalize_unit_batch(batch.float().div(255))

    def normalize_unit_batch(self, batch: torch.Tensor, *, inplace: bool = False) -> torch.Tensor:
        """float (N, 3, H, W) in [0, 1] -> normalised: ``(x - mean) / std``. The one place the
        model's normalisation is defined; the Backgrounds Challenge composites in [0, 1] (as
        published) and calls this directly, uint8 batches go through :meth:`normalize_batch`.
        ``inplace``: overwrite ``batch`` (a tensor the caller owns) -- the same arithmetic,
        without two batch-sized allocations."""
        mean = torch.tensor(self.mean, device=batch.device, dtype=batch.dtype).view(1, 3, 1, 1)
        std = torch.tensor(self.std, device=batch.device, dtype=batch.dtype).view(1, 3, 1, 1)
        if inplace:
            return batch.sub_(mean).div_(std)
        return batch.sub(mean).div(std)

    def without_normalisation(self) -> Preprocessing:
        """This preprocessing with the identity normalisation (mean 0, std 1), every size and
        interpolation kept: the model then sees [0, 1] pixels, because
        :meth:`normalize_unit_batch` computes ``(x - 0) / 1``, which is ``x`` exactly. For a
        backbone some protocol feeds unnormalised (e.g. a linear probe trained on [0, 1]
        pixels); the fingerprint of a classifier carrying it differs, as it should."""
        return replace(self, mean=(0.0, 0.0, 0.0), std=(1.0, 1.0, 1.0))

    def full_transform(self, normalize: bool = True) -> Callable[[Image.Image], torch.Tensor]:
        """Raw photos: RGB, resize, centre crop, ToTensor, normalise.

        ``normalize=False`` stops at a uint8 tensor (see :meth:`normalize_batch`)."""
        from torchvision import transforms as T

        mode = _torchvision_mode(self.interpolation)
        size = self.resize if isinstance(self.resize, int) else list(self.resize)
        steps: list[Any] = [_ToRGB(), T.Resize(size, interpolation=mode, antialias=True)]
        if self.crop is not None:
            steps.append(T.CenterCrop(list(self.crop)))
        elif isinstance(self.resize, int):
            # shorter side resized but no crop given: crop to the input size so batches stack
            steps.append(T.CenterCrop(list(self.input_size)))
        return T.Compose(steps + self._to_tensor(normalize))

    def precropped_transform(self, normalize: bool = True) -> Callable[[Image.Image], torch.Tensor]:
        """Benchmark images already cropped (e.g. IN-9's 224x224): RGB, resize exactly to
        ``input_size`` only if the size differs, ToTensor, normalise."""
        from torchvision import transforms as T

        steps = [_ToRGB(), _ResizeIfNeeded(self.input_size, self.interpolation)]
        return T.Compose(steps + self._to_tensor(normalize))

    def to_dict(self) -> dict:
        return {
            "input_size": list(self.input_size),
            "resize": self.resize if isinstance(self.resize, int) else list(self.resize),
            "crop": list(self.crop) if self.crop is not None else None,
            "interpolation": self.interpolation,
            "mean": list(self.mean),
            "std": list(self.std),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Preprocessing:
        resize = d["resize"]
        return cls(
            input_size=tuple(d["input_size"]),
            resize=resize if isinstance(resize, int) else tuple(resize),
            crop=tuple(d["crop"]) if d.get("crop") is not None else None,
            interpolation=d["interpolation"],
            mean=tuple(d["mean"]),
            std=tuple(d["std"]),
        )

    # ------------------------------------------------------------------ constructors

    @classmethod
    def from_timm_data_config(cls, cfg: Mapping[str, Any]) -> Preprocessing:
        """From ``timm.data.resolve_data_config(model=...)`` (eval transform semantics of
        ``timm.data.transforms_imagenet_eval``)."""
        input_size = cfg.get("input_size", (3, 224, 224))
        h, w = int(input_size[-2]), int(input_size[-1])
        crop_pct = cfg.get("crop_pct") or 0.875
        crop_mode = cfg.get("crop_mode") or "center"
        scale = (math.floor(h / crop_pct), math.floor(w / crop_pct))
        if crop_mode == "squash" or scale[0] != scale[1]:
            resize: int | tuple[int, int] = scale
        else:
            if crop_mode not in ("center", "border"):
                logger.warning("timm crop_mode %r approximated by a centre crop", crop_mode)
            resize = scale[0]
        return cls(
            input_size=(h, w),
            resize=resize,
            crop=(h, w),
            interpolation=cfg.get("interpolation", "bilinear"),
            mean=tuple(cfg.get("mean", (0.485, 0.456, 0.406))),
            std=tuple(cfg.get("std", (0.229, 0.224, 0.225))),
        )

    @classmethod
    def from_hf_image_processor(cls, processor: Any, *, model_config: Any = None) -> Preprocessing:
        """From a transformers image processor (``AutoImageProcessor``)."""
        try:
            d = dict(processor.to_dict())
        except Exception:  # pragma: no cover - defensive
            d = {}
        get = partial(_processor_value, d, processor)
        size = _size_dict(get("size"))
        crop_size = _size_dict(get("crop_size"))
        do_resize = bool(get("do_resize", True))
        do_center_crop = bool(get("do_center_crop", False))
        crop_pct = get("crop_pct")
        proc_type = str(d.get("image_processor_type") or type(processor).__name__)
        interpolation = interpolation_name(get("resample", 2))
        mean, std = _processor_mean_std(get)
        rescale = get("rescale_factor", 1 / 255)
        if get("do_rescale", True) and abs(float(rescale) - 1 / 255) > 1e-6:
            logger.warning("image processor rescale_factor %s is not 1/255; ignored", rescale)
        fallback_hw = _config_image_hw(model_config)
        if not do_resize:
            hw = _crop_hw(crop_size) or fallback_hw
            logger.warning("image processor has do_resize=False; resizing to %s anyway", hw)
            resize, crop, input_hw = hw, None, hw
        else:
            resize, crop, input_hw = _resized_geometry(
                size, crop_size, do_center_crop, crop_pct, proc_type, fallback_hw
            )
        return cls(
            input_size=input_hw,
            resize=resize,
            crop=crop,
            interpolation=interpolation,
            mean=mean,
            std=std,
        )


# ------------------------------------------------- a transformers image processor, read


def _processor_value(settings: Mapping[str, Any], processor: Any, key: str, default: Any = None):
    """One setting of an image processor: its dict's value, else its attribute, else
    ``default``."""
    v = settings.get(key, None)
    if v is None:
        v = getattr(processor, key, None)
    return default if v is None else v


def _size_dict(v: Any) -> dict:
    """A processor's size setting (an int, a pair, a mapping or a SizeDict) as a dict."""
    if v is None:
        return {}
    if isinstance(v, int):
        return {"shortest_edge": v}
    if isinstance(v, (tuple, list)) and len(v) == 2:
        return {"height": int(v[0]), "width": int(v[1])}
    if isinstance(v, Mapping):
        return {k: x for k, x in v.items() if x is not None}
    return {k: x for k, x in vars(v).items() if x is not None}  # SizeDict


def _processor_mean_std(
    get: Callable[..., Any],
) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """A processor's per-channel mean and std (identity when it does not normalise)."""
    if get("do_normalize", True):
        mean = tuple(get("image_mean", (0.5, 0.5, 0.5)))
        std = tuple(get("image_std", (0.5, 0.5, 0.5)))
    else:
        mean, std = (0.0, 0.0, 0.0), (1.0, 1.0, 1.0)
    # one value for every channel, as grey-scale processors give it
    if len(mean) == 1:
        mean = mean * 3
    if len(std) == 1:
        std = std * 3
    return mean, std


def _crop_hw(crop_size: Mapping[str, Any]) -> tuple[int, int] | None:
    """The (height, width) of a processor's crop size, or None when it names none."""
    if "height" in crop_size and "width" in crop_size:
        return int(crop_size["height"]), int(crop_size["width"])
    if "shortest_edge" in crop_size:
        s = int(crop_size["shortest_edge"])
        return s, s
    return None


def _config_image_hw(model_config: Any) -> tuple[int, int]:
    """The model config's image size as (height, width): the size when the processor's is
    unusable (224 when the config has none)."""
    image_size = getattr(model_config, "image_size", None) if model_config is not None else None
    if isinstance(image_size, (list, tuple)):
        return (int(image_size[0]), int(image_size[1]))
    return (int(image_size or 224),) * 2


_Geometry = tuple[int | tuple[int, int], tuple[int, int] | None, tuple[int, int]]


def _resized_geometry(
    size: Mapping[str, Any],
    crop_size: Mapping[str, Any],
    do_center_crop: bool,
    crop_pct: Any,
    proc_type: str,
    fallback_hw: tuple[int, int],
) -> _Geometry:
    """The (resize, crop, input size) of a processor that resizes, by its kind of size."""
    if "shortest_edge" in size:
        se = int(size["shortest_edge"])
        if "convnext" in proc_type.lower() and crop_pct is not None:
            return _convnext_geometry(se, crop_pct)
        crop = _crop_hw(crop_size) if do_center_crop else None
        # Shorter side only, no crop: square centre crop so batches stack.
        return (se, crop, crop) if crop is not None else (se, (se, se), (se, se))
    if "height" in size and "width" in size:
        resize = (int(size["height"]), int(size["width"]))
        crop = _crop_hw(crop_size) if do_center_crop else None
        return resize, crop, crop if crop is not None else resize
    if "longest_edge" in size:
        le = int(size["longest_edge"])
        logger.warning("image processor resizes the longest edge; approximated by %dx%d", le, le)
        return (le, le), None, (le, le)
    hw = _crop_hw(crop_size) or fallback_hw
    logger.warning("image processor has no usable size %r; using %s", size, hw)
    return hw, None, hw


def _convnext_geometry(se: int, crop_pct: Any) -> _Geometry:
    """The (resize, crop, input size) of a ConvNeXT processor resizing the shorter side to
    ``se``: below 384, resized by ``1 / crop_pct`` then centre-cropped; else squashed."""
    if se < 384:
        return int(se / float(crop_pct)), (se, se), (se, se)
    return (se, se), None, (se, se)
