"""How numbers are written in every table and report: one place, below everything that
prints a number (the metric kinds in :mod:`hf_bgbench.scoring`, the renderer, the tasks).

A number's *unit* says how: ``"%"`` and ``"pts"`` (a fraction, or a difference of
fractions, as a percentage with one decimal), ``""`` (three decimals) and ``"+"`` (three
decimals with a sign, for scores that go below zero such as RFS)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any


def pct(x: float | None) -> str:
    """A fraction as a percentage with one decimal; "—" when missing or NaN."""
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.1f}"


def number(value: float | None, unit: str = "%") -> str:
    """``value`` written for its ``unit`` (see the module docstring); "—" when missing."""
    if unit in ("%", "pts"):
        return pct(value)
    if value is None:
        return "—"
    return f"{value:+.3f}" if unit == "+" else f"{value:.3f}"


def interval(bounds: Sequence[float] | None, unit: str = "%") -> str:
    """A (lo, hi) interval as ``[lo, hi]`` in ``unit``; "—" when there is none."""
    return "—" if not bounds else f"[{number(bounds[0], unit)}, {number(bounds[1], unit)}]"


Cells = Sequence[tuple[str, Callable[[Any], str]]]
"""A table's columns after the name: (key, how the value under that key is written)."""


def table_row(name: str, values: Mapping[str, Any], cells: Cells) -> list[str]:
    """A table row: ``name``, then each (key, write) of ``cells`` as ``write(values[key])``."""
    return [name, *(write(values[key]) for key, write in cells)]


def named_rows(rows: Mapping[str, Mapping[str, Any]], cells: Cells) -> list[list[str]]:
    """One :func:`table_row` per named entry of ``rows``, in their order."""
    return [table_row(name, values, cells) for name, values in rows.items()]


LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}
"""LaTeX's special characters in text mode and what writes each as itself."""


def latex_text(text: str) -> str:
    """``text`` as LaTeX that prints it: a model id such as ``tf_efficientnet_lite0`` would
    otherwise stop the paper's build ("Missing $ inserted")."""
    return "".join(LATEX_SPECIAL.get(c, c) for c in text)
