"""Confidence intervals for the numbers researchers report.

- :func:`wilson_interval` for an accuracy (closed form, no randomness);
- :func:`bootstrap_intervals`, the one bootstrap entry point: a seeded percentile bootstrap
  over units (images) of statistics of per-unit columns -- a mean, a difference of paired
  means, any function of means (RFS, a ratio of means) -- pooled over the units or, given
  ``groups``, as a class mean (each class resampled within itself). It withholds an interval
  resampling cannot vary (:func:`resampling_gap`) and says why. The seed and the number of
  resamples belong in the output.

Every bootstrap in the package draws through :func:`bootstrap_means` (resample the units
with replacement, the same draws for every column) or its class-stratified form
:func:`class_bootstrap_means`, followed by :func:`percentile_interval`, so one seed gives
the same draws, in the same order, wherever an interval is computed. Tasks, reports and the
other metric modules call :func:`bootstrap_intervals` alone; those three (and
:func:`withheld_interval`) are its parts, public for tests and for reading off the draws.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import NamedTuple

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


def newcombe_interval(
    correct_a: int, n_a: int, correct_b: int, n_b: int, confidence: float = 0.95
) -> tuple[float, float]:
    """Newcombe's hybrid score interval (1998, method 10) of the difference of two
    independent proportions ``correct_a / n_a − correct_b / n_b``: each proportion's Wilson
    interval combined, so it keeps Wilson's coverage at 0% and 100% where a Wald or
    bootstrap interval collapses to zero width. For accuracies on different images."""
    p_a, p_b = correct_a / max(n_a, 1), correct_b / max(n_b, 1)
    lo_a, hi_a = wilson_interval(correct_a, n_a, confidence)
    lo_b, hi_b = wilson_interval(correct_b, n_b, confidence)
    diff = p_a - p_b
    lower = diff - math.sqrt((p_a - lo_a) ** 2 + (hi_b - p_b) ** 2)
    upper = diff + math.sqrt((hi_a - p_a) ** 2 + (p_b - lo_b) ** 2)
    return max(-1.0, lower), min(1.0, upper)


def _check_resamples(n_resamples: int) -> None:
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int | np.integer):
        raise ValueError(f"`n_resamples` must be an int, got {n_resamples!r}.")
    if n_resamples < 1:
        raise ValueError(f"`n_resamples` must be at least 1, got {n_resamples}.")


CHUNK_VALUES = 2_000_000  # resampled values held at once (bounded memory for large runs)


def bootstrap_means(
    *columns: np.ndarray, n_resamples: int = 1000, seed: int = 0
) -> list[np.ndarray]:
    """The mean of each column over ``n_resamples`` bootstrap resamples of its rows.

    Row ``i`` of every column belongs to one unit (an image): a resample draws ``n`` row
    indices with replacement from ``np.random.default_rng(seed)`` and takes them from every
    column alike, so paired values stay paired. Draws are made in chunks of at most
    :data:`CHUNK_VALUES` indices; the stream is the same as one draw of all of them.
    Returns one float array of ``n_resamples`` means per column."""
    _check_resamples(n_resamples)
    n = columns[0].size
    same_length(**{f"column {i}": c for i, c in enumerate(columns)})
    rng = np.random.default_rng(seed)
    means = [np.empty(n_resamples) for _ in columns]
    chunk = max(1, CHUNK_VALUES // max(n, 1))
    for start in range(0, n_resamples, chunk):
        stop = min(n_resamples, start + chunk)
        idx = rng.integers(0, n, size=(stop - start, n))
        for column, out in zip(columns, means, strict=True):
            out[start:stop] = column[idx].mean(axis=1)
    return means


def percentile_interval(
    samples: np.ndarray,
    confidence: float = 0.95,
    *,
    quantiles: tuple[float, float] | None = None,
) -> tuple[float, float]:
    """The central ``confidence`` percentile interval of bootstrap ``samples``: the
    quantiles ``(1 - confidence) / 2`` and ``1 - (1 - confidence) / 2``, or ``quantiles``
    when given (0.025 is not (1 - 0.95) / 2 in floating point, and the interpolated
    quantiles differ in the last bits: a caller whose published numbers used literal
    levels passes them)."""
    if quantiles is None:
        _z(confidence)
        alpha = (1 - confidence) / 2
        quantiles = (alpha, 1 - alpha)
    lo, hi = np.quantile(samples, list(quantiles))
    return float(lo), float(hi)


def resampling_gap(
    *columns: np.ndarray,
    groups: np.ndarray | None = None,
    names: Sequence[str] | None = None,
) -> str | None:
    """Why a percentile bootstrap of these columns' means would leave out a source of
    uncertainty, or None when it would not.

    Resampling can only show the spread the sample has. With ``groups`` (the class-stratified
    bootstrap, :func:`class_bootstrap_means`) each class is resampled within itself, so a
    class with one image, or whose images all have the same value in a column, contributes
    no spread at all -- yet its true rate is uncertain (3 of 3 right is consistent with a
    true accuracy of 40%), and a class of one image gives no estimate of its spread at all.
    Without groups the same holds for the whole sample (fewer than 2 images, or all equal).
    The interval is then withheld rather than shown too narrow -- down to the zero width
    "83.3 [83.3, 83.3]" that reads as certainty. We do not patch such classes with another
    method (a Wilson or Beta interval per class): one interval mixing two methods has no
    known coverage, and no interval with the reason named cannot mislead. Pass the columns
    the statistic is computed from (for a difference of paired means, the difference).
    ``names[g]`` names group ``g`` in the sentence. Returns e.g. "class 'dog' has 1 image;
    every image of class 'ship' has the same value, so resampling cannot vary them"."""
    cols = [np.asarray(c, dtype=float).ravel() for c in columns]
    if groups is None:
        n = cols[0].size if cols else 0
        if n < 2:
            return f"only {n} image(s), so resampling cannot vary them"
        if any(np.all(c == c[0]) for c in cols):
            return "every image has the same value, so resampling cannot vary them"
        return None
    grp = np.asarray(groups)
    single, constant = [], []
    for g in np.unique(grp):
        rows = grp == g
        label = f"'{names[int(g)]}'" if names is not None else str(g)
        if rows.sum() < 2:
            single.append(label)
        elif any(np.all(c[rows] == c[rows][0]) for c in cols):
            constant.append(label)
    parts = []
    if single:
        many = len(single) > 1
        parts.append(
            f"class{'es' if many else ''} {', '.join(single)} ha{'ve' if many else 's'} 1 image"
        )
    if constant:
        many = len(constant) > 1
        parts.append(
            f"every image of class{'es' if many else ''} {', '.join(constant)} has the same value"
        )
    return "; ".join(parts) + ", so resampling within a class cannot vary them" if parts else None


