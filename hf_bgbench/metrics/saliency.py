"""Saliency alignment with the object mask (RIVAL10; Moayeri et al., 2022; SPEC §2).

A saliency map (e.g. GradCAM on the predicted or true class, non-negative, any scale) is
compared with the binary object mask of the same image and size. Five scores, those of the
RIVAL10 authors' saliency-alignment analysis:

- ``saliency_iou``: IoU between the mask and the map after max-normalising it to [0, 1] and
  binarising at 0.5 (``>= threshold``); in [0, 1].
- ``saliency_fraction_inside``: share of the total saliency that falls on the object; in
  [0, 1].
- ``delta_density``: mean max-normalised saliency on the object minus mean on the
  background; in [-1, 1]. Low or negative values flag maps that sit on the background;
  the paper found this score the best at surfacing spurious background features (water
  for ships, branches for birds).
- ``saliency_average_precision``: average precision of the map's values as a ranking of the
  mask's pixels (the map as a detector of object pixels); in [0, 1], the mask's area for a
  map that ranks nothing (all equal).
- ``saliency_mask_coverage``: share of the mask covered by the smallest set of most salient
  pixels holding at least a fraction ``t`` of the saliency, for t = 25, 50, 75 %; in [0, 1].
  The authors' "Saliency Recall" is the coverage at 25 %.

Undefined cases give NaN instead of raising, so that one degenerate image does not stop a
batch: the saliency fraction is NaN for an all-zero map (there is no saliency to locate),
delta density is NaN when the mask is empty or covers the whole image, IoU is NaN only
when both the mask and the binarised map are empty (an all-zero map against a non-empty mask
has IoU 0), and average precision and mask coverage are NaN when the mask is empty (an
all-zero map against a non-empty mask covers none of it: coverage 0). Batch means
(:func:`saliency_alignment`) skip NaNs and report how many were skipped. Masks are binarised
with ``> 0``.

Aggregation over a data set (:func:`hf_bgbench.metrics.classification.class_mean`, the
authors' protocol): the images are
grouped by the model's *predicted* class, each class's scores are averaged skipping NaNs,
and the model's number is the mean of those class means, so every predicted class weighs
the same whatever its number of images. :func:`class_mean_interval` is its percentile
bootstrap (images resampled within their class).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hf_bgbench.metrics.classification import class_inputs
from hf_bgbench.metrics.intervals import bootstrap_intervals, resampling_gap

COVERAGE_THRESHOLDS = (0.25, 0.5, 0.75)  # cumulative-saliency fractions (RIVAL10 authors')


def _check_pair(saliency: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Validate (..., H, W) maps and masks of one shape; returns float maps and bool masks."""
    try:
        sal = np.asarray(saliency, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("`saliency` must hold numbers.") from None
    msk = np.asarray(mask)
    if sal.ndim < 2:
        raise ValueError(f"`saliency` must be (H, W) or (N, H, W), got shape {sal.shape}.")
    if sal.size == 0:
        raise ValueError("`saliency` is empty.")
    if msk.shape != sal.shape:
        raise ValueError(
            f"`masks` has shape {msk.shape} but `saliency` has {sal.shape}; resize the mask "
            "to the saliency map's size first."
        )
    if not np.all(np.isfinite(sal)):
        raise ValueError("`saliency` holds NaN or infinite values.")
    if np.any(sal < 0):
        raise ValueError(
            "`saliency` has negative values; pass a non-negative map (GradCAM is ReLU'd; "
            "take the absolute value or clip raw gradients first)."
        )
    return sal, msk > 0


def _normalise(sal: np.ndarray) -> np.ndarray:
    """Divide each map by its maximum (an all-zero map stays zero)."""
    peak = sal.max(axis=(-2, -1), keepdims=True)
    return np.divide(sal, peak, out=np.zeros_like(sal), where=peak > 0)


def _reduce(values: np.ndarray) -> float | np.ndarray:
    return float(values) if values.ndim == 0 else values


def saliency_iou(
    saliency: np.ndarray, masks: np.ndarray, threshold: float = 0.5
) -> float | np.ndarray:
    """IoU of the max-normalised map binarised at ``threshold`` with the mask; one value for
    an (H, W) pair, a float[N] array for (N, H, W) batches."""
    sal, msk = _check_pair(saliency, masks)
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"`threshold` must be in (0, 1], got {threshold}.")
    hot = _normalise(sal) >= threshold
    inter = np.sum(hot & msk, axis=(-2, -1)).astype(float)
    union = np.sum(hot | msk, axis=(-2, -1)).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return _reduce(np.where(union > 0, inter / np.maximum(union, 1.0), np.nan))


