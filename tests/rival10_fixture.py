"""A tiny RIVAL10 in EXACTLY the official release format (SPEC §2), with known contents.

``write_rival10_release(root)`` writes ``root/RIVAL10/{train,test}/ordinary/`` with, per
image ``<wnid>_<n>.JPEG``: ``<stem>_attr_labels.npy`` (shape (2, 18): row 0 present, row 1
changed by augmentation), ``<stem>_merged_mask.JPEG`` and ``<stem>_attr_dict.pkl`` (a real
pickle of a dict attribute-name -> base64-encoded mask image, ``entire-object`` = the object
mask). 10 classes x 2 images per split (the two ImageNet classes of each RIVAL10 class),
images of varying sizes (multiples of 8 from 40 to 80 pixels), seeded.

:func:`fixture_items` gives what every image *should* become after conversion (the masks as
booleans at the image's size, binarised "any channel != 0"), so tests compare decoded rows
with it. Masks are rectangles on the 8x8 JPEG block grid, so even the JPEG-encoded masks
decode to exactly 0 / 255 and the expectation is exact. The mask encodings vary on purpose:
PNG "L", PNG "RGB", JPEG "RGB", JPEG "L", base64 as ``bytes`` and as ``str``. Edge cases:

- ``EDGE_PRESENT_WITHOUT_MASK``: a present attribute has no mask in the pickle (no entry);
- ``EDGE_MASK_OF_ABSENT``: the pickle holds a mask for an absent attribute (not kept);
- ``EDGE_HALF_SIZE_MASK``: the object mask is stored at half the image's size (PNG; the
  converter resizes it, nearest neighbour, to the image's size);
- ``EDGE_PNG_MERGED``: ``<stem>_merged_mask.JPEG`` holds PNG bytes (decode by content).

A ``superimposed/`` folder beside ``ordinary/`` holds a stray image (to be ignored).
"""

from __future__ import annotations

import base64
import io
import json
import pickle
from dataclasses import dataclass, field
from functools import cache, lru_cache
from importlib import resources
from pathlib import Path

import numpy as np
from PIL import Image

from hf_bgbench.benchmarks.rival10.labels import rival10_attributes, rival10_classes
from tests.built_once import built_folder, copy_built

SPLITS = ("train", "test")
PER_CLASS = 2
OBJECT_KEY = "entire-object"
BLOCK = 8  # JPEG block size: masks on this grid decode exactly

EDGE_PRESENT_WITHOUT_MASK = ("test", 0, 0)  # (split, label, k)
EDGE_MASK_OF_ABSENT = ("test", 1, 0)
EDGE_HALF_SIZE_MASK = ("train", 2, 1)
EDGE_PNG_MERGED = ("test", 3, 1)


@dataclass(frozen=True)
class FixtureItem:
    """One image of the fixture and what its converted row must hold."""

    split: str
    k: int  # which of the class's two ImageNet classes (and images)
    stem: str
    wnid: str
    label: int
    image: np.ndarray  # uint8 (H, W, 3), before JPEG encoding
    object_mask: np.ndarray  # bool (H, W)
    present: np.ndarray  # bool (18,)
    changed: np.ndarray  # bool (18,)
    attribute_masks: dict[str, np.ndarray] = field(default_factory=dict)  # kept, in order
    merged_mask: np.ndarray | None = None  # bool (H, W)

    @property
    def edge(self) -> tuple[str, int, int]:
        """(split, label, k): compare with the ``EDGE_*`` constants."""
        return self.split, self.label, self.k

    @property
    def size(self) -> tuple[int, int]:
        """(width, height), as PIL reports it."""
        return self.image.shape[1], self.image.shape[0]


@lru_cache(maxsize=1)
def class_wnids() -> list[list[str]]:
    """The two source ImageNet wnids of each RIVAL10 class, in label order."""
    root = resources.files("hf_bgbench.benchmarks.rival10").joinpath("resources")
    mapping = json.loads(root.joinpath("rival10_label_mappings.json").read_text("utf-8"))
    wnid_to_name = json.loads(root.joinpath("rival10_wnid_to_class.json").read_text("utf-8"))
    name_to_wnid = {name: wnid for wnid, name in wnid_to_name.items()}
    out: list[list[str]] = [[] for _ in rival10_classes()]
    for name, (_, label) in mapping.items():
        out[label].append(name_to_wnid[name])
    return [sorted(w) for w in out]


def _rect(h: int, w: int, box: tuple[int, int, int, int]) -> np.ndarray:
    x0, y0, x1, y1 = box
    m = np.zeros((h, w), dtype=bool)
    m[y0:y1, x0:x1] = True
    return m


