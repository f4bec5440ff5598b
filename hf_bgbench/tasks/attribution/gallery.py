"""The attribution gallery: per (class, attribute), its best feature's Grad-CAM on the
feature's top train images with the attribute's mask outlined, drawn with matplotlib."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path


def draw_gallery(
    rows: Sequence[Mapping], panels: Sequence[Mapping], title: str, path: Path
) -> None:
    """One row per (class, attribute): the best feature's Grad-CAM on its top images, the
    attribute's mask outlined (white) where the image has it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lines = []
    for row in rows:
        mine = [p for p in panels if p["feature"] == row["feature"]]
        lines.append((row, [p for p in mine if p["class_name"] == row["class"]]))
    cols = max(1, max(len(items) for _, items in lines))
    fig, axes = plt.subplots(
        len(lines), cols, figsize=(2.6 * cols, 2.9 * len(lines) + 0.4), squeeze=False
    )
    for ax in axes.flat:
        ax.axis("off")
    for r, (row, items) in enumerate(lines):
        for c, item in enumerate(items):
            ax = axes[r, c]
            ax.imshow(item["image"])
            ax.imshow(item["map"].astype("float32"), cmap="jet", alpha=0.45, vmin=0, vmax=1)
            mask = item["masks"].get(row["attribute"])
            if mask is not None and mask.any() and not mask.all():
                ax.contour(mask, levels=[0.5], colors="white", linewidths=1.2)
            ax.set_title(
                f"{row['class']} · {row['attribute']} (IoU {row['train_iou']:.2f})\n"
                f"feature {row['feature']} · "
                f"{str(item['id'])[:20]}",
                fontsize=7.5,
            )
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110, format="png")
    plt.close(fig)
