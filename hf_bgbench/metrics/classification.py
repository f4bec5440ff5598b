"""Accuracy and per-class accuracy over benchmark-space predictions.

A prediction of -1 means the model chose a class outside the benchmark (e.g. one of the
630 ImageNet classes outside IN-9); it is always wrong.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hf_bgbench.metrics._checks import (
    ArrayLike,
    as_int_array,
    check_num_classes,
    labels_in_range,
    same_length,
)


def accuracy(
    predictions: ArrayLike, references: ArrayLike, num_classes: int | None = None
) -> float:
    """Fraction of ``predictions`` equal to ``references``.

    References lie in [0, ``num_classes``), predictions also may be -1; ``num_classes=None``
    leaves the upper bound open.
    """
    pred = as_int_array(predictions, "predictions")
    ref = as_int_array(references, "references")
    same_length(predictions=pred, references=ref)
    labels_in_range(ref, "references", num_classes, allow_unmapped=False)
    labels_in_range(pred, "predictions", num_classes, allow_unmapped=True)
    return float(np.mean(pred == ref))


def per_class_accuracy(
    predictions: ArrayLike, references: ArrayLike, num_classes: int
) -> np.ndarray:
    """float[num_classes]: accuracy on the examples of each class (NaN for an absent class)."""
    if num_classes is None:
        raise ValueError("`num_classes` is required: one accuracy per class is returned.")
    pred = as_int_array(predictions, "predictions")
    ref = as_int_array(references, "references")
    same_length(predictions=pred, references=ref)
    labels_in_range(ref, "references", num_classes, allow_unmapped=False)
    labels_in_range(pred, "predictions", num_classes, allow_unmapped=True)
    correct = np.bincount(ref, weights=(pred == ref).astype(float), minlength=num_classes)
    total = np.bincount(ref, minlength=num_classes).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, correct / np.maximum(total, 1), np.nan)


def class_inputs(
    values: Sequence[float] | np.ndarray,
    groups: Sequence[int] | np.ndarray,
    num_classes: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Validated (values, groups): float[N] (NaN allowed), int[N] in [-1, num_classes)."""
    if num_classes is None:
        raise ValueError("`num_classes` must be a positive int, got None.")
    check_num_classes(num_classes)
    raw = np.asarray(values)
    if raw.dtype.kind not in "iuf":
        raise ValueError(f"`values` must hold numbers (NaN for undefined), got dtype {raw.dtype}.")
    vals = raw.astype(np.float64)
    if vals.ndim != 1:
        raise ValueError(f"`values` must be one-dimensional, got shape {vals.shape}.")
    if np.any(np.isinf(vals)):
        raise ValueError("`values` holds infinite values.")
    grp = as_int_array(groups, "groups")
    labels_in_range(grp, "groups", num_classes, allow_unmapped=True)
    same_length(values=vals, groups=grp)
    return vals, grp


def class_mean(
    values: Sequence[float] | np.ndarray,
    groups: Sequence[int] | np.ndarray,
    num_classes: int,
) -> tuple[np.ndarray, float]:
    """Moayeri et al. (2022)'s aggregation of per-image values: (the mean of each class,
    the mean over classes of those means) -- per class, then over the classes, so every
    class weighs the same whatever its number of images (their ``noise_analysis_plots.py``
    and ``saliency_alignment_plots.py``).

    ``values[i]`` is image ``i``'s score (NaN: undefined), ``groups[i]`` its class -- the
    authors group by the model's *predicted* class -- in ``[0, num_classes)``, or -1 for an
    image in no class (a prediction outside the benchmark's classes), which is left out.
    The first element is a float[num_classes] array: per class, the mean of its defined
    values (``np.nanmean``), NaN for a class with none (never predicted, or only undefined
    values). The second is the unweighted mean of the defined class means -- classes with
    no defined value are left out rather than making it NaN -- and NaN when no class has
    one; the number of classes that entered it is ``(~np.isnan(first)).sum()``."""
    vals, grp = class_inputs(values, groups, num_classes)
    keep = ~np.isnan(vals) & (grp >= 0)
    sums = np.bincount(grp[keep], weights=vals[keep], minlength=num_classes)
    counts = np.bincount(grp[keep], minlength=num_classes).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        per_class = np.where(counts > 0, sums / np.maximum(counts, 1.0), np.nan)
    defined = per_class[~np.isnan(per_class)]
    return per_class, float(defined.mean()) if defined.size else float("nan")
