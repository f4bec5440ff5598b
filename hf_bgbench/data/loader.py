"""The one decode loader: rows of a benchmark dataset -> batches of uint8 tensors.

Every task (evaluate, challenge, noise, saliency, probes, edits) reads its data through
:func:`decode_loader`. It decodes the image columns it is asked for in DataLoader worker
processes (off the main process) and ships uint8, so workers move 4x fewer bytes than
float and normalisation runs once per batch on the device (:class:`hf_bgbench.inference.model_step.
ModelStep`).

A row whose image cannot be decoded becomes a *skipped* entry (id, label, reason) that the
task counts and reports; it is never silently dropped. Problems that concern the data as a
whole (images of different sizes in one batch, a mask whose size differs from its image) are
not raised inside a worker -- a worker exception reaches the user wrapped in a DataLoader
traceback -- but carried to the main process and raised there as a :class:`DataError` with
the plain message.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import datasets
import torch
from PIL import Image

from hf_bgbench.data.schema import ID, IMAGE, LABEL
from hf_bgbench.files import ImageDecodeError, eight_bit, image_size, open_image

DECODER_ENV = "BGBENCH_DECODER"
"""Environment variable that picks the image decoder: ``auto`` (default), ``pil`` or
``torchvision`` (see :func:`choose_decoder`)."""
DECODERS = ("auto", "pil", "torchvision")
ENCODED = "encoded"  # item key: the image is still JPEG bytes, decoded in the main process
JPEG_MAGIC = b"\xff\xd8\xff"
# auto picks the GPU decoder for JPEGs larger than this. On an H100 with 16 CPU cores
# (bench/gpu_check.sh, tf_efficientnet_lite0, batch 32), evaluate ran at 1,580 images/s with PIL
# workers and 1,150 with the GPU decoder on IN-9's 224x224 JPEGs, but 660 against 1,150 on
# ImageNet photos (about 500x375): the crossover lies between, set at 256x256.
GPU_DECODE_MIN_PIXELS = 256 * 256


class DataError(ValueError):
    """The data cannot be used as the task asks (message meant for a person)."""


def decode_image(value: Any, where: str | None = None) -> Image.Image:
    """A stored image (``{"bytes", "path"}``, a path or bytes) decoded through the one guarded
    path (:func:`hf_bgbench.files.open_image`: 16-bit scaled to 8, oversized refused by
    name); a path that is not on this disk (a Hub file) is opened by ``datasets``."""
    if isinstance(value, dict) and not value.get("bytes"):
        path = value.get("path")
        if path and not Path(path).exists() and "://" in str(path):
            decoded = datasets.Image().decode_example(value)
            return eight_bit(decoded, where or str(path))
    return open_image(value, where)


def to_rgb(image: Image.Image) -> Image.Image:
    """RGB (drops alpha, expands greyscale/palette)."""
    return image if image.mode == "RGB" else image.convert("RGB")


def rgb_uint8(image: Image.Image) -> torch.Tensor:
    """uint8 (3, H, W) of a PIL image, at its own size (no resize)."""
    from torchvision.transforms.functional import pil_to_tensor

    return pil_to_tensor(to_rgb(image))


def mask_uint8(image: Image.Image) -> torch.Tensor:
    """uint8 (1, H, W) of a mask image (greyscale as stored; binary masks are 0/255)."""
    from torchvision.transforms.functional import pil_to_tensor

    return pil_to_tensor(image if image.mode == "L" else image.convert("L"))


@dataclass(frozen=True)
class Geometry:
    """One resize + centre crop applied alike to an image and its masks, so they stay
    aligned: the image with the model's interpolation, masks with nearest neighbour (a mask
    stays binary). ``resize``: int = shorter side, (H, W) = exact; ``crop``: (H, W) or None.
    Build it from a model's preprocessing with ``Geometry.of(preprocessing)``."""

    resize: int | tuple[int, int]
    crop: tuple[int, int] | None
    interpolation: str = "bilinear"

    @classmethod
    def of(cls, preprocessing: Any) -> Geometry:
        crop = preprocessing.crop
        if crop is None and isinstance(preprocessing.resize, int):
            crop = tuple(preprocessing.input_size)
        return cls(preprocessing.resize, crop, preprocessing.interpolation)

    def __call__(self, image: Image.Image | torch.Tensor, *, mask: bool = False) -> Any:
        """``image`` (PIL, or a uint8 (C, H, W) tensor on any device: the same resize,
        antialiased, and crop through torchvision's tensor kernels) resized and cropped."""
        import torchvision.transforms.functional as F
        from torchvision.transforms import InterpolationMode

        mode = InterpolationMode.NEAREST if mask else InterpolationMode(self.interpolation)
        size = [self.resize] if isinstance(self.resize, int) else list(self.resize)
        tensor = isinstance(image, torch.Tensor)
        if not (tensor and tuple(image.shape[-2:]) == tuple(size)):  # an exact size it has
            image = F.resize(image, size, interpolation=mode, antialias=True)
        return F.center_crop(image, list(self.crop)) if self.crop is not None else image