def saliency_fraction_inside(saliency: np.ndarray, masks: np.ndarray) -> float | np.ndarray:
    """Share of the saliency mass inside the mask (NaN for an all-zero map)."""
    sal, msk = _check_pair(saliency, masks)
    total = sal.sum(axis=(-2, -1))
    inside = (sal * msk).sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return _reduce(np.where(total > 0, inside / np.where(total > 0, total, 1.0), np.nan))


def delta_density(saliency: np.ndarray, masks: np.ndarray) -> float | np.ndarray:
    """Mean max-normalised saliency on the object minus on the background (NaN when the mask
    is empty or covers the whole image)."""
    sal, msk = _check_pair(saliency, masks)
    norm = _normalise(sal)
    n_in = msk.sum(axis=(-2, -1)).astype(float)
    n_out = (~msk).sum(axis=(-2, -1)).astype(float)
    s_in = (norm * msk).sum(axis=(-2, -1))
    s_out = (norm * ~msk).sum(axis=(-2, -1))
    ok = (n_in > 0) & (n_out > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        values = s_in / np.maximum(n_in, 1.0) - s_out / np.maximum(n_out, 1.0)
    return _reduce(np.where(ok, values, np.nan))


def saliency_average_precision(saliency: np.ndarray, masks: np.ndarray) -> float | np.ndarray:
    """Average precision of the map's values ranking the mask's pixels (NaN for an empty
    mask); one value for an (H, W) pair, a float[N] array for (N, H, W) batches.

    The pixels are ranked by saliency, highest first; at each distinct saliency value ``s``
    (pixels of equal saliency enter together) precision P(s) = |mask ∩ {sal >= s}| /
    |{sal >= s}| and recall R(s) = |mask ∩ {sal >= s}| / |mask|, and
    AP = sum over the distinct values, highest first, of (R(s) - R(previous s)) * P(s),
    the non-interpolated average precision (the definition of scikit-learn's
    ``average_precision_score(mask.flatten(), saliency.flatten())``, which the RIVAL10
    authors use). Equivalently: the mean, over the mask's pixels, of the precision at the
    lowest saliency of its block of ties."""
    sal, msk = _check_pair(saliency, masks)
    lead = sal.shape[:-2]
    flat = sal.reshape(*lead, -1)
    order = np.argsort(-flat, axis=-1, kind="stable")
    ranked = np.take_along_axis(flat, order, axis=-1)
    hits = np.take_along_axis(msk.reshape(*lead, -1), order, axis=-1)
    found = np.cumsum(hits, axis=-1)
    size = ranked.shape[-1]
    precision = found / np.arange(1, size + 1)
    # the last position of each block of equal saliency; a pixel's precision is its block's
    last = np.ones(ranked.shape, dtype=bool)
    last[..., :-1] = ranked[..., :-1] != ranked[..., 1:]
    ends = np.where(last, np.arange(size), size - 1)
    ends = np.flip(np.minimum.accumulate(np.flip(ends, axis=-1), axis=-1), axis=-1)
    block_precision = np.take_along_axis(precision, ends, axis=-1)
    positives = found[..., -1].astype(float)
    total = np.sum(block_precision * hits, axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return _reduce(np.where(positives > 0, total / np.maximum(positives, 1.0), np.nan))


def _check_thresholds(thresholds: Sequence[float]) -> np.ndarray:
    raw = np.asarray(thresholds)
    if raw.dtype.kind not in "iuf" or raw.ndim != 1 or raw.size == 0:
        raise ValueError(
            f"`thresholds` must be a non-empty sequence of numbers in (0, 1), got {thresholds!r}."
        )
    ts = raw.astype(np.float64)
    if not np.all((ts > 0) & (ts < 1)):
        raise ValueError(
            f"`thresholds` must lie in (0, 1) (fractions of the total saliency), got "
            f"{thresholds!r}."
        )
    return ts


def saliency_mask_coverage(
    saliency: np.ndarray,
    masks: np.ndarray,
    thresholds: Sequence[float] = COVERAGE_THRESHOLDS,
) -> np.ndarray:
    """Share of the mask covered by the most salient pixels holding a fraction ``t`` of the
    saliency, for each ``t`` of ``thresholds``: a float[T] array for an (H, W) pair, a
    float[N, T] array for (N, H, W) batches; NaN where the mask is empty.

    Per map (the RIVAL10 authors' ``compute_saliency_thresholds`` and
    ``compute_mask_coverage``): sort the saliency values ascending and add them up in that
    order; the cut for ``t`` is the value at which the running sum first exceeds ``t`` times
    the total; the pixels with saliency >= the cut (all > 0) form the binary map, and the
    coverage is |binary map ∩ mask| / |mask|. An all-zero map has cut 1 for every ``t``:
    nothing is selected, coverage 0. Sums are taken in float64. The authors' "Saliency
    Recall" is the coverage at t = 0.25."""
    sal, msk = _check_pair(saliency, masks)
    ts = _check_thresholds(thresholds)
    lead = sal.shape[:-2]
    ordered = np.sort(sal.reshape(*lead, -1), axis=-1)
    running = np.cumsum(ordered, axis=-1)
    total = running[..., -1:]  # (..., 1)
    milestones = total * ts  # (..., T)
    first = np.sum(running[..., None, :] <= milestones[..., :, None], axis=-1)
    first = np.minimum(first, ordered.shape[-1] - 1)  # t < 1: only rounding could overrun
    cuts = np.where(total > 0, np.take_along_axis(ordered, first, axis=-1), 1.0)
    pixels = sal[..., None, :, :]
    hot = pixels >= cuts[..., :, None, None]  # (..., T, H, W); a cut is > 0: no zeros
    covered = np.sum(hot & msk[..., None, :, :], axis=(-2, -1)).astype(float)
    area = np.sum(msk, axis=(-2, -1)).astype(float)[..., None]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(area > 0, covered / np.maximum(area, 1.0), np.nan)


def saliency_alignment(
    saliency: np.ndarray, masks: np.ndarray, threshold: float = 0.5
) -> dict[str, float]:
    """Batch means of the three scores over (N, H, W) maps and masks, skipping undefined
    (NaN) images; ``num_undefined_<score>`` counts the skipped ones."""
    sal, msk = _check_pair(saliency, masks)
    if sal.ndim != 3:
        raise ValueError(f"`saliency` must be a (N, H, W) batch, got shape {sal.shape}.")
    scores = {
        "saliency_iou": saliency_iou(sal, msk, threshold),
        "saliency_fraction_inside": saliency_fraction_inside(sal, msk),
        "delta_density": delta_density(sal, msk),
    }
    out: dict[str, float] = {}
    for name, values in scores.items():
        valid = ~np.isnan(values)
        out[name] = float(values[valid].mean()) if valid.any() else float("nan")
        out[f"num_undefined_{name}"] = int((~valid).sum())
    return out


def bootstrap_mean_interval(
    values: np.ndarray,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the mean of per-image ``values`` (NaNs, the undefined
    images, are left out first); None when no value is defined, or when resampling cannot
    vary the values (fewer than 2, or all equal: :func:`resampling_gap`). Seeded: the seed
    and the number of resamples belong in the output."""
    try:
        vals = np.asarray(values, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        raise ValueError("`values` must hold numbers.") from None
    if np.any(np.isinf(vals)):
        raise ValueError("`values` holds infinite values.")
    (interval,) = bootstrap_intervals(
        {"values": vals[~np.isnan(vals)]},
        n_resamples=n_resamples,
        seed=seed,
        confidence=confidence,
    ).values()
    return interval.bounds


def class_mean_gap(
    values: Sequence[float] | np.ndarray,
    groups: Sequence[int] | np.ndarray,
    num_classes: int,
    names: Sequence[str] | None = None,
) -> str | None:
    """Why :func:`class_mean_interval` withholds its interval (a class of the images that
    enter it has one image or equal values: :func:`resampling_gap`), or None."""
    vals, grp = class_inputs(values, groups, num_classes)
    keep = ~np.isnan(vals) & (grp >= 0)
    return resampling_gap(vals[keep], groups=grp[keep], names=names) if keep.any() else None


def class_mean_interval(
    values: Sequence[float] | np.ndarray,
    groups: Sequence[int] | np.ndarray,
    num_classes: int,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of :func:`class_mean`'s mean over classes; None when it
    is undefined. The images that enter it (a defined value and a class) are resampled with
    replacement within their class and the statistic recomputed on each resample -- per
    class the mean of its resampled values, then the mean over the classes -- by the
    package's bootstrap with the classes as groups
    (:func:`hf_bgbench.metrics.intervals.bootstrap_intervals`, seeded), so each class
    keeps its number of images and its weight 1 / (number of classes). None as well when a
    class has one image or all of its values equal (:func:`resampling_gap`): resampling
    within it cannot show its uncertainty."""
    vals, grp = class_inputs(values, groups, num_classes)
    keep = ~np.isnan(vals) & (grp >= 0)
    (interval,) = bootstrap_intervals(
        {"values": vals[keep]},
        groups=grp[keep],
        n_resamples=n_resamples,
        seed=seed,
        confidence=confidence,
    ).values()
    return interval.bounds
