"""At what size a benchmark's images reach the model: as they are (the published
protocols), or resized when asked or when the model cannot take them. Used by the tasks and
by the linear probe, so both feed a model the same pixels."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from hf_bgbench.data.loader import DecodedRows, Geometry, stored_images
from hf_bgbench.data.sources import DataSourceError, Reader
from hf_bgbench.inference.model_step import ModelStep
from hf_bgbench.spec import BenchmarkSpec

PROBE_LIMIT = 16
"""Images with more than this many times the model's input pixels are resized to its input
rather than probed with a forward at their own size."""
RESIZED = "resized"
"""How every deviation sentence about resizing the benchmark's images begins."""


def is_resize_deviation(sentence: str) -> bool:
    """Whether a recorded deviation says the images were resized (not the published size)."""
    return sentence.startswith(f"{RESIZED} ")


def accepts_size(step: ModelStep, hw: Sequence[int]) -> bool:
    """Whether the model runs on images of size ``hw`` as they are (CNNs, ViTs with a
    dynamic input size) -- probed with one forward of a blank image."""
    if tuple(hw) == tuple(step.classifier.preprocessing.input_size):
        return True
    if getattr(step.classifier, "any_input_size", False):  # never probed (a served model)
        return True
    try:
        with torch.inference_mode():
            step.classifier.logits(torch.zeros(1, 3, *hw, device=step.device))
    except Exception:  # the model refuses this size (fixed position embeddings, ...)
        return False
    return True


def input_geometry(
    step: ModelStep, hw: Sequence[int], resize_to_model_input: bool
) -> tuple[tuple[int, int] | None, list[str]]:
    """(size to resize to or None, protocol deviations) for benchmark images of size ``hw``.

    The published protocols feed the benchmark's images at their own size; they are resized
    to the model's input size only when asked, or when the model cannot take them -- and
    then the deviation is recorded in results.json, the report header and the model-index.
    """
    model_hw = tuple(int(v) for v in step.classifier.preprocessing.input_size)
    hw = tuple(int(v) for v in hw)
    if hw == model_hw:  # asked to resize: the data's size already, but a stray image is
        return (model_hw if resize_to_model_input else None), []
    interpolation = getattr(step.classifier.preprocessing, "interpolation", "bilinear")
    change = f"{RESIZED} {hw[0]}x{hw[1]} -> {model_hw[0]}x{model_hw[1]} ({interpolation})"
    if resize_to_model_input:
        return model_hw, [f"{change}, as asked (--resize-to-model-input)"]
    if hw[0] * hw[1] > PROBE_LIMIT * model_hw[0] * model_hw[1]:
        # never a forward at such a size: a stray image's size could take the memory down
        return model_hw, [f"{change}: over {PROBE_LIMIT}x the model's input, never run as is"]
    if accepts_size(step, hw):
        return None, []
    return model_hw, [f"{change}: the model does not accept {hw[0]}x{hw[1]} inputs"]


SIZE_SAMPLE = 64
"""Images whose stored size (read from their headers, not decoded) decides the data's
working size: the size most of them have, so one stray image never sets it."""


def first_image_size(ds: Any) -> tuple[int, int]:
    """(H, W) most of the first :data:`SIZE_SAMPLE` images have, read from their headers
    (the benchmark's working size; a stray image of another size -- a 1x1 or a 12000x12000
    -- neither sets it nor is decoded for it); when none of them can be read, the error says
    why the first could not (e.g. every image above the decode limit)."""
    from collections import Counter

    import datasets

    from hf_bgbench.data.schema import IMAGE
    from hf_bgbench.files import ImageDecodeError, image_size

    if IMAGE not in ds.column_names or not isinstance(ds.features.get(IMAGE), datasets.Image):
        return _first_decoded_size(ds)
    sizes: Counter = Counter()
    errors = []
    for value in stored_images(ds, SIZE_SAMPLE):
        try:
            width, height = image_size(value)
        except ImageDecodeError as err:
            errors.append(str(err))
            continue
        sizes[(height, width)] += 1
    if sizes:
        return sizes.most_common(1)[0][0]
    raise none_readable(errors)


def none_readable(errors: Sequence[str]) -> DataSourceError:
    """The refusal when none of the first images could be read: why the first could not."""
    first = f"; the first: {errors[0]}" if errors else " (the data has no rows)"
    return DataSourceError(f"none of the first {len(errors)} images of the data can be read{first}")


def _first_decoded_size(ds: Any) -> tuple[int, int]:
    """(H, W) of the first decodable of the first 8 images (data whose images are not a
    stored image column)."""
    errors = []
    for i in range(min(len(ds), 8)):
        item = DecodedRows(ds, [i])[0]
        if item["error"] is None:
            return tuple(item["image"].shape[-2:])
        errors.append(str(item["error"]))
    raise none_readable(errors)


