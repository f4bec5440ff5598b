"""A small PUG: ImageNet in the exact layout the Hub serves (``data/train-*.parquet`` of one
table, a README card), written at test time from real ImageNet photos of PUG classes in
../shared/data: each photo is an "asset"; a "world" is a change of everything around it
(darker, fogged, noisy), so accuracy differs between worlds the way a background can make it.
Also a photo drawn as a Shirt, the class the authors' map can never count right, and the
factor rows (camera yaw, scene light) with every other factor at its default.

Never a copy of the real dataset: nothing here is PUG's pixels."""

from __future__ import annotations

from pathlib import Path

import datasets
import numpy as np
import pandas as pd
from PIL import Image, ImageEnhance

PHOTOS = {  # file under in9_samples/images or rival10_samples/images -> the PUG class
    "n01484850_great_white_shark.JPEG": "Great_white_shark",
    "n01695060_Komodo_dragon.JPEG": "Komodo_dragon",
    "n02114712_red_wolf.JPEG": "Wolf",
    "n02119022_red_fox.JPEG": "Fox",
    "n02701002_ambulance.JPEG": "Ambulance",
    "n03272562_electric_locomotive.JPEG": "Locomotive",
    "n03494278_harmonica.JPEG": "Harmonica",
    "n02123394_Persian_cat.JPEG": "Cat",
}
WORLDS = ("Plain", "Dusk", "Fog", "Static")
SIDE = 320
DEFAULTS = {
    "character_rotation_yaw": 0.0,
    "character_rotation_roll": 0.0,
    "character_rotation_pitch": 0.0,
    "character_scale": 1.0,
    "camera_roll": 0.0,
    "camera_pitch": 0.0,
    "camera_yaw": 0.0,
    "character_texture": "Default",
    "scene_light": "Default",
}
CARD = """---
license: cc-by-nc-4.0
configs:
- config_name: default
  data_files:
  - split: train
    path: data/train-*
---
# PUG: ImageNet (a test fixture in the Hub dataset's layout)
"""


def world_image(photo: Image.Image, world: str, seed: int) -> Image.Image:
    if world == "Dusk":
        return ImageEnhance.Brightness(photo).enhance(0.35)
    if world == "Fog":
        return Image.blend(photo, Image.new("RGB", photo.size, (200, 200, 200)), 0.7)
    if world == "Static":
        rng = np.random.default_rng(seed)
        noisy = np.asarray(photo, float) + rng.normal(0, 90, (SIDE, SIDE, 3))
        return Image.fromarray(noisy.clip(0, 255).astype(np.uint8))
    return photo


def asset_photos(shared_data: Path) -> list[tuple[str, str, Image.Image]]:
    """(asset, class, 320 x 320 photo) of every fixture asset, and the drawn Shirt."""
    out = []
    for n, (file, pug_class) in enumerate(PHOTOS.items()):
        found = [p for p in shared_data.glob(f"*_samples/images/{file}")]
        photo = Image.open(found[0]).convert("RGB").resize((SIDE, SIDE))
        out.append((f"{pug_class}_{n:02d}", pug_class, photo))
    rng = np.random.default_rng(7)
    shirt = (np.full((SIDE, SIDE, 3), 235) - rng.integers(0, 40, (SIDE, SIDE, 3))).astype(np.uint8)
    shirt[80:260, 100:220] = (30, 60, 160)
    out.append(("Shirt_00", "Shirt", Image.fromarray(shirt)))
    return out


def pug_rows(shared_data: Path) -> list[dict]:
    rows = []
    for n, (asset, pug_class, photo) in enumerate(asset_photos(shared_data)):
        base = {"character_name": asset, "character_label": pug_class, **DEFAULTS}
        for w, world in enumerate(WORLDS):
            image = world_image(photo, world, seed=100 * n + w)
            rows.append({**base, "world_name": world, "image": image})
        for yaw in (30.0, 90.0):  # in the first world, as the authors move one factor
            rows.append(
                {**base, "world_name": WORLDS[0], "camera_yaw": yaw, "image": photo.rotate(yaw / 3)}
            )
        rows.append(
            {
                **base,
                "world_name": WORLDS[0],
                "scene_light": "Dark",
                "image": ImageEnhance.Brightness(photo).enhance(0.2),
            }
        )
    return rows


def write_pug(
    folder: Path, shared_data: Path, rows: list[dict] | None = None, shards: int = 1
) -> Path:
    """The fixture (or ``rows``) as the Hub serves facebook/PUG_ImageNet; with ``shards``
    2, the worlds rows in the first shard and the factors' rows in the second."""
    rows = rows if rows is not None else pug_rows(shared_data)
    (folder / "data").mkdir(parents=True, exist_ok=True)
    if shards == 2:
        moved = [r["camera_yaw"] != 0 or r["scene_light"] != "Default" for r in rows]
        parts = [[r for r, m in zip(rows, moved, strict=True) if m == k] for k in (False, True)]
    else:
        parts = [rows]
    for n, part in enumerate(parts):
        _write_shard(part, folder / "data" / f"train-{n:05d}-of-{len(parts):05d}.parquet")
    (folder / "README.md").write_text(CARD)
    return folder


def _write_shard(rows: list[dict], path: Path) -> None:
    frame = pd.DataFrame(rows)
    numeric = {c: pd.api.types.is_numeric_dtype(frame[c]) for c in frame.columns}
    features = datasets.Features(
        {c: datasets.Value("float64" if numeric[c] else "string") for c in frame.columns}
        | {"image": datasets.Image()}
    )
    ds = datasets.Dataset.from_dict({c: frame[c].tolist() for c in frame.columns}, features)
    ds.to_parquet(str(path))


def drawn_rows(classes: tuple[str, ...] = ("Goldfish", "Wolf"), worlds: int = 3) -> list[dict]:
    """Rows of drawn images (no photo needed): one asset per class in every world, and one
    camera-yaw row per asset; for tables a test breaks on purpose."""
    rows = []
    for n, pug_class in enumerate(classes):
        base = {"character_name": f"{pug_class}_{n:02d}", "character_label": pug_class, **DEFAULTS}
        for w in range(worlds):
            colour = (40 * n % 255, 60 * w % 255, 120)
            image = Image.new("RGB", (64, 64), colour)
            rows.append({**base, "world_name": f"World_{w}", "image": image})
        rows.append(
            {
                **base,
                "world_name": "World_0",
                "camera_yaw": 30.0,
                "image": Image.new("RGB", (64, 64), (9, 9, 9)),
            }
        )
    return rows
