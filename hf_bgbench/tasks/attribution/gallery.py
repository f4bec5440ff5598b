"""The attribution gallery: per (class, attribute), its best feature's Grad-CAM on the
feature's top train images with the attribute's mask outlined, drawn with matplotlib."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from hf_bgbench.tasks.gallery import draw_overlay, panel_grid, save_gallery


def draw_gallery(
    rows: Sequence[Mapping], panels: Sequence[Mapping], title: str, path: Path
) -> None:
    """One row per (class, attribute): the best feature's Grad-CAM on its top images, the
    attribute's mask outlined (white) where the image has it."""
    lines = []
    for row in rows:
        mine = [p for p in panels if p["feature"] == row["feature"]]
        lines.append((row, [p for p in mine if p["class_name"] == row["class"]]))
    cols = max(1, max(len(items) for _, items in lines))
    fig, axes = panel_grid(len(lines), cols, 2.6, 2.9)
    for r, (row, items) in enumerate(lines):
        for c, item in enumerate(items):
            caption = (
                f"{row['class']} · {row['attribute']} (IoU {row['train_iou']:.2f})\n"
                f"feature {row['feature']} · "
                f"{str(item['id'])[:20]}"
            )
            mask = item["masks"].get(row["attribute"])
            draw_overlay(axes[r, c], item["image"], item["map"], mask, caption)
    save_gallery(fig, title, path)