def precropped(spec: BenchmarkSpec, reader: Reader) -> bool:
    """Whether the data's images are already at the benchmark's evaluation size (IN-9's
    224x224 variants), rather than raw photos that take the model's resize + centre crop."""
    return bool(spec.images_precropped and reader.precropped)


class Stretch:
    """A protocol's fixed input size: the whole photo resized to (H, W) with PIL's bilinear
    filter (antialiased), no crop -- ``transforms.Resize((H, W))`` as some authors feed
    every image -- then uint8 (3, H, W). With ``crop``, the photo's central ``crop`` x
    ``crop`` square first (``transforms.CenterCrop(crop)``: padded with black where the
    photo is smaller), as PUG: ImageNet's authors crop before they resize. A class, not a
    closure, so loader workers can pickle it."""

    def __init__(self, size: Sequence[int], crop: int | None = None):
        self.size = (int(size[0]), int(size[1]))
        self.crop = crop
        self.geometry = Geometry(self.size, None, "bilinear")

    def __call__(self, image: Any) -> torch.Tensor:
        import torchvision.transforms.functional as F

        rgb = image if image.mode == "RGB" else image.convert("RGB")
        if self.crop is not None:
            rgb = F.center_crop(rgb, [self.crop, self.crop])
        array = np.asarray(self.geometry(rgb), dtype=np.uint8)
        return torch.from_numpy(array.copy()).permute(2, 0, 1)


def stretch_size(
    step: ModelStep, size: Sequence[int], resize_to_model_input: bool
) -> tuple[tuple[int, int], list[str]]:
    """(the size to stretch to, deviations): the protocol's ``size``, or the model's input
    size when asked or when the model cannot take ``size`` (recorded)."""
    resize_to, deviations = input_geometry(step, size, resize_to_model_input)
    return (tuple(resize_to) if resize_to else (int(size[0]), int(size[1]))), deviations


def image_transform(
    step: ModelStep,
    spec: BenchmarkSpec,
    reader: Reader,
    ds: Any,
    resize_to_model_input: bool,
    stretch: Sequence[int] | None = None,
    crop: int | None = None,
) -> tuple[Any, list[str], str]:
    """(per-image transform to uint8, protocol deviations, name of what is applied) for
    scoring ``ds`` (its first image gives the size): with ``stretch`` (a protocol's fixed
    size), every photo resized to it (after a central ``crop`` square, when given); else
    raw photos get the model's own eval transform (resize + centre crop, no deviation) and
    precropped images are fed at their own size, resized only when asked or when the model
    cannot take that size."""
    pre = step.classifier.preprocessing
    if stretch is not None and not precropped(spec, reader):
        size, deviations = stretch_size(step, stretch, resize_to_model_input)
        cropped = f"centre crop {crop} + " if crop is not None else ""
        return Stretch(size, crop), deviations, f"{cropped}stretch {size[0]}x{size[1]}"
    if not precropped(spec, reader):
        return pre.full_transform(normalize=False), [], "full"
    resize_to, deviations = input_geometry(step, first_image_size(ds), resize_to_model_input)
    if resize_to is None:
        return None, deviations, "precropped"  # fed at their own size (published protocol)
    return pre.precropped_transform(normalize=False), deviations, "precropped+resized"


def masked_geometry(
    step: ModelStep,
    spec: BenchmarkSpec,
    reader: Reader,
    ds: Any,
    resize_to_model_input: bool,
    stretch: Sequence[int] | None = None,
) -> tuple[Geometry | None, list[str]]:
    """How a task that works on images *and their masks* (noise, saliency) sizes them:
    (geometry for the decode loader, protocol deviations), and ``step.resize_to`` set.

    Benchmark images already at their evaluation size (IN-9's 224x224) stay at that size
    with their masks; the model step resizes the batch on the device only when the model
    cannot take it (or when asked), as :func:`input_geometry` decides. Raw photos (RIVAL10)
    get the model's own eval resize + centre crop, applied alike to image and mask -- or,
    with ``stretch`` (a protocol's fixed size), are resized to it whole, no crop (masks
    with nearest neighbour, so they stay binary)."""
    if stretch is not None and not precropped(spec, reader):
        size, deviations = stretch_size(step, stretch, resize_to_model_input)
        return Geometry(size, None, "bilinear"), deviations
    if not precropped(spec, reader):
        return Geometry.of(step.classifier.preprocessing), []
    step.resize_to, deviations = input_geometry(step, first_image_size(ds), resize_to_model_input)
    return None, deviations
