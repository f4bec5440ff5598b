"""Saliency alignment with the object mask (RIVAL10; Moayeri et al., 2022; SPEC §2).

A saliency map (e.g. GradCAM on the predicted or true class, non-negative, any scale) is
compared with the binary object mask of the same image and size. Three scores:

- ``saliency_iou``: IoU between the mask and the map after max-normalising it to [0, 1] and
  binarising at 0.5 (``>= threshold``); in [0, 1].
- ``saliency_fraction_inside``: share of the total saliency that falls on the object; in
  [0, 1].
- ``delta_density``: mean max-normalised saliency on the object minus mean on the
  background; in [-1, 1]. Low or negative values flag maps that sit on the background;
  the paper found this score the best at surfacing spurious background features (water
  for ships, branches for birds).

Undefined cases give NaN instead of raising, so that one degenerate image does not stop a
batch: the saliency fraction is NaN for an all-zero map (there is no saliency to locate),
delta density is NaN when the mask is empty or covers the whole image, and IoU is NaN only
when both the mask and the binarised map are empty (an all-zero map against a non-empty mask
has IoU 0). Batch means (:func:`saliency_alignment`) skip NaNs and report how many were
skipped. Masks are binarised with ``> 0``.
"""

from __future__ import annotations

import numpy as np


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
    images, are left out first); None when no value is defined. Seeded: the seed and the
    number of resamples belong in the output."""
    try:
        vals = np.asarray(values, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        raise ValueError("`values` must hold numbers.") from None
    if np.any(np.isinf(vals)):
        raise ValueError("`values` holds infinite values.")
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int | np.integer):
        raise ValueError(f"`n_resamples` must be an int, got {n_resamples!r}.")
    if n_resamples < 1:
        raise ValueError(f"`n_resamples` must be at least 1, got {n_resamples}.")
    if not 0 < confidence < 1:
        raise ValueError(f"`confidence` must be in (0, 1), got {confidence}.")
    vals = vals[~np.isnan(vals)]
    if vals.size == 0:
        return None
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples)
    chunk = max(1, 2_000_000 // vals.size)  # bounded memory for large runs
    for start in range(0, n_resamples, chunk):
        stop = min(n_resamples, start + chunk)
        idx = rng.integers(0, vals.size, size=(stop - start, vals.size))
        means[start:stop] = vals[idx].mean(axis=1)
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(means, [alpha, 1 - alpha])
    return float(lo), float(hi)
