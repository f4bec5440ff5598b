"""Relative foreground sensitivity from the RIVAL10 noise analysis (Moayeri et al., 2022;
SPEC §2).

Gaussian noise is added either to the object (``fg`` noise) or to everything else (``bg``
noise). With a_fg, a_bg the accuracies under the two and ā = (a_fg + a_bg) / 2::

    RFS = (a_bg - a_fg) / (2 * min(ā, 1 - ā))        in [-1, 1]

Positive RFS: corrupting the foreground hurts more than corrupting the background, i.e. the
model relies on the object. The denominator normalises by the largest gap the general noise
robustness ā allows (|a_bg - a_fg| <= 2 ā and <= 2 (1 - ā)), so RFS compares models of very
different robustness. iRFS is the same formula per image with the probabilities of the true
class (averaged over noise trials) in place of accuracies.

**The value at min(ā, 1 - ā) = 0 is defined as 0.** That happens only when a_fg = a_bg = 0
or a_fg = a_bg = 1: the noise left the model always right (or always wrong) in both regions,
so neither region can be shown to matter more. The numerator is then 0 as well, every RFS in
the neighbourhood along a_fg = a_bg is 0, and 0 keeps RFS antisymmetric under swapping fg
and bg. Returning NaN instead would silently drop such classes / images from averages.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

from hf_bgbench.metrics._checks import (
    ArrayLike,
    as_float_array,
    as_int_array,
    labels_in_range,
    same_length,
)
from hf_bgbench.metrics.classification import class_mean
from hf_bgbench.metrics.intervals import bootstrap_intervals, function_of_means, mean_of


def _rfs(a_fg: np.ndarray, a_bg: np.ndarray) -> np.ndarray:
    """Vectorised RFS on validated values in [0, 1]; 0 where min(ā, 1 - ā) = 0."""
    mean = (a_fg + a_bg) / 2.0
    denom = 2.0 * np.minimum(mean, 1.0 - mean)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(denom > 0, (a_bg - a_fg) / np.where(denom > 0, denom, 1.0), 0.0)
    return np.clip(out, -1.0, 1.0)  # rounding only; the bound holds exactly


def relative_foreground_sensitivity(accuracy_fg_noise: float, accuracy_bg_noise: float) -> float:
    """RFS from the accuracy under foreground noise and under background noise (both in
    [0, 1]); 0 when both are 0 or both are 1 (see the module docstring for why)."""
    a_fg = as_float_array([accuracy_fg_noise], "accuracy_fg_noise", low=0.0, high=1.0)
    a_bg = as_float_array([accuracy_bg_noise], "accuracy_bg_noise", low=0.0, high=1.0)
    return float(_rfs(a_fg, a_bg)[0])


def instance_rfs(
    probabilities_fg_noise: Sequence[float] | np.ndarray,
    probabilities_bg_noise: Sequence[float] | np.ndarray,
    instance_ids: Sequence[Hashable] | None = None,
) -> np.ndarray:
    """iRFS per image from the true-class probability under fg and bg noise.

    Without ``instance_ids`` each position is one image (probabilities already averaged over
    trials). With ``instance_ids`` (one per row), rows sharing an id are trials of one image:
    their probabilities are averaged first, and the result has one entry per distinct id in
    order of first appearance.
    """
    p_fg = as_float_array(probabilities_fg_noise, "probabilities_fg_noise", low=0.0, high=1.0)
    p_bg = as_float_array(probabilities_bg_noise, "probabilities_bg_noise", low=0.0, high=1.0)
    same_length(probabilities_fg_noise=p_fg, probabilities_bg_noise=p_bg)
    if instance_ids is not None:
        inverse = _group_index(instance_ids, "instance_ids", len(p_fg))
        p_fg, p_bg = _group_mean(p_fg, inverse), _group_mean(p_bg, inverse)
    return _rfs(p_fg, p_bg)


irfs = instance_rfs


def _group_index(keys: Sequence[Hashable], name: str, n: int) -> np.ndarray:
    """int[n]: the group number of each row, groups numbered by first appearance."""
    keys = list(keys)
    if len(keys) != n:
        raise ValueError(f"`{name}` has {len(keys)} entries but the other inputs have {n}.")
    first: dict[Hashable, int] = {}
    return np.array([first.setdefault(k, len(first)) for k in keys], dtype=np.int64)


def _group_mean(values: np.ndarray, inverse: np.ndarray) -> np.ndarray:
    counts = np.bincount(inverse)
    return np.bincount(inverse, weights=values) / counts


def _accuracies(pred_fg: np.ndarray, pred_bg: np.ndarray, ref: np.ndarray) -> tuple[float, float]:
    return float(np.mean(pred_fg == ref)), float(np.mean(pred_bg == ref))


def rfs_per_class(
    predictions_fg_noise: ArrayLike,
    predictions_bg_noise: ArrayLike,
    references: ArrayLike,
    num_classes: int | None = None,
) -> dict[int, float]:
    """class -> RFS from that class's fg- and bg-noise accuracies (classes present only).

    Published: ships and birds have low foreground sensitivity. Labels as in
    :func:`rfs_report`.
    """
    pred_fg, pred_bg, ref = _check_predictions(
        predictions_fg_noise, predictions_bg_noise, references, num_classes
    )
    return {
        int(c): relative_foreground_sensitivity(*_accuracies(pred_fg[m], pred_bg[m], ref[m]))
        for c in np.unique(ref)
        for m in [ref == c]
    }


def rfs_per_noise_level(
    predictions_fg_noise: ArrayLike,
    predictions_bg_noise: ArrayLike,
    references: ArrayLike,
    noise_levels: Sequence[float] | np.ndarray,
    num_classes: int | None = None,
) -> dict[float, float]:
    """noise level (σ or ε) -> RFS over the rows of that level (published: transformers'
    RFS rises with σ). Labels as in :func:`rfs_report`."""
    pred_fg, pred_bg, ref = _check_predictions(
        predictions_fg_noise, predictions_bg_noise, references, num_classes
    )
    lvl = as_float_array(noise_levels, "noise_levels", low=0.0)
    same_length(predictions_fg_noise=pred_fg, noise_levels=lvl)
    return {
        float(s): relative_foreground_sensitivity(*_accuracies(pred_fg[m], pred_bg[m], ref[m]))
        for s in np.unique(lvl)
        for m in [lvl == s]
    }


def _check_predictions(
    predictions_fg_noise: ArrayLike,
    predictions_bg_noise: ArrayLike,
    references: ArrayLike,
    num_classes: int | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    pred_fg = as_int_array(predictions_fg_noise, "predictions_fg_noise")
    pred_bg = as_int_array(predictions_bg_noise, "predictions_bg_noise")
    ref = as_int_array(references, "references")
    same_length(predictions_fg_noise=pred_fg, predictions_bg_noise=pred_bg, references=ref)
    labels_in_range(ref, "references", num_classes, allow_unmapped=False)
    labels_in_range(pred_fg, "predictions_fg_noise", num_classes, allow_unmapped=True)
    labels_in_range(pred_bg, "predictions_bg_noise", num_classes, allow_unmapped=True)
    return pred_fg, pred_bg, ref


def rfs_report(
    predictions_fg_noise: ArrayLike,
    predictions_bg_noise: ArrayLike,
    references: ArrayLike,
    *,
    probabilities_fg_noise: Sequence[float] | np.ndarray | None = None,
    probabilities_bg_noise: Sequence[float] | np.ndarray | None = None,
    noise_levels: Sequence[float] | np.ndarray | None = None,
    instance_ids: Sequence[Hashable] | None = None,
    num_classes: int | None = None,
) -> dict[str, object]:
    """Everything the ``rfs`` metric module reports.

    One row per (image, trial[, noise level]): the predicted class under fg noise and under
    bg noise and the true class. Always: ``rfs`` (from the accuracies pooled over all rows),
    ``accuracy_fg_noise``, ``accuracy_bg_noise``, ``rfs_per_class``.

    With ``noise_levels``: ``rfs_per_noise_level`` and ``rfs_mean_over_noise_levels`` (the
    unweighted mean of the per-level values, which is what a curve over σ summarises).

    With both probability columns (true-class probabilities): ``irfs_mean`` and
    ``irfs_per_class`` (mean iRFS of the images of each class), and with ``noise_levels``
    also ``irfs_mean_per_noise_level``. Images are the rows, or, with ``instance_ids``, the
    groups of rows sharing an id (within one noise level), whose probabilities are averaged
    over trials before iRFS is taken.

    References lie in [0, ``num_classes``) (RIVAL10: 10; None = no upper bound); predictions
    too, or -1 for a model class outside the benchmark (zero-shot scoring of a 1000-class
    model through the 20 RIVAL10 source classes).
    """
    pred_fg, pred_bg, ref = _check_predictions(
        predictions_fg_noise, predictions_bg_noise, references, num_classes
    )
    a_fg, a_bg = _accuracies(pred_fg, pred_bg, ref)
    out: dict[str, object] = {
        "rfs": relative_foreground_sensitivity(a_fg, a_bg),
        "accuracy_fg_noise": a_fg,
        "accuracy_bg_noise": a_bg,
        "rfs_per_class": rfs_per_class(pred_fg, pred_bg, ref),
    }
    lvl = None
    if noise_levels is not None:
        lvl = as_float_array(noise_levels, "noise_levels", low=0.0)
        per_level = rfs_per_noise_level(pred_fg, pred_bg, ref, lvl)
        out["rfs_per_noise_level"] = per_level
        out["rfs_mean_over_noise_levels"] = float(np.mean(list(per_level.values())))
    if (probabilities_fg_noise is None) != (probabilities_bg_noise is None):
        missing = (
            "probabilities_fg_noise" if probabilities_fg_noise is None else "probabilities_bg_noise"
        )
        raise ValueError(f"`{missing}` is missing; iRFS needs both probability columns.")
    if probabilities_fg_noise is None or probabilities_bg_noise is None:
        if instance_ids is not None:
            raise ValueError("`instance_ids` only apply to iRFS; pass the probability columns.")
        return out
    p_fg = as_float_array(probabilities_fg_noise, "probabilities_fg_noise", low=0.0, high=1.0)
    p_bg = as_float_array(probabilities_bg_noise, "probabilities_bg_noise", low=0.0, high=1.0)
    same_length(predictions_fg_noise=pred_fg, probabilities_fg_noise=p_fg)
    same_length(predictions_fg_noise=pred_fg, probabilities_bg_noise=p_bg)
    # One image = one row, or one (id, noise level) group of rows.
    if instance_ids is None:
        inverse = np.arange(len(ref))
    else:
        ids = list(instance_ids)
        if len(ids) != len(ref):
            raise ValueError(
                f"`instance_ids` has {len(ids)} entries but the other inputs have {len(ref)}."
            )
        keys = ids if lvl is None else list(zip(ids, lvl.tolist(), strict=True))
        inverse = _group_index(keys, "instance_ids", len(ref))
        first_row = np.unique(inverse, return_index=True)[1]
        if not np.array_equal(ref, ref[first_row][inverse]):
            raise ValueError("`references` differ between rows of one instance id.")
    per_image = _rfs(_group_mean(p_fg, inverse), _group_mean(p_bg, inverse))
    first_row = np.unique(inverse, return_index=True)[1]
    image_labels = ref[first_row]
    out["irfs_mean"] = float(per_image.mean())
    out["irfs_per_class"] = {
        int(c): float(per_image[image_labels == c].mean()) for c in np.unique(image_labels)
    }
    if lvl is not None:
        image_levels = lvl[first_row]
        out["irfs_mean_per_noise_level"] = {
            float(s): float(per_image[image_levels == s].mean()) for s in np.unique(image_levels)
        }
    return out


def rfs_bootstrap_intervals(
    accuracy_fg_noise_per_image: Sequence[float] | np.ndarray,
    accuracy_bg_noise_per_image: Sequence[float] | np.ndarray,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> dict[str, tuple[float, float] | None]:
    """Percentile intervals of a_fg, a_bg and RFS, resampling *images* with replacement.

    Each input holds, per image, the share of its noisy copies (all trials, and all noise
    levels pooled over) classified correctly under fg / bg noise; every image must have the
    same number of copies, so the mean over images is the pooled accuracy. Images are the
    sampling unit: the trials of one image are not independent draws, so they are resampled
    together (a Wilson interval over images x trials would be too narrow). Seeded; returns
    ``{"accuracy_fg_noise": (lo, hi), "accuracy_bg_noise": (lo, hi), "rfs": (lo, hi)}``, an
    interval None where resampling cannot vary its inputs
    (:func:`~hf_bgbench.metrics.intervals.resampling_gap`).
    """
    a_fg = as_float_array(
        accuracy_fg_noise_per_image, "accuracy_fg_noise_per_image", low=0.0, high=1.0
    )
    a_bg = as_float_array(
        accuracy_bg_noise_per_image, "accuracy_bg_noise_per_image", low=0.0, high=1.0
    )
    same_length(accuracy_fg_noise_per_image=a_fg, accuracy_bg_noise_per_image=a_bg)
    return _rfs_intervals(a_fg, a_bg, None, n_resamples, seed, confidence)


# RFS's three numbers from the per-image accuracies under fg and bg noise
RFS_STATISTICS = {
    "accuracy_fg_noise": mean_of("fg"),
    "accuracy_bg_noise": mean_of("bg"),
    "rfs": function_of_means(("fg", "bg"), _rfs),  # needs both to vary
}


def _rfs_intervals(
    a_fg: np.ndarray,
    a_bg: np.ndarray,
    groups: np.ndarray | None,
    n_resamples: int,
    seed: int,
    confidence: float,
) -> dict[str, tuple[float, float] | None]:
    """The three intervals of one bootstrap over images (stratified by ``groups`` when
    given); each None where its per-image inputs cannot vary under resampling."""
    intervals = bootstrap_intervals(
        {"fg": a_fg, "bg": a_bg},
        RFS_STATISTICS,
        groups=groups,
        n_resamples=n_resamples,
        seed=seed,
        confidence=confidence,
    )
    return {key: interval.bounds for key, interval in intervals.items()}


def rfs_class_mean(
    accuracy_fg_noise_per_image: ArrayLike,
    accuracy_bg_noise_per_image: ArrayLike,
    labels: ArrayLike,
    num_classes: int,
) -> dict[str, float]:
    """a_fg, a_bg as class means (:func:`class_mean`) of the per-image accuracies (each
    image's share of correct noisy copies, over its trials and the levels taken), and the
    RFS *of those two accuracies* -- the authors' RFS of a noise level (Fig. 4) and, with
    every level's copies, their "RFS averaged over noise levels" (Fig. 6)."""
    a_fg = class_mean(accuracy_fg_noise_per_image, labels, num_classes)[1]
    a_bg = class_mean(accuracy_bg_noise_per_image, labels, num_classes)[1]
    return {
        "accuracy_fg_noise": a_fg,
        "accuracy_bg_noise": a_bg,
        "rfs": relative_foreground_sensitivity(a_fg, a_bg),
    }


def rfs_class_mean_intervals(
    accuracy_fg_noise_per_image: ArrayLike,
    accuracy_bg_noise_per_image: ArrayLike,
    labels: ArrayLike,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> dict[str, tuple[float, float] | None]:
    """Percentile intervals of :func:`rfs_class_mean`'s three numbers: a stratified
    bootstrap over images (each class resampled within itself, the trials and levels of an
    image together; :func:`hf_bgbench.metrics.intervals.bootstrap_intervals` with the
    labels as groups). An interval is None where a class has one image or cannot vary
    (:func:`~hf_bgbench.metrics.intervals.resampling_gap`)."""
    a_fg = as_float_array(
        accuracy_fg_noise_per_image, "accuracy_fg_noise_per_image", low=0.0, high=1.0
    )
    a_bg = as_float_array(
        accuracy_bg_noise_per_image, "accuracy_bg_noise_per_image", low=0.0, high=1.0
    )
    labs = as_int_array(labels, "labels")
    return _rfs_intervals(a_fg, a_bg, labs, n_resamples, seed, confidence)
