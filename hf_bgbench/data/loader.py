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

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import datasets
import torch
from PIL import Image

from hf_bgbench.data.schema import ID, IMAGE, LABEL
from hf_bgbench.files import ImageDecodeError, eight_bit, open_image


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

    def __call__(self, image: Image.Image, *, mask: bool = False) -> Image.Image:
        import torchvision.transforms.functional as F
        from torchvision.transforms import InterpolationMode

        mode = InterpolationMode.NEAREST if mask else InterpolationMode(self.interpolation)
        size = [self.resize] if isinstance(self.resize, int) else list(self.resize)
        image = F.resize(image, size, interpolation=mode)
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
    ):
        if geometry is not None and image_transform is not None:
            raise ValueError("give either image_transform or geometry, not both")
        self.geometry = geometry
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


def collate_rows(items: list[dict[str, Any]]) -> Batch | str:
    """Stack decoded rows; a data-level problem is returned as a message (raised in the main
    process by :func:`iterate`), never raised inside a worker."""
    good = [it for it in items if it["error"] is None]
    bad = [{"id": it[ID], "label": it[LABEL], "reason": it["error"]} for it in items if it["error"]]
    if not good:
        return Batch(None, None, [], {}, bad)
    sizes = {tuple(it[IMAGE].shape[-2:]) for it in good}
    if len(sizes) > 1:
        return size_message("images", sizes)
    columns: dict[str, Any] = {}
    for column in good[0]:
        if column in (IMAGE, LABEL, ID, "error"):
            continue
        values = [it[column] for it in good]
        if isinstance(values[0], torch.Tensor):
            for it in good:
                if tuple(it[column].shape[-2:]) != tuple(it[IMAGE].shape[-2:]):
                    h, w = it[IMAGE].shape[-2:]
                    mh, mw = it[column].shape[-2:]
                    return (
                        f"image {it[ID]!r} is {h}x{w} but its {column} is {mh}x{mw}; "
                        f"every {column} must have its image's size."
                    )
            columns[column] = torch.stack(values)
        else:
            columns[column] = values
    return Batch(
        torch.stack([it[IMAGE] for it in good]),
        torch.tensor([int(it[LABEL]) for it in good], dtype=torch.long),
        [it[ID] for it in good],
        columns,
        bad,
    )


def size_message(what: str, sizes: set) -> str:
    listed = ", ".join(f"{h}x{w}" for h, w in sorted(sizes))
    return (
        f"{what} of different sizes ({listed}) cannot be batched at their own size; give "
        "the data one size (the benchmarks' images are 224x224) or let the model resize them."
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
) -> torch.utils.data.DataLoader:
    """A DataLoader over rows ``indices`` (default: all) of ``ds`` yielding :class:`Batch`
    (or a problem message); iterate it with :func:`iterate`. ``geometry`` resizes and crops
    the image and its mask columns alike (photos of different sizes, e.g. RIVAL10)."""
    rows = DecodedRows(
        ds,
        range(len(ds)) if indices is None else indices,
        columns=columns,
        image_transform=image_transform,
        geometry=geometry,
    )
    return torch.utils.data.DataLoader(
        rows,
        batch_size=batch_size,
        num_workers=num_workers,
        collate_fn=collate_rows,
        pin_memory=pin_memory,
        prefetch_factor=prefetch_factor if num_workers > 0 else None,
    )


def iterate(loader: torch.utils.data.DataLoader) -> Iterator[Batch]:
    """The batches of ``loader``; a data problem found in a worker is raised here, plainly."""
    for batch in loader:
        if isinstance(batch, str):
            raise DataError(batch)
        yield batch
