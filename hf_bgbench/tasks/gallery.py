"""The drawing the Grad-CAM galleries of the tasks share: a grid of panels, each an image with
its map overlaid and a mask outlined, written as one PNG with matplotlib (imported at the first
call, so importing this module loads no matplotlib)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

TITLE_HEIGHT = 0.4  # inches above the panels for the gallery's title


def panel_grid(
    rows: int, cols: int, panel_width: float, panel_height: float
) -> tuple[Figure, np.ndarray]:
    """A figure of ``rows`` x ``cols`` blank panels (axes hidden) and its (rows, cols) axes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(
        rows,
        cols,
        figsize=(panel_width * cols, panel_height * rows + TITLE_HEIGHT),
        squeeze=False,
    )
    for ax in axes.flat:
        ax.axis("off")
    return fig, axes


def draw_overlay(
    ax: Axes, image: np.ndarray, saliency: np.ndarray, mask: np.ndarray | None, title: str
) -> None:
    """One panel: ``image``, its map in [0, 1] overlaid and ``mask`` outlined in white."""
    ax.imshow(image)
    ax.imshow(saliency.astype("float32"), cmap="jet", alpha=0.45, vmin=0.0, vmax=1.0)
    # an empty or full mask has no edge to outline
    if mask is not None and mask.any() and not mask.all():
        ax.contour(mask, levels=[0.5], colors="white", linewidths=1.2)
    ax.set_title(title, fontsize=7.5)


def save_gallery(fig: Figure, title: str, path: Path) -> None:
    """Writes ``fig`` under ``title`` as a PNG at ``path`` and closes it."""
    import matplotlib.pyplot as plt

    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110, format="png")
    plt.close(fig)
