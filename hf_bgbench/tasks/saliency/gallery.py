"""The saliency gallery: images with their Grad-CAM overlaid and the object mask outlined,
drawn with matplotlib (one PNG, written next to the results)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

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
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cols = min(COLUMNS, len(items))
    rows = math.ceil(len(items) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.0 * cols, 3.35 * rows + 0.4), squeeze=False)
    for ax in axes.flat:
        ax.axis("off")
    for ax, item in zip(axes.flat, items, strict=False):
        ax.imshow(item["image"])
        ax.imshow(item["map"].astype("float32"), cmap="jet", alpha=0.45, vmin=0.0, vmax=1.0)
        if item["mask"].any() and not item["mask"].all():
            ax.contour(item["mask"], levels=[0.5], colors="white", linewidths=1.2)
        target = target_name(item["target_class"])
        ax.set_title(
            f"{_short(item['id'], 22)}\ntrue {classes[item['label']]} · CAM of "
            f"{_short(target, 16)}\nΔdensity {item['delta']:+.2f}",
            fontsize=7.5,
        )
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110, format="png")
    plt.close(fig)


def _short(text: str, most: int) -> str:
    text = str(text).split(",")[0]
    return text if len(text) <= most else text[: most - 1] + "…"
