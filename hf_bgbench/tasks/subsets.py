"""The seeded ``--max-*`` subsets a run draws, and whether a cap left images out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["left_images_out", "seeded_subset"]


def seeded_subset(n: int, limit: int | None, seed: int, *, stream: int, what: str) -> list[int]:
    """All ``n`` rows, or ``limit`` of them drawn with ``seed`` (kept in dataset order), for
    the ``--max-<what>`` options. Separate ``stream`` numbers keep two subsets of one run
    independent (changing one limit does not change which rows the other picks)."""
    if limit is None or limit >= n:
        return list(range(n))
    if limit < 1:
        raise ValueError(f"--max-{what} must be >= 1, got {limit}.")
    rng = np.random.default_rng([seed, stream])
    return sorted(rng.choice(n, size=limit, replace=False).tolist())


def left_images_out(limit: int | None, drawn: Sequence[Any] | None, skipped: int = 0) -> bool:
    """Whether a ``--max-<what>`` cap of ``limit`` left images out, from the ids it
    ``drawn`` (recorded; None: not recorded, assumed so) plus the ``skipped`` unreadable
    ones: :func:`seeded_subset` draws every row when the cap is at or above the data's size,
    so fewer than ``limit`` drawn means every image was scored."""
    if limit is None:
        return False
    if drawn is None:
        return True
    return len(drawn) + skipped >= int(limit)
