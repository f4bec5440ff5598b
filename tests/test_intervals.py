"""Confidence intervals: hand-checked values, seeding, and the effect of pairing."""

from __future__ import annotations

import numpy as np
import pytest

from hf_bgbench.metrics import paired_bootstrap_difference, wilson_interval


def test_wilson_hand_values():
    # p = 0.5, n = 100, z = 1.96: centre 0.5, half-width 1.96 * sqrt(0.0025 + 0.000096) / 1.0384
    assert wilson_interval(50, 100) == pytest.approx((0.4038, 0.5962), abs=1e-4)
    lo, hi = wilson_interval(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-4)  # never a degenerate [0, 0]
    assert wilson_interval(10, 10)[1] == 1.0


def test_wilson_bad_input():
    with pytest.raises(ValueError, match="`n`"):
        wilson_interval(0, 0)
    with pytest.raises(ValueError, match="`correct`"):
        wilson_interval(5, 4)
    with pytest.raises(ValueError, match="`confidence`"):
        wilson_interval(1, 4, confidence=1.5)


def test_paired_bootstrap_is_seeded_and_pairing_matters():
    rng = np.random.default_rng(1)
    a = rng.random(400) < 0.8
    same = paired_bootstrap_difference(a, a, seed=3)
    assert same == (0.0, 0.0)  # identical variants: no gap in any resample
    b = a.copy()
    b[:40] = ~b[:40]
    first = paired_bootstrap_difference(a, b, seed=3)
    assert first == paired_bootstrap_difference(a, b, seed=3)
    assert first != paired_bootstrap_difference(a, b, seed=4)
    assert first[0] <= a.mean() - b.mean() <= first[1]
    with pytest.raises(ValueError, match="same length"):
        paired_bootstrap_difference(a, b[:-1])


def test_one_bootstrap_draws_the_same_in_chunks(monkeypatch):
    """bootstrap_means draws its indices in bounded chunks: the same stream, the same means
    as one draw of all of them; columns are resampled with the same rows."""
    from hf_bgbench.metrics import intervals

    rng = np.random.default_rng(2)
    a, b = rng.random(301), rng.random(301)
    whole = np.random.default_rng(7).integers(0, 301, size=(50, 301))
    monkeypatch.setattr(intervals, "CHUNK_VALUES", 1000)  # 3 resamples per chunk
    mean_a, mean_b = intervals.bootstrap_means(a, b, n_resamples=50, seed=7)
    assert np.array_equal(mean_a, a[whole].mean(axis=1))
    assert np.array_equal(mean_b, b[whole].mean(axis=1))
    lo, hi = intervals.percentile_interval(mean_a)
    assert (lo, hi) == tuple(np.quantile(mean_a, [(1 - 0.95) / 2, 1 - (1 - 0.95) / 2]))
    assert intervals.percentile_interval(mean_a, quantiles=(0.025, 0.975)) == tuple(
        np.quantile(mean_a, [0.025, 0.975])
    )
    with pytest.raises(ValueError, match="n_resamples"):
        intervals.bootstrap_means(a, n_resamples=0)