@dataclass
class Batch:
    """One batch: ``images`` uint8 (N, 3, H, W), ``labels`` int64 (N,), ``ids``, the other
    decoded columns in ``columns`` (image-like -> uint8 tensors, the rest -> lists), and
    the rows that could not be read in ``skipped``."""

    images: torch.Tensor | None
    labels: torch.Tensor | None
    ids: list[str]
    columns: dict[str, Any] = field(default_factory=dict)
    skipped: list[dict[str, Any]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.ids)


class DecodedRows(torch.utils.data.Dataset):
    """Rows ``indices`` of ``ds``: ``image`` through ``image_transform`` (default: RGB uint8
    at its own size), each column of ``image_columns`` (e.g. ``mask``) through
    ``mask_uint8``, every other column of ``columns`` as stored."""

    def __init__(
        self,
        ds: datasets.Dataset,
        indices: Sequence[int],
        *,
        columns: Sequence[str] = (),
        image_transform: Callable[[Image.Image], torch.Tensor] | None = None,
        geometry: Geometry | None = None,
        decoder: str = "pil",
        decode_device: str | torch.device | None = None,
    ):
        if geometry is not None and image_transform is not None:
            raise ValueError("give either image_transform or geometry, not both")
        if decoder not in ("pil", "torchvision"):
            raise ValueError(f"decoder must be 'pil' or 'torchvision', not {decoder!r}")
        self.geometry = geometry
        # the torchvision decoder: JPEG rows decoded by torchvision.io.decode_jpeg, in the
        # worker (decode_device None) or batched in the main process on decode_device (a
        # GPU), then this geometry -- the PIL transform's resize and crop on tensors
        self.decoder = decoder
        self.decode_device = None if decode_device is None else torch.device(decode_device)
        self.tensor_geometry = (
            geometry if geometry is not None else tensor_geometry(image_transform)
        )
        if decoder == "torchvision" and self.tensor_geometry is UNSUPPORTED:
            raise ValueError(f"the torchvision decoder cannot apply {image_transform!r}")
        self.extra = [c for c in columns if c not in (IMAGE, LABEL, ID)]
        missing = [c for c in self.extra if c not in ds.column_names]
        if missing:
            raise DataError(f"the data has no column(s) {missing} (columns: {ds.column_names}).")
        self.image_columns = [c for c in self.extra if isinstance(ds.features[c], datasets.Image)]
        ds = ds.select_columns([IMAGE, LABEL, ID, *self.extra])
        for c in (IMAGE, *self.image_columns):  # decode in the worker, not in Arrow
            ds = ds.cast_column(c, datasets.Image(decode=False))
        self.ds = ds
        self.indices = list(indices)
        self.image_transform = image_transform or rgb_uint8

    def __len__(self) -> int:
        return len(self.indices)

    def __getitem__(self, i: int) -> dict[str, Any]:
        row = self.ds[self.indices[i]]
        item: dict[str, Any] = {ID: row[ID], LABEL: row[LABEL], "error": None}
        column = IMAGE
        try:
            encoded = self._jpeg(row[IMAGE]) if self.decoder == "torchvision" else None
            if encoded is not None and self.decode_device is not None:
                item[IMAGE], item[ENCODED] = encoded, True  # batched on the device later
            elif encoded is not None:
                item[IMAGE] = apply_geometry(decode_jpegs([encoded])[0], self.tensor_geometry)
            else:
                image = decode_image(row[IMAGE])
                if self.geometry is not None:
                    image = self.geometry(to_rgb(image))
                item[IMAGE] = self.image_transform(image)
            for column in self.image_columns:
                mask = decode_image(row[column])
                if self.geometry is not None:
                    mask = self.geometry(mask.convert("L"), mask=True)
                item[column] = mask_uint8(mask)
        except Exception as err:  # corrupt or unreadable file: counted and reported
            prefix = "" if column == IMAGE else f"{column}: "
            said = str(err) if isinstance(err, ImageDecodeError) else f"{type(err).__name__}: {err}"
            item["error"] = f"{prefix}{said}"
            return item
        for column in self.extra:
            if column not in self.image_columns:
                item[column] = row[column]
        return item

    def _jpeg(self, value: Any) -> torch.Tensor | None:
        """The encoded bytes of a stored image as a uint8 tensor when torchvision can decode
        it as PIL would (a baseline or progressive JPEG in RGB or greyscale), else None (the
        row goes through PIL). The header passes the same guard as :func:`decode_image`
        (unreadable, oversized), so both decoders refuse the same files."""
        if isinstance(value, dict):
            data, path = value.get("bytes"), value.get("path")
            if not data and path and Path(path).is_file():
                with open(path, "rb") as f:
                    data = f.read()
        else:
            data = value if isinstance(value, bytes | bytearray) else None
        if not data or not bytes(data[:3]) == JPEG_MAGIC:
            return None
        image_size(bytes(data), value.get("path") if isinstance(value, dict) else None)
        with Image.open(io.BytesIO(data)) as header:  # CMYK/YCCK JPEGs: PIL converts them
            if header.mode not in ("RGB", "L"):
                return None
        return torch.frombuffer(bytearray(data), dtype=torch.uint8)


