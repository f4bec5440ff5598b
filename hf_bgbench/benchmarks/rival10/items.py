"""One image of the official RIVAL10 release -> one row of the bgbench RIVAL10 schema.

Shared by the reader (:mod:`hf_bgbench.benchmarks.rival10.release`) and the converter
(:mod:`hf_bgbench.benchmarks.rival10.convert`), so both give the same rows. Kept free of
``datasets``
and ``torch`` imports: the converter runs it in worker processes.

Per image ``<stem>.JPEG`` the release has ``<stem>_attr_labels.npy`` (2 x 18: row 0 = the
attribute is present, row 1 = changed by augmentation), ``<stem>_merged_mask.JPEG`` and
``<stem>_attr_dict.pkl``: a pickled dict attribute name -> base64-encoded mask image
(``entire-object`` = the object mask). The pickles are untrusted: :class:`SafeUnpickler`
builds plain dicts, strings and bytes only and refuses every global (no code can run).

**Mask rule.** A mask image is decoded by content (JPEG or PNG, whatever the extension),
its channels are combined and a pixel is foreground when *any channel is non-zero* -- the
authors' loader sums the channels and binarises with ``!= 0``. Masks are kept at the
image's own size (a mask of another size is resized to it, nearest neighbour; the authors'
loader resizes everything to 224x224 instead) and stored as "L" PNGs with values 0/255.
"""

from __future__ import annotations

import base64
import binascii
import pickle
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from hf_bgbench.benchmarks.rival10.labels import rival10_attributes
from hf_bgbench.data.schema import ID, IMAGE, LABEL, encode_mask
from hf_bgbench.files import ImageDecodeError, image_size, open_image

OBJECT_KEY = "entire-object"
OBJECT_MASK = "object_mask"
ATTRIBUTES = "attributes"
CHANGED_ATTRIBUTES = "changed_attributes"
ATTRIBUTE_MASKS = "attribute_masks"
MERGED_MASK = "merged_mask"
WNID = "imagenet_wnid"
RIVAL10_COLUMNS = (
    IMAGE,
    LABEL,
    OBJECT_MASK,
    ATTRIBUTES,
    CHANGED_ATTRIBUTES,
    ATTRIBUTE_MASKS,
    MERGED_MASK,
    ID,
    WNID,
)
"""Every column of a RIVAL10 row, in the order the dataset stores them."""

LABELS_SUFFIX = "_attr_labels.npy"
MERGED_SUFFIX = "_merged_mask.JPEG"
PICKLE_SUFFIX = "_attr_dict.pkl"
COMPANION_SUFFIXES = (LABELS_SUFFIX, MERGED_SUFFIX, PICKLE_SUFFIX)

# Why an image is skipped (counted in the build report; never silent).
MISSING_FILES = "missing_files"
UNREADABLE = "unreadable"
OUTSIDE_LABEL_SPACE = "outside_label_space"
EMPTY_OBJECT_MASK = "empty_object_mask"


