"""The Backgrounds Challenge: adversarial backgrounds (Xiao et al., 2020; SPEC §1).

Every test foreground is pasted on every ``only_bg_t`` background. The result of that
exhaustive run is a *fooling matrix*: ``predictions[i, j]`` is the (benchmark-space) class the
model predicts for foreground ``i`` on background ``j``; ``foreground_labels[i]`` and
``background_labels[j]`` are the classes of the foreground's and the background's source
images. All scores below are pure functions of that matrix (or, for challenge accuracy alone,
of the per-foreground ``vulnerable`` flags, which an early-stopping run also yields).

A prediction of -1 (a model class outside the benchmark) is a wrong prediction: it makes a
foreground vulnerable, but it never counts as being fooled *into a background's class*.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hf_bgbench.metrics._checks import (
    ArrayLike,
    as_bool_array,
    as_int_array,
    labels_in_range,
    same_length,
)


def challenge_accuracy(vulnerable: Sequence[bool] | np.ndarray) -> float:
    """Fraction of foregrounds that are *not* vulnerable.

    A foreground is vulnerable when at least one background makes the model predict anything
    other than the foreground's class. Published: ImageNet ResNet-50 22.3%; a constant "dog"
    model 11% (the dog foregrounds can never be flipped).
    """
    return float(1.0 - np.mean(as_bool_array(vulnerable, "vulnerable")))


def challenge_accuracy_per_class(
    vulnerable: Sequence[bool] | np.ndarray,
    foreground_labels: ArrayLike,
    num_classes: int | None = None,
) -> dict[int, float]:
    """class -> challenge accuracy over the foregrounds of that class (classes present only);
    labels must lie in [0, ``num_classes``) (no upper bound when None)."""
    vul = as_bool_array(vulnerable, "vulnerable")
    lab = as_int_array(foreground_labels, "foreground_labels")
    same_length(vulnerable=vul, foreground_labels=lab)
    labels_in_range(lab, "foreground_labels", num_classes, allow_unmapped=False)
    return {int(c): float(1.0 - vul[lab == c].mean()) for c in np.unique(lab)}


@dataclass(frozen=True)
class FoolingMatrix:
    """The exhaustive foreground x background prediction table of the challenge.

    Build it with :meth:`from_arrays` (a 2-D array) or :meth:`from_rows` (one sequence of
    predictions per foreground, as the ``bg_challenge`` metric module receives them); both
    validate shapes and label ranges and name the argument at fault.
    """

    predictions: np.ndarray  # int64[n_fg, n_bg]; -1 = outside the benchmark's classes
    foreground_labels: np.ndarray  # int64[n_fg]
    background_labels: np.ndarray  # int64[n_bg]

    def __post_init__(self) -> None:
        shapes = (self.predictions, self.foreground_labels, self.background_labels)
        ok = all(isinstance(a, np.ndarray) and a.dtype == np.int64 for a in shapes)
        if (
            not ok
            or self.predictions.ndim != 2
            or self.predictions.shape
            != (
                len(self.foreground_labels),
                len(self.background_labels),
            )
        ):
            raise ValueError(
                "FoolingMatrix holds validated int64 arrays; build it with "
                "FoolingMatrix.from_arrays(...) or FoolingMatrix.from_rows(...)."
            )

    @classmethod
    def from_arrays(
        cls,
        predictions: np.ndarray | Sequence[Sequence[int]],
        foreground_labels: ArrayLike,
        background_labels: ArrayLike,
        num_classes: int | None = None,
    ) -> FoolingMatrix:
        """Validate and wrap ``predictions`` int[n_fg, n_bg] and the two label vectors."""
        pred = np.asarray(predictions)
        if pred.ndim != 2:
            raise ValueError(
                f"`predictions` must be a 2-D foreground x background table, got shape "
                f"{pred.shape}."
            )
        if pred.size == 0:
            raise ValueError("`predictions` is empty; at least one foreground and background.")
        pred = as_int_array(pred, "predictions", ndim=2)
        fg = as_int_array(foreground_labels, "foreground_labels")
        bg = as_int_array(background_labels, "background_labels")
        if len(fg) != pred.shape[0]:
            raise ValueError(
                f"`foreground_labels` has {len(fg)} entries but `predictions` has "
                f"{pred.shape[0]} rows (one per foreground)."
            )
        if len(bg) != pred.shape[1]:
            raise ValueError(
                f"`background_labels` has {len(bg)} entries but `predictions` has "
                f"{pred.shape[1]} columns (one per background)."
            )
        labels_in_range(fg, "foreground_labels", num_classes, allow_unmapped=False)
        labels_in_range(bg, "background_labels", num_classes, allow_unmapped=False)
        labels_in_range(pred.ravel(), "predictions", num_classes, allow_unmapped=True)
        return cls(pred, fg, bg)

    @classmethod
    def from_rows(
        cls,
        foreground_labels: ArrayLike,
        predictions: Sequence[Sequence[int]],
        background_labels: ArrayLike,
        num_classes: int | None = None,
    ) -> FoolingMatrix:
        """One row per foreground: its label and its predictions on every background, in the
        order of ``background_labels`` (the same order for every row)."""
        bg = as_int_array(background_labels, "background_labels")
        rows = list(predictions)
        if not rows:
            raise ValueError("`predictions` is empty; at least one foreground is needed.")
        for i, row in enumerate(rows):
            if len(row) != len(bg):
                raise ValueError(
                    f"`predictions` row {i} has {len(row)} entries; every row needs one per "
                    f"background ({len(bg)}, the length of `background_labels`)."
                )
        return cls.from_arrays(np.asarray(rows), foreground_labels, bg, num_classes)

    @property
    def num_foregrounds(self) -> int:
        return int(self.predictions.shape[0])

    @property
    def num_backgrounds(self) -> int:
        return int(self.predictions.shape[1])

    def _fooled_into_bg_class(self) -> np.ndarray:
        """bool[n_fg, n_bg]: background j of another class flips foreground i into j's class."""
        into_bg = self.predictions == self.background_labels[None, :]
        other = self.foreground_labels[:, None] != self.background_labels[None, :]
        return into_bg & other