UNSUPPORTED = object()  # a transform the torchvision decoder cannot reproduce on tensors


def tensor_geometry(transform: Any) -> Geometry | None | object:
    """The :class:`Geometry` that a per-image PIL ``transform`` applies (None: none, the
    image at its own size), so the torchvision decoder can apply it to decoded tensors; or
    :data:`UNSUPPORTED`. Understands the transforms the tasks use: None, an object with a
    ``geometry`` (a protocol's stretch), and a ``Compose`` of RGB conversion, ``Resize``,
    ``CenterCrop``, a resize-if-needed and ``PILToTensor`` (a model's eval transforms)."""
    from torchvision import transforms as T

    if transform is None:
        return None
    if isinstance(getattr(transform, "geometry", None), Geometry):
        return transform.geometry
    if not isinstance(transform, T.Compose):
        return UNSUPPORTED
    resize, crop, interpolation = None, None, "bilinear"
    for step in transform.transforms:
        name = type(step).__name__
        if isinstance(step, T.PILToTensor) or name == "_ToRGB":
            continue  # decode_jpeg already gives RGB uint8 (C, H, W)
        if isinstance(step, T.Resize) and resize is None and crop is None:
            size = step.size if isinstance(step.size, int) else list(step.size)
            resize = size if isinstance(size, int) else size[0] if len(size) == 1 else tuple(size)
            interpolation = step.interpolation.value
        elif name == "_ResizeIfNeeded" and resize is None and crop is None:
            resize, interpolation = tuple(step.size), step.interpolation
        elif isinstance(step, T.CenterCrop) and crop is None:
            crop = tuple(step.size)
        else:
            return UNSUPPORTED
    if resize is None:
        return None if crop is None else UNSUPPORTED
    return Geometry(resize, crop, interpolation)


