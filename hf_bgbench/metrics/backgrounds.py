"""Background-reliance scores of ImageNet-9 (Xiao et al., 2020; SPEC §1).

All functions are pure: they take benchmark-space predictions and labels (and variant
names) and return numbers; they never see a model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from hf_bgbench.metrics._checks import ArrayLike, as_int_array, labels_in_range, same_length
from hf_bgbench.metrics.classification import accuracy

# gap name -> (minuend variant, subtrahend variant)
GAPS = {
    "bg_gap": ("mixed_same", "mixed_rand"),
    "same_minus_next": ("mixed_same", "mixed_next"),
    "original_minus_only_fg": ("original", "only_fg"),
}

CATEGORIES = ("bg_required", "bg_fg_required", "bg_irrelevant", "bg_fools", "other")


def bg_gap(accuracy_mixed_same: float, accuracy_mixed_rand: float) -> float:
    """BG-GAP = acc(mixed_same) - acc(mixed_rand)."""
    return float(accuracy_mixed_same) - float(accuracy_mixed_rand)


def background_gaps(accuracies: Mapping[str, float]) -> dict[str, float]:
    """Every gap of :data:`GAPS` whose two variants are in ``accuracies`` (variant -> accuracy)."""
    return {
        name: float(accuracies[a]) - float(accuracies[b])
        for name, (a, b) in GAPS.items()
        if a in accuracies and b in accuracies
    }


def accuracy_by_variant(
    predictions: ArrayLike, references: ArrayLike, variants: Sequence[str]
) -> dict[str, float]:
    """variant -> accuracy, for rows tagged with a variant name each."""
    pred = as_int_array(predictions, "predictions")
    ref = as_int_array(references, "references")
    var = np.asarray(variants, dtype=object)
    same_length(predictions=pred, references=ref, variants=var)
    return {str(v): accuracy(pred[var == v], ref[var == v]) for v in sorted(set(var.tolist()))}


def prediction_categories(
    full: ArrayLike, foreground: ArrayLike, background: ArrayLike, references: ArrayLike
) -> dict[str, float]:
    """Fractions of images in the paper's Table 3 buckets (they sum to 1).

    ``full`` are predictions on ``original``, ``foreground`` on ``mixed_rand`` (the
    foreground with an unrelated background) and ``background`` on ``only_bg_t``,
    aligned by image. Buckets:

    - ``bg_required``: full correct, foreground wrong, background correct;
    - ``bg_fg_required``: full correct, foreground wrong, background wrong;
    - ``bg_irrelevant``: full and foreground agree on correctness;
    - ``bg_fools``: foreground correct, full wrong, and background predicts the same
      wrong class as full (an unmapped prediction, -1, counts as one "outside" class);
    - ``other``: foreground correct, full wrong, background predicts something else.
    """
    f = as_int_array(full, "full")
    g = as_int_array(foreground, "foreground")
    b = as_int_array(background, "background")
    y = as_int_array(references, "references")
    same_length(full=f, foreground=g, background=b, references=y)
    labels_in_range(y, "references", None, allow_unmapped=False)
    full_ok, fg_ok, bg_ok = f == y, g == y, b == y
    masks = {
        "bg_required": full_ok & ~fg_ok & bg_ok,
        "bg_fg_required": full_ok & ~fg_ok & ~bg_ok,
        "bg_irrelevant": full_ok == fg_ok,
        "bg_fools": ~full_ok & fg_ok & (b == f),
        "other": ~full_ok & fg_ok & (b != f),
    }
    return {name: float(np.mean(masks[name])) for name in CATEGORIES}
