"""How numbers are written in every table and report: one place, below everything that
prints a number (the metric kinds in :mod:`hf_bgbench.scoring`, the renderer, the tasks)."""

from __future__ import annotations

import math


def pct(x: float | None) -> str:
    """A fraction as a percentage with one decimal; "—" when missing or NaN."""
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.1f}"