class ItemError(ValueError):
    """One image of the release cannot be read; ``reason`` is the report's category."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class UnsafePickleError(ValueError):
    """A pickle asks for something other than dicts, strings and bytes (it could run code)."""


class SafeUnpickler(pickle.Unpickler):
    """An unpickler that refuses every global: only the containers and scalars pickle builds
    without ``find_class`` (dict, list, tuple, str, bytes, numbers, ...) can come out."""

    def __init__(self, file: Any, where: str) -> None:
        super().__init__(file)
        self.where = where

    def find_class(self, module: str, name: str) -> Any:
        raise UnsafePickleError(
            f"{self.where}: refused to unpickle: it asks for {module}.{name}, and a RIVAL10 "
            "attribute pickle holds only a dict of base64 mask images (no classes or "
            "functions). The file may have been tampered with: download the release again."
        )


def load_attr_dict(path: str | Path) -> dict[str, bytes]:
    """The attribute name -> encoded mask image (raw bytes) dict of a ``_attr_dict.pkl``.

    Raises :class:`UnsafePickleError` for a pickle that needs any global and
    :class:`ItemError` for anything else that is not a dict of str -> base64 str/bytes.
    """
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            data = SafeUnpickler(fh, str(path)).load()
    except UnsafePickleError:
        raise
    except Exception as err:  # truncated or not a pickle at all
        raise ItemError(UNREADABLE, f"{path}: not a readable pickle ({err})") from None
    if not isinstance(data, dict):
        raise ItemError(UNREADABLE, f"{path}: holds a {type(data).__name__}, not a dict")
    out = {}
    for key, value in data.items():
        if not isinstance(key, str) or not isinstance(value, (str, bytes, bytearray)):
            raise ItemError(
                UNREADABLE,
                f"{path}: entry {key!r} is a {type(value).__name__}; expected attribute name "
                "-> base64-encoded image (str or bytes)",
            )
        try:
            out[key] = base64.b64decode(value, validate=False)
        except (binascii.Error, ValueError) as err:
            raise ItemError(UNREADABLE, f"{path}: entry {key!r} is not base64 ({err})") from None
    return out


def binarise(data: bytes, size: tuple[int, int], where: str) -> tuple[np.ndarray, bool]:
    """An encoded mask image -> (bool mask of ``size`` = (width, height), was it resized).

    Decoded by content; foreground = any colour channel != 0 (the authors' rule; a
    palette image is read as its colours, an alpha channel is not a mask channel)."""
    try:  # the stored values (16-bit too): any non-zero value is foreground
        img = open_image(data, where, eight_bits=False)
    except ImageDecodeError as err:
        raise ItemError(UNREADABLE, str(err)) from None
    if img.mode == "P":  # palette indices mean nothing: their colours do
        img = img.convert("RGBA" if "transparency" in img.info else "RGB")
    colour = img.mode.replace("A", "") or "L"  # alpha is not a mask channel
    arr = np.asarray(img.convert(colour) if colour != img.mode else img)
    mask = arr.reshape(arr.shape[0], arr.shape[1], -1).any(axis=-1)
    if mask.shape[::-1] == tuple(size):
        return mask, False
    resized = Image.fromarray(mask.astype(np.uint8) * 255, "L").resize(size, Image.NEAREST)
    return np.asarray(resized) > 0, True


def _png(
    data: bytes, size: tuple[int, int], where: str, resized: list[str], need_object: bool = False
) -> dict:
    mask, was_resized = binarise(data, size, where)
    if need_object and not mask.any():  # object noise would add no noise, saliency no object
        raise ItemError(
            EMPTY_OBJECT_MASK,
            f"{where}: the object mask has no object pixel (all zero), so noise on the "
            "object and the object's saliency would measure nothing",
        )
    if was_resized:
        resized.append(where)
    return {"bytes": encode_mask(mask), "path": None}


@dataclass(frozen=True)
class ItemFiles:
    """Where one image of the release and its companion files are."""

    image: str  # <folder>/<stem>.JPEG
    label: int
    wnid: str

    @property
    def stem(self) -> str:
        return Path(self.image).stem

    def companion(self, suffix: str) -> Path:
        return Path(self.image).with_name(self.stem + suffix)


def read_attribute_labels(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """(present, changed) bool[18] from a ``_attr_labels.npy`` of shape (2, 18)."""
    n = len(rival10_attributes())
    try:
        arr = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as err:
        raise ItemError(UNREADABLE, f"{path}: not a readable .npy file ({err})") from None
    if arr.shape != (2, n) or arr.dtype.kind not in "biuf":
        raise ItemError(
            UNREADABLE,
            f"{path}: attribute labels of shape {arr.shape} ({arr.dtype}); expected a numeric "
            f"(2, {n}) array (row 0 present, row 1 changed)",
        )
    return arr[0] != 0, arr[1] != 0


def read_item(
    item: ItemFiles, columns: Sequence[str] = RIVAL10_COLUMNS, *, embed_image: bool = True
) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """(row, notes): image, label, id and the ``columns`` asked for, masks encoded.

    ``embed_image``: the image's bytes go into the row (and the image is fully decoded, to
    catch broken files); otherwise the row points at the file and only its header is read
    (for the mask size). ``notes`` lists what the build report counts: ``resized`` masks
    (not at the image's size), ``masks_of_absent`` (a mask of an attribute marked absent:
    not kept), ``present_without_mask`` and ``unknown_keys`` of the pickle.
    Raises :class:`ItemError` / :class:`UnsafePickleError`.
    """
    attrs = rival10_attributes()
    row: dict[str, Any] = {ID: item.stem, LABEL: item.label, WNID: item.wnid}
    notes: dict[str, list[str]] = {}
    resized = notes.setdefault("resized", [])
    needs_size = {OBJECT_MASK, ATTRIBUTE_MASKS, MERGED_MASK} & set(columns)
    size = (0, 0)
    try:
        if embed_image:
            image_bytes = Path(item.image).read_bytes()
            size = open_image(image_bytes, str(item.image)).size
            row[IMAGE] = {"bytes": image_bytes, "path": None}
        else:
            if needs_size:
                size = image_size(item.image)
            row[IMAGE] = {"bytes": None, "path": item.image}
    except ImageDecodeError as err:
        raise ItemError(UNREADABLE, str(err)) from None
    except OSError as err:
        raise ItemError(UNREADABLE, f"{item.image}: cannot be read ({err})") from None
    if {ATTRIBUTES, CHANGED_ATTRIBUTES, ATTRIBUTE_MASKS} & set(columns):
        present, changed = read_attribute_labels(item.companion(LABELS_SUFFIX))
        row[ATTRIBUTES] = dict(zip(attrs, map(bool, present), strict=True))
        row[CHANGED_ATTRIBUTES] = dict(zip(attrs, map(bool, changed), strict=True))
    if {OBJECT_MASK, ATTRIBUTE_MASKS} & set(columns):
        pkl = item.companion(PICKLE_SUFFIX)
        masks = load_attr_dict(pkl)
        if OBJECT_KEY not in masks:
            raise ItemError(UNREADABLE, f"{pkl}: no {OBJECT_KEY!r} mask (the object mask)")
        where = f"{pkl}[{OBJECT_KEY}]"
        row[OBJECT_MASK] = _png(masks[OBJECT_KEY], size, where, resized, need_object=True)
        if ATTRIBUTE_MASKS in columns:
            flags = dict(zip(attrs, present, strict=True))
            row[ATTRIBUTE_MASKS] = [
                {"attribute": a, "mask": _png(masks[a], size, f"{pkl}[{a}]", resized)}
                for a in attrs
                if flags[a] and a in masks
            ]
            notes["masks_of_absent"] = [
                f"{item.stem}:{a}" for a in attrs if a in masks and not flags[a]
            ]
            notes["present_without_mask"] = [
                f"{item.stem}:{a}" for a in attrs if flags[a] and a not in masks
            ]
            notes["unknown_keys"] = [
                f"{item.stem}:{k}" for k in sorted(masks) if k not in flags and k != OBJECT_KEY
            ]
    if MERGED_MASK in columns:
        merged = item.companion(MERGED_SUFFIX)
        try:
            data = merged.read_bytes()
        except OSError as err:
            raise ItemError(MISSING_FILES, f"{merged}: cannot be read ({err})") from None
        row[MERGED_MASK] = _png(data, size, str(merged), resized)
    return {
        c: row[c] for c in RIVAL10_COLUMNS if c in row and c in (*columns, ID, LABEL, IMAGE)
    }, notes
