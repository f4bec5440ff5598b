"""The report's figure: a background-reliance profile. One row per headline (each on its own
axis: the units differ), the model's value with its 95% interval as a point, the published
models' values as grey ticks over their shaded range, so a reader sees at once where the
model falls among the published ones."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hf_bgbench.report.markdown import ARROWS


def draw_profile(rows: Sequence[dict[str, Any]], path: Path, model: str) -> None:
    """Draw the profile of ``rows`` (:func:`~hf_bgbench.report.headlines.headline_rows`)
    to ``path`` (PNG); rows without a value are listed as "not run"."""
    import matplotlib.pyplot as plt

    fig = profile_figure(rows, model)
    fig.savefig(path, dpi=130)
    plt.close(fig)


def profile_figure(rows: Sequence[dict[str, Any]], model: str):
    """The profile's matplotlib figure (see :func:`draw_profile`): one axis per row; a row
    without a value shows its status alone -- no published range on an axis without a scale."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = max(len(rows), 1)
    height = 0.62 * n + 1.3
    fig, axes = plt.subplots(n, 1, figsize=(7.5, height), squeeze=False)
    for ax, row in zip(axes[:, 0], rows, strict=False):
        _row(ax, row)
    fig.suptitle(f"Background-reliance profile: {model}", fontsize=10, x=0.02, ha="left", wrap=True)
    # the key on two short lines, so it fits the figure's width (one line ran off the right)
    fig.text(
        0.02,
        0.01,
        "● this model, 95% CI (○ ⚠: see the warnings)   | published models (shaded: their "
        "range)\n↓ lower = less background reliance   ↑ higher = less background reliance",
        fontsize=7,
        color="0.35",
        va="bottom",
    )
    fig.tight_layout(rect=(0, 0.45 / height, 1, 0.97), h_pad=0.3)
    return fig


def _row(ax, row: dict[str, Any]) -> None:
    unit = {"%": " %", "pts": " pts"}.get(row["unit"], "")
    which = f": {row['which']}" if row["which"] else ""
    arrow = ARROWS[row["reliance"]]
    name = f"{row['benchmark_title']} · {row['label']}{which}{unit} {arrow}".rstrip()
    if row.get("sample"):
        name += " (a sample)"
    if row.get("warnings"):
        name += " ⚠"
    ax.set_yticks([0])
    ax.set_yticklabels([name], fontsize=8)
    ax.set_ylim(-1, 1)
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    ax.tick_params(axis="x", labelsize=7)
    published = [p["value"] for p in row["published"]] if row["value"] is not None else []
    xs = list(published)
    if published:
        if len(published) > 1:
            ax.axvspan(min(published), max(published), color="0.85", zorder=0)
        ax.scatter(published, [0] * len(published), marker="|", s=180, color="0.45", zorder=2)
    if row["value"] is not None:
        value, ci = row["value"], row["ci95"]
        err = None
        if ci is not None:
            err = [[max(value - ci[0], 0.0)], [max(ci[1] - value, 0.0)]]
            xs += list(ci)
        warned = bool(row.get("warnings"))  # drawn hollow and red: see report.md's warnings
        ax.errorbar(
            [value],
            [0],
            xerr=err,
            fmt="o",
            color="tab:red" if warned else "tab:blue",
            mfc="white" if warned else None,
            capsize=3,
            zorder=3,
        )
        xs.append(value)
    else:
        ax.set_xticks([])
        ax.text(
            0.5,
            0,
            row["status"],
            transform=ax.get_yaxis_transform(),
            ha="center",
            va="center",
            fontsize=8,
            color="0.4",
        )
    if xs:
        lo, hi = min(xs), max(xs)
        pad = max((hi - lo) * 0.08, 0.5 if row["unit"] else 0.02)
        ax.set_xlim(lo - pad, hi + pad)