def _item(split: str, label: int, k: int) -> FixtureItem:
    s = SPLITS.index(split)
    rng = np.random.default_rng(1000 * s + 10 * label + k)
    h = 40 + BLOCK * ((label + k) % 4)
    w = 48 + BLOCK * ((label + 2 * k + s) % 5)
    wnid = class_wnids()[label][k]
    stem = f"{wnid}_{1000 * (s + 1) + 10 * label + k}"
    obj = _rect(h, w, (BLOCK, BLOCK, w - BLOCK, h - BLOCK))
    image = rng.integers(0, 90, size=(h, w, 3), dtype=np.uint8)
    image[obj] = (np.array([25 * label, 200 - 15 * label, 60 + 40 * k]) % 256).astype(np.uint8)
    attrs = rival10_attributes()
    present = rng.random(len(attrs)) < 0.3
    present[(label + k) % len(attrs)] = True
    present[(label + 7) % len(attrs)] = True
    changed = present & (rng.random(len(attrs)) < 0.5)
    masks: dict[str, np.ndarray] = {}
    for i, name in enumerate(attrs):
        if present[i]:
            x0 = BLOCK * (1 + i % ((w - 2 * BLOCK) // BLOCK))
            y0 = BLOCK * (1 + (i // 3) % ((h - 2 * BLOCK) // BLOCK))
            masks[name] = _rect(h, w, (x0, y0, min(x0 + 2 * BLOCK, w - BLOCK), y0 + BLOCK))
    if (split, label, k) == EDGE_PRESENT_WITHOUT_MASK:
        masks.pop(attrs[(label + k) % len(attrs)])
    merged = np.zeros((h, w), dtype=bool)
    for m in masks.values():
        merged |= m
    return FixtureItem(split, k, stem, wnid, label, image, obj, present, changed, masks, merged)


@lru_cache(maxsize=1)
def fixture_items() -> tuple[FixtureItem, ...]:
    """Every image of the fixture (train then test, by label then k)."""
    return tuple(
        _item(split, label, k)
        for split in SPLITS
        for label in range(len(rival10_classes()))
        for k in range(PER_CLASS)
    )


def _encode(mask: np.ndarray, how: str) -> bytes:
    """A boolean mask as an image file: ``how`` is "png-L", "png-RGB", "jpeg-RGB", "jpeg-L"."""
    fmt, mode = how.split("-")
    arr = mask.astype(np.uint8) * 255
    if mode == "RGB":  # a coloured mask: the foreground in one channel only stays non-zero
        arr = np.stack([arr, arr // 2, np.zeros_like(arr)], axis=-1)
    buf = io.BytesIO()
    Image.fromarray(arr, mode).save(
        buf, format="PNG" if fmt == "png" else "JPEG", quality=90, subsampling=0
    )
    return buf.getvalue()


ENCODINGS = ("png-L", "jpeg-RGB", "png-RGB", "jpeg-L")


def _attr_dict(item: FixtureItem, index: int) -> dict[str, object]:
    """The pickled dict of ``item``: base64 mask images (``bytes`` or ``str`` values)."""
    d: dict[str, object] = {}
    entries = list(item.attribute_masks.items())
    if item.edge == EDGE_MASK_OF_ABSENT:
        absent = next(a for a, p in zip(rival10_attributes(), item.present, strict=True) if not p)
        entries.append((absent, _rect(*item.object_mask.shape, (0, 0, BLOCK, BLOCK))))
    for j, (name, mask) in enumerate(entries):
        encoded = base64.b64encode(_encode(mask, ENCODINGS[(index + j) % len(ENCODINGS)]))
        d[name] = encoded if (index + j) % 2 else encoded.decode("ascii")
    obj = item.object_mask
    if item.edge == EDGE_HALF_SIZE_MASK:
        obj_bytes = _encode(obj[::2, ::2], "png-L")
    else:
        obj_bytes = _encode(obj, ENCODINGS[index % len(ENCODINGS)])
    d[OBJECT_KEY] = base64.b64encode(obj_bytes)
    return d


def write_rival10_release(root: Path) -> Path:
    """Write the fixture at ``root/RIVAL10`` in the official layout; returns that folder.

    Written once per process, then copied (tests/built_once.py): the caller owns its copy."""
    return copy_built(_written_release(), Path(root) / "RIVAL10")


@lru_cache(maxsize=1)
def _written_release() -> Path:
    return _write_release(built_folder("rival10-release-"))


def _write_release(root: Path) -> Path:
    release = root / "RIVAL10"
    for index, item in enumerate(fixture_items()):
        folder = release / item.split / "ordinary"
        folder.mkdir(parents=True, exist_ok=True)
        Image.fromarray(item.image, "RGB").save(folder / f"{item.stem}.JPEG", quality=90)
        labels = np.stack([item.present, item.changed]).astype(
            np.float32 if index % 2 else np.int64
        )
        np.save(folder / f"{item.stem}_attr_labels.npy", labels)
        with open(folder / f"{item.stem}_attr_dict.pkl", "wb") as fh:
            pickle.dump(_attr_dict(item, index), fh, protocol=3 + index % 3)
        merged_how = "png-L" if item.edge == EDGE_PNG_MERGED else "jpeg-RGB"
        (folder / f"{item.stem}_merged_mask.JPEG").write_bytes(
            _encode(item.merged_mask, merged_how)
        )
    stray = release / "train" / "superimposed"
    stray.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (16, 16), (255, 0, 0)).save(stray / "n99999999_1.JPEG")
    return release


def write_rival10_hub(root: Path, *, workers: int = 1) -> Path:
    """Convert the fixture (written under ``root/release``) into a Hub folder at
    ``root/hub`` with ``bgbench convert rival10``'s converter; returns the Hub folder.

    Converted once per process and number of workers, then copied (tests/built_once.py)."""
    copy_built(_converted_hub(workers), Path(root))
    return Path(root) / "hub"


@cache
def _converted_hub(workers: int) -> Path:
    from hf_bgbench.benchmarks import get_benchmark
    from hf_bgbench.benchmarks.rival10.convert import convert_rival10_release

    root = built_folder("rival10-hub-")
    release = write_rival10_release(root / "release")
    convert_rival10_release(
        release, root / "hub", workers=workers, progress=False, spec=get_benchmark("rival10")
    )
    return root


def attribute_image_counts(split: str) -> dict[str, int]:
    """attribute -> how many ``split`` images have a non-empty mask of it (the object mask,
    ``entire-object``, left out): what a per-attribute analysis should count."""
    counts: dict[str, int] = {}
    for item in fixture_items():
        if item.split != split:
            continue
        for name, mask in item.attribute_masks.items():
            if name != "entire-object" and mask.any():
                counts[name] = counts.get(name, 0) + 1
    return counts
