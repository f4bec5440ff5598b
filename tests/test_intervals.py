"""Confidence intervals: hand-checked values, seeding, and the effect of pairing."""

from __future__ import annotations

import numpy as np
import pytest

from hf_bgbench.metrics import paired_bootstrap_difference, wilson_interval
from hf_bgbench.metrics.intervals import (
    class_bootstrap_means,
    resampling_gap,
    withheld_interval,
)
from hf_bgbench.metrics.noise import rfs_bootstrap_intervals, rfs_class_mean_intervals


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
    # identical variants: resampling cannot vary the gap, and [0, 0] would read as certainty
    assert same is None
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


def _class_mean_coverage(per_class: int, reps: int, seed: int) -> tuple[float, float, int]:
    """Synthetic class-mean accuracies with known truth: 10 classes, ``per_class`` images
    each right with the class's probability p_c (known), the statistic the mean over classes
    of each class's accuracy. Returns (coverage of the intervals given, share of replications
    given one, zero-width intervals given) over ``reps`` replications of the stratified
    bootstrap (500 resamples) with :func:`resampling_gap` deciding."""
    rng = np.random.default_rng(seed)
    p = np.linspace(0.5, 0.8, 10)
    truth = p.mean()
    groups = np.repeat(np.arange(10), per_class)
    covered = given = zero = 0
    for r in range(reps):
        right = (rng.random(groups.size) < p[groups]).astype(float)
        (samples,) = class_bootstrap_means(right, groups=groups, n_resamples=500, seed=r)
        bounds = withheld_interval(samples, resampling_gap(right, groups=groups))
        if bounds is None:
            continue
        given += 1
        covered += bounds[0] <= truth <= bounds[1]
        zero += bounds[0] == bounds[1]
    return covered / max(given, 1), given / reps, zero


def test_class_stratified_intervals_cover_or_are_withheld():
    """The stratified bootstrap cannot move a class of one image or a
    class that is all right / all wrong, so it printed "83.3 [83.3, 83.3]". With 30 images
    per class (classes vary) the interval is given and covers the known truth about 95% of
    the time; with 3 per class some class is nearly always constant and the interval is
    withheld (never zero-width, never shown too narrow as if certain)."""
    coverage, given, zero = _class_mean_coverage(per_class=30, reps=200, seed=1)
    assert given >= 0.95 and zero == 0
    assert coverage >= 0.9  # nominal 0.95; 200 replications: ± 0.03
    coverage, given, zero = _class_mean_coverage(per_class=3, reps=200, seed=2)
    assert given <= 0.05 and zero == 0


def test_resampling_gap_names_the_classes_that_cannot_vary():
    right = np.array([1.0, 1.0, 1.0, 0.0, 1.0, 0.0])
    groups = np.array([0, 0, 0, 1, 1, 2])
    said = resampling_gap(right, groups=groups, names=["dog", "bird", "fish"])
    assert said == (
        "class 'fish' has 1 image; every image of class 'dog' has the same value, so "
        "resampling within a class cannot vary them"
    )
    assert resampling_gap(np.array([0.0, 1.0, 1.0, 0.0]), groups=np.array([0, 0, 1, 1])) is None
    assert resampling_gap(np.array([1.0])) == "only 1 image(s), so resampling cannot vary them"
    assert resampling_gap(np.ones(5)).startswith("every image has the same value")
    # the noise report's case: 9 images, every class all right under bg noise
    fg, bg = np.zeros(9), np.ones(9)
    ci = rfs_class_mean_intervals(fg, bg, np.arange(9) % 3)
    assert ci == {"accuracy_fg_noise": None, "accuracy_bg_noise": None, "rfs": None}
    # pooled over images (no classes): all alike too
    assert rfs_bootstrap_intervals(fg, bg)["rfs"] is None
