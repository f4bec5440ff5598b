"""Dropped accuracy under ImageNet-E attribute edits (Li et al., 2023; SPEC §3).

``DA(edit) = acc(original) - acc(edit)``, as a fraction (the paper prints percentage points:
λ = 20 backgrounds drop top-1 by 9.23 points on average, object pixel rate 0.05 by 18.34;
ResNet-50 averages 15.72 over the edits, Swin-S 10.20). Positive = the edit hurts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from hf_bgbench.metrics._checks import (
    ArrayLike,
    as_float_array,
    as_int_array,
    as_name_array,
    known_names,
    labels_in_range,
    same_length,
)
from hf_bgbench.metrics.classification import accuracy


def dropped_accuracy(
    predictions: ArrayLike,
    references: ArrayLike,
    edits: Sequence[str],
    *,
    reference_edit: str,
    known_edits: Sequence[str] | None,
    num_classes: int | None = None,
) -> dict[str, float]:
    """edit -> DA = acc(``reference_edit``) - acc(edit), for every edit present but the
    reference.

    Rows are long format: one (prediction, reference, edit name) per image and edit; the
    ``reference_edit`` rows (the unedited images, ImageNet-E's ``original``) are required.
    Edit names are checked against ``known_edits`` (the benchmark's edit names, which the
    caller takes from its spec) so a typo fails loudly; pass ``None`` for custom edits, e.g.
    the OOD-texture backgrounds. Every edit holds the same images as the reference, so it
    has as many rows (a different count is an error: the accuracies would be over different
    images).

    Predictions and references are class indices in [0, ``num_classes``) (ImageNet-E:
    ImageNet-1k, 1000; None = no upper bound). There is no "outside the benchmark" -1 here:
    ImageNet-E scores the model's own ImageNet class.
    """
    pred = as_int_array(predictions, "predictions")
    ref = as_int_array(references, "references")
    names = as_name_array(edits, "edits")
    same_length(predictions=pred, references=ref, edits=names)
    labels_in_range(ref, "references", num_classes, allow_unmapped=False)
    labels_in_range(pred, "predictions", num_classes, allow_unmapped=False)
    if not isinstance(reference_edit, str):
        raise ValueError(f"`reference_edit` must be an edit name, got {reference_edit!r}.")
    if isinstance(known_edits, str):
        raise ValueError("`known_edits` must be a list of edit names (or None), not one string.")
    if known_edits is not None:
        known_names(names, "edits", list(known_edits), "edit")
    if not np.any(names == reference_edit):
        raise ValueError(
            f"`edits` has no {reference_edit!r} rows; dropped accuracy is measured against them."
        )
    if np.all(names == reference_edit):
        raise ValueError(f"`edits` has only {reference_edit!r} rows; nothing was edited.")
    base_rows = int(np.sum(names == reference_edit))
    for e in sorted(set(names.tolist()) - {reference_edit}):
        rows = int(np.sum(names == e))
        if rows != base_rows:
            raise ValueError(
                f"`edits`: dropped accuracy compares the same images unedited and edited, but "
                f"there are {base_rows} {reference_edit!r} row(s) and {rows} {e!r} row(s); give "
                f"one row per image for every edit (leave an image an edit lacks out of "
                f"{reference_edit!r} too)."
            )
    base = accuracy(pred[names == reference_edit], ref[names == reference_edit])
    return {
        str(e): base - accuracy(pred[names == e], ref[names == e])
        for e in sorted(set(names.tolist()))
        if e != reference_edit
    }


def mean_dropped_accuracy(dropped: Mapping[str, float]) -> float:
    """Unweighted mean of the per-edit DAs (the paper's per-model "average DA")."""
    if not isinstance(dropped, Mapping):
        raise ValueError(f"`dropped` must map edit names to dropped accuracies, got {dropped!r}.")
    if not dropped:
        raise ValueError("`dropped` is empty; pass rows of at least one edit besides original.")
    values = as_float_array(list(dropped.values()), "dropped", low=-1.0, high=1.0)
    return float(np.mean(values))


def dropped_accuracy_report(
    predictions: ArrayLike,
    references: ArrayLike,
    edits: Sequence[str],
    *,
    reference_edit: str,
    known_edits: Sequence[str] | None,
    num_classes: int | None = None,
) -> dict[str, object]:
    """Everything the ``dropped_accuracy`` metric module reports: ``accuracy`` (edit ->
    accuracy, reference included), ``dropped_accuracy`` (edit -> DA) and
    ``mean_dropped_accuracy``. Arguments as in :func:`dropped_accuracy`."""
    dropped = dropped_accuracy(
        predictions,
        references,
        edits,
        reference_edit=reference_edit,
        known_edits=known_edits,
        num_classes=num_classes,
    )
    pred, ref = np.asarray(predictions), np.asarray(references)
    names = np.asarray(edits, dtype=object)
    return {
        "accuracy": {
            str(e): accuracy(pred[names == e], ref[names == e]) for e in sorted(set(names.tolist()))
        },
        "dropped_accuracy": dropped,
        "mean_dropped_accuracy": mean_dropped_accuracy(dropped),
    }