def apply_geometry(image: torch.Tensor, geometry: Geometry | None) -> torch.Tensor:
    return image if geometry is None else geometry(image)


def decode_jpegs(encoded: list[torch.Tensor], device: torch.device | None = None) -> list:
    """RGB uint8 (3, H, W) tensors of JPEG byte tensors, in one batched
    ``torchvision.io.decode_jpeg`` call (on ``device``: nvJPEG on a GPU)."""
    import warnings

    from torchvision.io import ImageReadMode, decode_jpeg

    where = "cpu" if device is None else device
    with warnings.catch_warnings():  # torchvision 0.29 points to TorchCodec, not installed here
        warnings.simplefilter("ignore", DeprecationWarning)
        return decode_jpeg(encoded, mode=ImageReadMode.RGB, device=where)


def decode_pending(batch: Pending, rows: DecodedRows) -> Batch | str:
    """Finish a batch whose JPEG rows are still bytes: decode them together on the rows'
    device, apply the geometry there, then stack as :func:`collate_rows` does. A row the
    batched call cannot decode is retried alone and, if it fails again, skipped."""
    good, bad = batch.good, list(batch.bad)
    at = [k for k, it in enumerate(good) if it.get(ENCODED)]
    try:
        decoded = decode_jpegs([good[k][IMAGE] for k in at], rows.decode_device)
    except RuntimeError:  # one corrupt file fails the whole call: find it
        decoded = []
        for k in at:
            try:
                decoded.append(decode_jpegs([good[k][IMAGE]], rows.decode_device)[0])
            except RuntimeError as err:
                decoded.append(None)
                bad.append({"id": good[k][ID], "label": good[k][LABEL], "reason": str(err)})
    images = {k: image for k, image in zip(at, decoded, strict=True)}
    kept, tensors = [], []
    for k, it in enumerate(good):
        if k in images and images[k] is None:
            continue
        image = apply_geometry(images[k], rows.tensor_geometry) if k in images else it[IMAGE]
        kept.append(it)
        tensors.append(image.to(rows.decode_device))
    if not kept:
        return Batch(None, None, [], {}, bad)
    return assemble(kept, tensors, bad)


def choose_decoder(
    ds: datasets.Dataset, device: str | torch.device | None, transform: Any = None
) -> str:
    """``pil`` or ``torchvision``: ``$BGBENCH_DECODER`` when it names one; else (``auto``)
    ``torchvision`` when the model runs on a CUDA device and the first image is a JPEG of
    more than :data:`GPU_DECODE_MIN_PIXELS` -- decoding such photos on the GPU keeps up with
    it where CPU decoding cannot -- and PIL otherwise: on a CPU, PIL in the decode workers is
    as fast and is the reference pixels; on a GPU, PIL workers decode small images (IN-9's
    224x224) faster than the batched GPU decoder (measured: see ``GPU_DECODE_MIN_PIXELS``).
    ``transform`` (the per-image PIL transform) must be one the torchvision path can apply
    on tensors; otherwise PIL."""
    asked = os.environ.get(DECODER_ENV, "auto").strip().lower() or "auto"
    if asked not in DECODERS:
        raise ValueError(
            f"the environment variable {DECODER_ENV}={asked!r} is not a decoder: give one "
            f"of {', '.join(DECODERS)}."
        )
    if tensor_geometry(transform) is UNSUPPORTED:
        return "pil"
    if asked != "auto":
        return asked
    cuda = device is not None and torch.device(device).type == "cuda"
    return "torchvision" if cuda and first_jpeg_pixels(ds) > GPU_DECODE_MIN_PIXELS else "pil"