def vulnerable_foregrounds(matrix: FoolingMatrix) -> np.ndarray:
    """bool[n_fg]: some background makes the prediction differ from the foreground's class."""
    return np.any(matrix.predictions != matrix.foreground_labels[:, None], axis=1)


def attack_success_rates(matrix: FoolingMatrix) -> np.ndarray:
    """float[n_bg]: per background, the fraction of foregrounds of *other* classes that it
    flips to *its own* class (NaN for a background when every foreground shares its class)."""
    other = matrix.foreground_labels[:, None] != matrix.background_labels[None, :]
    hits = matrix._fooled_into_bg_class().sum(axis=0).astype(float)
    total = other.sum(axis=0).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, hits / np.maximum(total, 1.0), np.nan)


def max_attack_success_rate_per_class(matrix: FoolingMatrix) -> dict[int, float]:
    """background class -> ASR of its most fooling background (the paper's "insect: up to
    52% of non-insect foregrounds"); classes whose ASRs are all undefined are left out."""
    asr = attack_success_rates(matrix)
    out = {}
    for c in np.unique(matrix.background_labels):
        values = asr[matrix.background_labels == c]
        if np.any(~np.isnan(values)):
            out[int(c)] = float(np.nanmax(values))
    return out


def foolable_into_rates(matrix: FoolingMatrix) -> dict[int, float]:
    """class c -> share of foregrounds of other classes that *some* background of class c
    flips into c (the paper's "66.55% can be fooled into insect"). Only classes that have at
    least one background and at least one foreground of another class are reported."""
    out = {}
    for c in np.unique(matrix.background_labels):
        others = matrix.foreground_labels != c
        if not others.any():
            continue
        cols = matrix.background_labels == c
        fooled = np.any(matrix.predictions[:, cols] == c, axis=1)
        out[int(c)] = float(fooled[others].mean())
    return out


def fooled_into_background_class_rate(matrix: FoolingMatrix) -> float:
    """Fraction of foregrounds that some background of another class flips into that
    background's class (published: 88% for an ImageNet ResNet-50)."""
    return float(np.mean(np.any(matrix._fooled_into_bg_class(), axis=1)))


def challenge_report(matrix: FoolingMatrix) -> dict[str, object]:
    """Everything the ``bg_challenge`` metric module reports for a full fooling matrix."""
    vulnerable = vulnerable_foregrounds(matrix)
    return {
        "challenge_accuracy": challenge_accuracy(vulnerable),
        "challenge_accuracy_per_class": challenge_accuracy_per_class(
            vulnerable, matrix.foreground_labels
        ),
        "attack_success_rate": attack_success_rates(matrix).tolist(),
        "max_attack_success_rate_per_class": max_attack_success_rate_per_class(matrix),
        "foolable_into": foolable_into_rates(matrix),
        "fooled_into_background_class": fooled_into_background_class_rate(matrix),
    }
