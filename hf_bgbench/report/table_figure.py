"""The figure of ``bgbench table``: one panel per column of a benchmark's table (each on its
own axis: the units differ), one line per model with its value and 95% interval, the models
in the table's order, so a reader sees at once which intervals overlap."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hf_bgbench.report.markdown import ARROWS


def draw_table(bench: Mapping[str, Any], path: Path) -> None:
    """Draw the models of one benchmark of a table document
    (:func:`hf_bgbench.report.table.model_table`) to ``path`` (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    columns, rows = bench["columns"], bench["rows"]
    models = [row["model"] for row in rows]
    name_width = min(4.5, 0.4 + 0.075 * max(len(m) for m in models))
    fig, axes = plt.subplots(
        1,
        len(columns),
        figsize=(name_width + 2.4 * len(columns), 0.32 * len(models) + 1.5),
        sharey=True,
        squeeze=False,
    )
    for i, (ax, column) in enumerate(zip(axes[0], columns, strict=True)):
        for y, row in enumerate(rows):
            cell = row["cells"][i]
            if cell["value"] is None:
                continue
            ci = cell["ci95"]
            err = None if not ci else [[cell["value"] - ci[0]], [ci[1] - cell["value"]]]
            ax.errorbar([cell["value"]], [y], xerr=err, fmt="o", color="tab:blue", capsize=3)
        if column["unit"] == "pts":  # a gap: no reliance at 0
            ax.axvline(0.0, color="0.6", lw=0.8, ls="--", zorder=0)
        unit = {"%": " (%)", "pts": " (pts)"}.get(column["unit"], "")
        arrow = ARROWS[column.get("reliance", 0)]
        ax.set_title(f"{column['label']}{unit} {arrow}".rstrip(), fontsize=9)
        ax.tick_params(axis="x", labelsize=7)
        ax.grid(axis="x", color="0.9")
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
    axes[0, 0].set_yticks(range(len(models)), models, fontsize=8)
    axes[0, 0].set_ylim(len(models) - 0.5, -0.5)  # the table's first model on top
    fig.suptitle(
        f"{bench['title']}: value and 95% interval per model "
        "(↓ lower = less background reliance, ↑ higher = less)",
        fontsize=9,
        x=0.01,
        ha="left",
    )
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