def stored_images(ds: datasets.Dataset, limit: int) -> list[dict[str, Any]]:
    """The image column of the first ``limit`` rows as stored (``{"bytes", "path"}``), not
    decoded: what a size or a format is read from, from the header alone."""
    rows = ds.select(range(min(len(ds), limit))).select_columns([IMAGE])
    return rows.cast_column(IMAGE, datasets.Image(decode=False))[IMAGE]


def first_jpeg_pixels(ds: datasets.Dataset) -> int:
    """Width x height of the first row's stored image when it is a JPEG (by its bytes, not
    its name; read from its header, not decoded); 0 otherwise."""
    if not len(ds):
        return 0
    (value,) = stored_images(ds, 1)
    data, path = value.get("bytes"), value.get("path")
    if not data and path and Path(path).is_file():
        with open(path, "rb") as f:
            data = f.read(3)
    if not data or bytes(data[:3]) != JPEG_MAGIC:
        return 0
    try:
        width, height = image_size(value)  # the decode limit's guard, as decoding has it
    except ImageDecodeError:  # unreadable or oversized: the decode path skips it, counted
        return 0
    return width * height


def collate_rows(items: list[dict[str, Any]]) -> Batch | str:
    """Stack decoded rows; a data-level problem is returned as a message (raised in the main
    process by :func:`iterate`), never raised inside a worker."""
    good = [it for it in items if it["error"] is None]
    bad = [{"id": it[ID], "label": it[LABEL], "reason": it["error"]} for it in items if it["error"]]
    if not good:
        return Batch(None, None, [], {}, bad)
    if any(it.get(ENCODED) for it in good):
        return Pending(good, bad)  # decoded in the main process (decode_pending)
    return assemble(good, [it[IMAGE] for it in good], bad)


@dataclass
class Pending:
    """A collated batch whose JPEG rows are still bytes (the torchvision decoder on a
    device): :func:`iterate` finishes it with :func:`decode_pending`."""

    good: list[dict[str, Any]]
    bad: list[dict[str, Any]]


def assemble(good: list[dict[str, Any]], images: list[torch.Tensor], bad: list) -> Batch | str:
    """The :class:`Batch` of decoded rows ``good`` whose images are ``images``."""
    sizes = {tuple(image.shape[-2:]) for image in images}
    if len(sizes) > 1:
        return size_message("images", sizes, odd_one(good, images))
    columns: dict[str, Any] = {}
    for column in good[0]:
        if column in (IMAGE, LABEL, ID, "error", ENCODED):
            continue
        values = [it[column] for it in good]
        if isinstance(values[0], torch.Tensor):
            for it, image in zip(good, images, strict=True):
                if tuple(it[column].shape[-2:]) != tuple(image.shape[-2:]):
                    h, w = image.shape[-2:]
                    mh, mw = it[column].shape[-2:]
                    return (
                        f"image {it[ID]!r} is {h}x{w} but its {column} is {mh}x{mw}; "
                        f"every {column} must have its image's size."
                    )
            columns[column] = torch.stack(values)
        else:
            columns[column] = values
    return Batch(
        torch.stack(images),
        torch.tensor([int(it[LABEL]) for it in good], dtype=torch.long),
        [it[ID] for it in good],
        columns,
        bad,
    )


def odd_one(good: list[dict[str, Any]], images: list[torch.Tensor]) -> str:
    """The id and size of an image whose size fewer images of the batch have."""
    from collections import Counter

    sizes = [tuple(image.shape[-2:]) for image in images]
    rare = min(Counter(sizes).items(), key=lambda kv: kv[1])[0]
    k = sizes.index(rare)
    return f"image {good[k][ID]!r} is {rare[0]}x{rare[1]}"


