"""Confidence intervals for the numbers researchers report.

- :func:`wilson_interval` for an accuracy (closed form, no randomness);
- :func:`paired_bootstrap_difference` for a gap between two variants of the *same* images
  (e.g. BG-GAP): images are resampled together, so the interval reflects the pairing.
  Seeded; the seed and the number of resamples belong in the output.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

from hf_bgbench.metrics._checks import as_bool_array, same_length


def _z(confidence: float) -> float:
    if isinstance(confidence, bool) or not isinstance(confidence, int | float):
        raise ValueError(f"`confidence` must be a number in (0, 1), got {confidence!r}.")
    if not 0 < confidence < 1:
        raise ValueError(f"`confidence` must be in (0, 1), got {confidence}.")
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def wilson_interval(correct: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a proportion ``correct / n``."""
    for name, value in (("correct", correct), ("n", n)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise ValueError(f"`{name}` must be a whole count (an int), got {value!r}.")
    if n <= 0:
        raise ValueError(f"`n` must be positive, got {n}.")
    if not 0 <= correct <= n:
        raise ValueError(f"`correct` must be in [0, n={n}], got {correct}.")
    z = _z(confidence)
    p = correct / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    # At p = 0 (p = 1) the bound is exactly 0 (1); avoid a 1e-17 from rounding.
    lo = 0.0 if correct == 0 else max(0.0, centre - half)
    hi = 1.0 if correct == n else min(1.0, centre + half)
    return lo, hi


def paired_bootstrap_difference(
    correct_a: np.ndarray,
    correct_b: np.ndarray,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> tuple[float, float]:
    """Percentile interval of mean(correct_a) - mean(correct_b) over paired resamples.

    ``correct_a[i]`` and ``correct_b[i]`` are the correctness (0/1) of image ``i`` under two
    variants.
    """
    a = as_bool_array(correct_a, "correct_a").astype(float)
    b = as_bool_array(correct_b, "correct_b").astype(float)
    same_length(correct_a=a, correct_b=b)
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int | np.integer):
        raise ValueError(f"`n_resamples` must be an int, got {n_resamples!r}.")
    if n_resamples < 1:
        raise ValueError(f"`n_resamples` must be at least 1, got {n_resamples}.")
    _z(confidence)
    rng = np.random.default_rng(seed)
    diff = a - b
    idx = rng.integers(0, diff.size, size=(n_resamples, diff.size))
    means = diff[idx].mean(axis=1)
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(means, [alpha, 1 - alpha])
    return float(lo), float(hi)