def withheld_interval(
    samples: np.ndarray, gap: str | None, confidence: float = 0.95
) -> list[float] | None:
    """The percentile interval of ``samples`` as a list, or None when :func:`resampling_gap`
    found a ``gap`` (the interval would leave out a source of uncertainty)."""
    return None if gap else list(percentile_interval(samples, confidence))


def paired_bootstrap_difference(
    correct_a: np.ndarray,
    correct_b: np.ndarray,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> tuple[float, float] | None:
    """Percentile interval of mean(correct_a) - mean(correct_b) over paired resamples.

    ``correct_a[i]`` and ``correct_b[i]`` are the correctness (0/1) of image ``i`` under two
    variants. None when every image's difference is the same (e.g. the two variants are
    right on the same images): resampling cannot vary it (:func:`resampling_gap`).
    """
    a = as_bool_array(correct_a, "correct_a").astype(float)
    b = as_bool_array(correct_b, "correct_b").astype(float)
    same_length(correct_a=a, correct_b=b)
    # the mean of the per-image differences (the draws of the mean difference)
    (interval,) = bootstrap_intervals(
        {"difference": a - b}, n_resamples=n_resamples, seed=seed, confidence=confidence
    ).values()
    return interval.bounds


def class_bootstrap_means(
    *columns: np.ndarray, groups: np.ndarray, n_resamples: int = 1000, seed: int = 0
) -> list[np.ndarray]:
    """The bootstrap of a *class-mean* statistic: per resample, the mean over the groups
    (classes) present of each column's mean within the group.

    Stratified: each group's rows are resampled within the group (:func:`bootstrap_means`,
    seeded with ``(seed, group number)``), so every class keeps its size and its weight
    1 / (number of classes) -- the statistic the published class-averaged numbers are.
    Returns one float array of ``n_resamples`` values per column."""
    groups = np.asarray(groups)
    same_length(groups=groups, **{f"column {i}": c for i, c in enumerate(columns)})
    per_group = [
        bootstrap_means(
            *(np.asarray(c)[groups == g] for c in columns),
            n_resamples=n_resamples,
            seed=np.random.SeedSequence([int(seed), k]).generate_state(1)[0],
        )
        for k, g in enumerate(np.unique(groups))
    ]
    return [np.mean([g[i] for g in per_group], axis=0) for i in range(len(columns))]


@dataclass(frozen=True)
class Statistic:
    """A number the bootstrap recomputes on every resample from the resampled means of some
    per-unit columns (pooled means, or class means when the bootstrap has groups).

    ``columns``: the names of the columns it is computed from. ``of_means``: the number from
    their means (one array of resampled means per column, in that order; vectorised over
    the resamples). ``varying``: from the columns' per-unit values, the values as they
    enter the statistic -- what must vary for resampling to show its spread
    (:func:`resampling_gap`): for a difference of paired means, the per-unit difference.
    Build one with :func:`mean_of`, :func:`difference_of_means` or
    :func:`function_of_means`."""

    columns: tuple[str, ...]
    of_means: Callable[..., np.ndarray]
    varying: Callable[..., tuple[np.ndarray, ...]]

    def __post_init__(self) -> None:
        if not self.columns:
            raise ValueError("A Statistic needs the column(s) it is computed from; none given.")


def mean_of(column: str) -> Statistic:
    """The mean of one column."""
    return Statistic((column,), lambda means: means, lambda values: (values,))


def difference_of_means(first: str, second: str) -> Statistic:
    """mean(first) − mean(second) of two paired columns (the same units, resampled
    together); it varies where the per-unit difference does."""
    return Statistic((first, second), lambda a, b: a - b, lambda a, b: (a - b,))


def function_of_means(columns: Sequence[str], function: Callable[..., np.ndarray]) -> Statistic:
    """``function`` of the columns' means (e.g. RFS of the fg- and bg-noise accuracies, or
    ``np.divide`` for a ratio of means), vectorised over the resamples; it needs every
    column to vary."""
    return Statistic(tuple(columns), function, lambda *values: values)


class Interval(NamedTuple):
    """A bootstrap interval: ``bounds`` (low, high), or None with ``withheld`` saying why
    resampling cannot show the statistic's uncertainty (:func:`resampling_gap`)."""

    bounds: tuple[float, float] | None
    withheld: str | None


def bootstrap_intervals(
    columns: Mapping[str, np.ndarray],
    statistics: Mapping[str, Statistic] | None = None,
    *,
    groups: np.ndarray | None = None,
    names: Sequence[str] | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    quantiles: tuple[float, float] | None = None,
) -> dict[str, Interval]:
    """Percentile bootstrap intervals of ``statistics`` (name -> :class:`Statistic`; by
    default the mean of every column) of per-unit ``columns`` (name -> one value per unit,
    e.g. per image; row ``i`` of every column is unit ``i``, so paired values stay paired).

    One seeded draw serves every statistic: units are resampled with replacement
    (:func:`bootstrap_means`), or, with ``groups`` (a class per unit), within their group
    and the statistic taken of the class means (:func:`class_bootstrap_means`: the
    class-averaged numbers). ``confidence`` sets the central interval, or ``quantiles`` the
    literal levels (:func:`percentile_interval`). A statistic whose inputs resampling cannot
    vary (:func:`resampling_gap`, naming classes by ``names``; or no units at all) gets no
    bounds and the reason. Returns name -> :class:`Interval`, in ``statistics``' order."""
    _check_resamples(n_resamples)
    if quantiles is None:
        _z(confidence)
    values = {name: np.asarray(column) for name, column in columns.items()}
    for name, column in values.items():
        if column.ndim != 1:
            raise ValueError(
                f"column {name!r} must hold one value per unit (one-dimensional), "
                f"got shape {column.shape}."
            )
    if groups is not None:
        groups = np.asarray(groups)
        same_length(groups=groups, **values)
    elif values:
        same_length(**values)
    n_units = len(next(iter(values.values()))) if values else 0
    if statistics is None:
        statistics = {name: mean_of(name) for name in values}
    for name, statistic in statistics.items():
        unknown = [c for c in statistic.columns if c not in values]
        if unknown:
            raise ValueError(
                f"statistic {name!r} needs the column(s) {', '.join(map(repr, unknown))}; "
                f"the columns given are {', '.join(map(repr, values)) or 'none'}."
            )
    withheld = {
        # with no units at all, say so (a class-stratified check finds no class to blame)
        name: resampling_gap(
            *statistic.varying(*(values[c] for c in statistic.columns)),
            groups=groups if n_units else None,
            names=names,
        )
        for name, statistic in statistics.items()
    }
    given = [s for name, s in statistics.items() if not withheld[name]]
    needed = [c for c in values if any(c in s.columns for s in given)]
    means: dict[str, np.ndarray] = {}
    if needed:  # the draws do not depend on which columns are resampled
        data = [values[c] for c in needed]
        if groups is None:
            drawn = bootstrap_means(*data, n_resamples=n_resamples, seed=seed)
        else:
            drawn = class_bootstrap_means(*data, groups=groups, n_resamples=n_resamples, seed=seed)
        means = dict(zip(needed, drawn, strict=True))
    out = {}
    for name, statistic in statistics.items():
        if withheld[name]:
            out[name] = Interval(None, withheld[name])
            continue
        samples = statistic.of_means(*(means[c] for c in statistic.columns))
        out[name] = Interval(percentile_interval(samples, confidence, quantiles=quantiles), None)
    return out