def size_message(what: str, sizes: set, example: str = "") -> str:
    listed = ", ".join(f"{h}x{w}" for h, w in sorted(sizes))
    named = f" ({example})" if example else ""
    return (
        f"{what} of different sizes ({listed}){named} cannot be batched at their own size; "
        "give the data one size (the benchmarks' images are 224x224), or pass "
        "--resize-to-model-input to resize every image to the model's input (recorded)."
    )


def decode_loader(
    ds: datasets.Dataset,
    indices: Sequence[int] | None = None,
    *,
    columns: Sequence[str] = (),
    image_transform: Callable[[Image.Image], torch.Tensor] | None = None,
    geometry: Geometry | None = None,
    batch_size: int = 32,
    num_workers: int = 0,
    pin_memory: bool = False,
    prefetch_factor: int = 4,
    decoder: str = "pil",
    device: str | torch.device | None = None,
) -> torch.utils.data.DataLoader:
    """A DataLoader over rows ``indices`` (default: all) of ``ds`` yielding :class:`Batch`
    (or a problem message); iterate it with :func:`iterate`. ``geometry`` resizes and crops
    the image and its mask columns alike (photos of different sizes, e.g. RIVAL10).

    ``decoder`` (:func:`choose_decoder`): ``pil``, or ``torchvision`` -- JPEGs decoded by
    ``torchvision.io.decode_jpeg``, batched on ``device`` when it is a GPU (the workers then
    only read bytes), else in the workers."""
    rows = decoded_rows(
        ds,
        indices,
        columns=columns,
        image_transform=image_transform,
        geometry=geometry,
        decoder=decoder,
        device=device,
    )
    return rows_loader(rows, batch_size, num_workers, pin_memory, prefetch_factor)


def rows_loader(
    rows: DecodedRows,
    batch_size: int = 32,
    num_workers: int = 0,
    pin_memory: bool = False,
    prefetch_factor: int = 4,
) -> torch.utils.data.DataLoader:
    """A DataLoader over ``rows`` (a :class:`DecodedRows`, or a subclass such as the linear
    probe's augmented rows) yielding :class:`Batch` (or a problem message); iterate it with
    :func:`iterate`."""
    return torch.utils.data.DataLoader(
        rows,
        batch_size=batch_size,
        num_workers=num_workers,
        collate_fn=collate_rows,
        pin_memory=pin_memory and rows.decode_device is None,
        prefetch_factor=prefetch_factor if num_workers > 0 else None,
    )


def decoded_rows(
    ds: datasets.Dataset,
    indices: Sequence[int] | None = None,
    *,
    columns: Sequence[str] = (),
    image_transform: Callable[[Image.Image], torch.Tensor] | None = None,
    geometry: Geometry | None = None,
    decoder: str = "pil",
    device: str | torch.device | None = None,
) -> DecodedRows:
    """The :class:`DecodedRows` of rows ``indices`` (default: all) of ``ds`` for a model on
    ``device`` (see :func:`decode_loader`)."""
    on_device = decoder == "torchvision" and device is not None
    on_device = on_device and torch.device(device).type != "cpu"
    return DecodedRows(
        ds,
        range(len(ds)) if indices is None else indices,
        columns=columns,
        image_transform=image_transform,
        geometry=geometry,
        decoder=decoder,
        decode_device=device if on_device else None,
    )


def iterate(loader: torch.utils.data.DataLoader) -> Iterator[Batch]:
    """The batches of ``loader``; a data problem found in a worker is raised here, plainly.
    Batches whose JPEGs are still bytes are decoded here, on the loader's device."""
    for batch in loader:
        yield finished(batch, loader.dataset)


def finished(batch: Batch | Pending | str, rows: DecodedRows) -> Batch:
    """A collated batch of ``rows`` made whole in the main process: a data problem a worker
    found raised plainly, JPEGs still in bytes decoded on the rows' device."""
    if isinstance(batch, Pending):
        batch = decode_pending(batch, rows)
    if isinstance(batch, str):
        raise DataError(batch)
    return batch
