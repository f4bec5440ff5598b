"""Accuracy and per-class accuracy over benchmark-space predictions.

A prediction of -1 means the model chose a class outside the benchmark (e.g. one of the
630 ImageNet classes outside IN-9); it is always wrong.
"""

from __future__ import annotations

import numpy as np

from hf_bgbench.metrics._checks import (
    ArrayLike,
    as_float_array,
    as_int_array,
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


def class_mean(values: ArrayLike, labels: ArrayLike) -> float:
    """The mean over the classes present in ``labels`` of each class's mean of ``values``
    (one value per image): how Moayeri et al. (2022) average accuracies -- per class, then
    over the classes (their ``noise_analysis_plots.py``: ``np.average`` of the per-class
    accuracies), so every class weighs the same whatever its number of images."""
    vals = as_float_array(values, "values")
    labs = as_int_array(labels, "labels")
    same_length(values=vals, labels=labs)
    if vals.size == 0:
        raise ValueError("`values` is empty: a class mean needs at least one image.")
    return float(np.mean([vals[labs == c].mean() for c in np.unique(labs)]))
