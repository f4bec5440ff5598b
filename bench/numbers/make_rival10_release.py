#!/usr/bin/env python3
"""Write a small RIVAL10 release (the official layout) from the rival10 sample photos.

    python make_rival10_release.py OUTDIR        -> OUTDIR/RIVAL10/{train,test}/ordinary/...

Self-contained on purpose (numpy + Pillow only, nothing from hf_bgbench), so the old and the
new code convert exactly the same input.  Everything is seeded; run twice, same bytes (with
the same Pillow / libjpeg).

Per image <wnid>_<n>.JPEG the official release has <stem>_attr_labels.npy (2 x 18: present,
changed), <stem>_merged_mask.JPEG (union of the attribute masks) and <stem>_attr_dict.pkl
(attribute name -> base64 mask image, 'entire-object' = the object mask).  The sample photos
have no masks or attributes, so these are synthetic but deterministic:

- object mask: an ellipse with a seeded, off-centre centre and seeded axes (asymmetric on
  purpose, so a transposed / flipped mask would change the numbers);
- attributes: seeded present / changed flags (at least two present per image), each present
  attribute a seeded rectangle inside the object's bounding box;
- encodings vary (PNG "L", PNG "RGB", base64 as bytes and as str); one object mask is stored
  at half size (the converter resizes it), one present attribute has no mask in the pickle.

Splits:
- test  = the 16 sample photos, bytes unchanged, plus 2 "car" stand-ins;
- train = the 16 photos mirrored and scaled to 80 % (re-encoded JPEG q=90), plus 2 other
  car stand-ins.
RIVAL10 has no car photo in the samples, and its linear probe needs train images of every
class, so four in9 vehicle photos are filed under RIVAL10's two car wnids (n02814533 beach
wagon, n03100240 convertible): limousine, jeep (test); minivan, racer (train).
"""

from __future__ import annotations

import base64
import csv
import io
import pickle
import sys
from pathlib import Path

import numpy as np
from PIL import Image, ImageOps

DATA = Path("/work/shared/data")
ATTRS = [
    line.strip()
    for line in (DATA / "reference/rival10_attributes.txt").read_text().splitlines()
    if line.strip()
]
CAR_STANDINS = {  # split -> [(in9 sample file, car wnid)]
    "test": [
        ("n03670208_limousine.JPEG", "n03100240"),
        ("n03594945_jeep.JPEG", "n02814533"),
    ],
    "train": [
        ("n03770679_minivan.JPEG", "n02814533"),
        ("n04037443_racer.JPEG", "n03100240"),
    ],
}


def _png(mask: np.ndarray, mode: str) -> bytes:
    arr = mask.astype(np.uint8) * 255
    if mode == "RGB":  # foreground in one channel only in part of the mask
        arr = np.stack([arr, arr // 2, np.zeros_like(arr)], axis=-1)
    buf = io.BytesIO()
    Image.fromarray(arr, mode).save(buf, format="PNG")
    return buf.getvalue()


def _jpeg_mask(mask: np.ndarray) -> bytes:
    arr = np.repeat((mask.astype(np.uint8) * 255)[..., None], 3, axis=-1)
    buf = io.BytesIO()
    Image.fromarray(arr, "RGB").save(buf, format="JPEG", quality=90)
    return buf.getvalue()


def _ellipse(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    cy = h * rng.uniform(0.38, 0.62)
    cx = w * rng.uniform(0.35, 0.65)
    ry = h * rng.uniform(0.22, 0.38)
    rx = w * rng.uniform(0.20, 0.40)
    yy, xx = np.mgrid[0:h, 0:w]
    return ((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2 <= 1.0


def _write_item(folder: Path, stem: str, image_bytes: bytes, index: int) -> None:
    with Image.open(io.BytesIO(image_bytes)) as im:
        w, h = im.size
    rng = np.random.default_rng(1000 + index)
    obj = _ellipse(rng, h, w)
    ys, xs = np.nonzero(obj)
    y0, y1, x0, x1 = ys.min(), ys.max() + 1, xs.min(), xs.max() + 1
    present = rng.random(len(ATTRS)) < 0.3
    present[index % len(ATTRS)] = True
    present[(index + 7) % len(ATTRS)] = True
    changed = present & (rng.random(len(ATTRS)) < 0.5)
    masks: dict[str, np.ndarray] = {}
    for i, name in enumerate(ATTRS):
        if not present[i]:
            continue
        ay0 = int(rng.integers(y0, max(y0 + 1, y1 - 8)))
        ax0 = int(rng.integers(x0, max(x0 + 1, x1 - 8)))
        ay1 = min(y1, ay0 + int(rng.integers(8, max(9, (y1 - y0) // 2))))
        ax1 = min(x1, ax0 + int(rng.integers(8, max(9, (x1 - x0) // 2))))
        m = np.zeros((h, w), bool)
        m[ay0:ay1, ax0:ax1] = True
        masks[name] = m & obj
    if index == 3:  # a present attribute without a mask in the pickle
        masks.pop(ATTRS[index % len(ATTRS)], None)
    merged = np.zeros((h, w), bool)
    for m in masks.values():
        merged |= m
    d: dict[str, object] = {}
    for j, (name, m) in enumerate(masks.items()):
        enc = base64.b64encode(_png(m, "L" if (index + j) % 2 else "RGB"))
        d[name] = enc if (index + j) % 3 else enc.decode("ascii")
    if index == 5:  # object mask stored at half size
        d["entire-object"] = base64.b64encode(_png(obj[::2, ::2], "L"))
    else:
        d["entire-object"] = base64.b64encode(_png(obj, "L"))
    (folder / f"{stem}.JPEG").write_bytes(image_bytes)
    np.save(folder / f"{stem}_attr_labels.npy", np.stack([present, changed]).astype(np.int64))
    with open(folder / f"{stem}_attr_dict.pkl", "wb") as fh:
        pickle.dump(d, fh, protocol=4)
    (folder / f"{stem}_merged_mask.JPEG").write_bytes(_jpeg_mask(merged))


def _train_version(image_bytes: bytes) -> bytes:
    with Image.open(io.BytesIO(image_bytes)) as im:
        im = ImageOps.mirror(im.convert("RGB"))
        im = im.resize(
            (max(32, round(im.width * 0.8)), max(32, round(im.height * 0.8))), Image.BICUBIC
        )
        buf = io.BytesIO()
        im.save(buf, format="JPEG", quality=90)
    return buf.getvalue()


def main(out: Path) -> None:
    release = out / "RIVAL10"
    if release.exists():
        sys.exit(f"{release} exists; remove it first")
    with open(DATA / "rival10_samples/metadata.csv", newline="") as fh:
        rows = sorted(csv.DictReader(fh), key=lambda r: r["file"])
    index = 0
    for split in ("train", "test"):
        folder = release / split / "ordinary"
        folder.mkdir(parents=True)
        n = 1000 * (1 if split == "train" else 2)
        for r in rows:
            raw = (DATA / "rival10_samples/images" / r["file"]).read_bytes()
            data = raw if split == "test" else _train_version(raw)
            _write_item(folder, f"{r['wnid']}_{n + index}", data, index)
            index += 1
        for file, wnid in CAR_STANDINS[split]:
            raw = (DATA / "in9_samples/images" / file).read_bytes()
            data = raw if split == "test" else _train_version(raw)
            _write_item(folder, f"{wnid}_{n + index}", data, index)
            index += 1
    print(f"wrote {release}: {index} images")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(Path(sys.argv[1]))
