"""The saliency gallery: images with their Grad-CAM overlaid and the object mask outlined,
drawn with matplotlib (one PNG, written next to the results)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from hf_bgbench.tasks.gallery import draw_overlay, panel_grid, save_gallery

COLUMNS = 4


def draw_gallery(
    items: Sequence[Mapping[str, Any]],
    classes: Sequence[str],
    target_name: Callable[[int], str],
    title: str,
    path: Path,
) -> None:
    """One panel per item (``image`` uint8 (H, W, 3), ``map`` in [0, 1] (H, W), ``mask`` bool
    (H, W), ``id``, ``label``, ``target_class``, ``delta``), in the order given."""
    cols = min(COLUMNS, len(items))
    fig, axes = panel_grid(math.ceil(len(items) / cols), cols, 3.0, 3.35)
    for ax, item in zip(axes.flat, items, strict=False):
        target = target_name(item["target_class"])
        caption = (
            f"{_short(item['id'], 22)}\ntrue {classes[item['label']]} · CAM of "
            f"{_short(target, 16)}\nΔdensity {item['delta']:+.2f}"
        )
        draw_overlay(ax, item["image"], item["map"], item["mask"], caption)
    save_gallery(fig, title, path)


def _short(text: str, most: int) -> str:
    text = str(text).split(",")[0]
    return text if len(text) <= most else text[: most - 1] + "…"
