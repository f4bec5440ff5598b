# GENERATED FILE - do not edit. Written by `python -m hf_bgbench.evaluate_metrics.generate`
# from hf_bgbench/evaluate_metrics/wrappers/bg_challenge.py
# and the hf_bgbench code it imports, copied below from:
#   hf_bgbench/metrics/_checks.py
#   hf_bgbench/evaluate_metrics/wrappers/_common.py
#   hf_bgbench/metrics/challenge.py
# Edit those files (benchmark facts: the benchmark's spec) and regenerate.
"""The Backgrounds Challenge (Xiao et al., ICLR 2021) as an `evaluate` metric: challenge
accuracy and, from a full fooling matrix, attack success rates of the backgrounds.

Every number comes from the hf_bgbench metric core (``challenge_accuracy``,
``challenge_accuracy_per_class``, ``FoolingMatrix`` and ``challenge_report``); the published
module carries that core inlined and the benchmark's facts written in, so it needs only numpy
and evaluate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import datasets
import evaluate
import numpy as np

# ---- inlined from hf_bgbench/metrics/_checks.py
ArrayLike = Sequence[int] | np.ndarray


# Largest magnitude a float64 holds as an exact integer.
_EXACT_INT = 2.0**53


def _first_bad(arr: np.ndarray, bad: np.ndarray) -> str:
    """The first True of ``bad`` as "e.g. <value> at position <i>"."""
    index = tuple(int(i) for i in np.argwhere(bad)[0])
    where = index[0] if len(index) == 1 else index
    return f"e.g. {_plain(arr[bad].flat[0])!r} at position {where}"


def _plain(value: object) -> object:
    """A numpy scalar as the Python value it holds (so messages read 1.7, not
    np.float64(1.7))."""
    return value.item() if isinstance(value, np.generic) else value


def _check_shape(arr: np.ndarray, name: str, ndim: int) -> None:
    if arr.ndim != ndim:
        shape = "one-dimensional" if ndim == 1 else f"{ndim}-dimensional"
        raise ValueError(f"`{name}` must be {shape}, got shape {arr.shape}.")
    if arr.size == 0:
        raise ValueError(f"`{name}` is empty; at least one example is needed.")


def as_int_array(values: ArrayLike, name: str, *, ndim: int = 1) -> np.ndarray:
    """``values`` as an int64 array of ``ndim`` dimensions; floats must be whole numbers."""
    arr = np.asarray(values)
    _check_shape(arr, name, ndim)
    kind = arr.dtype.kind
    if kind == "b" or (
        isinstance(values, list | tuple) and any(isinstance(v, bool | np.bool_) for v in values)
    ):
        raise ValueError(
            f"`{name}` must hold integer class labels, got booleans; pass the class index."
        )
    if kind not in "iuf":
        bad = [v for v in arr.ravel().tolist() if not isinstance(v, int) or isinstance(v, bool)]
        example = bad[0] if bad else _plain(arr.flat[0])
        raise ValueError(
            f"`{name}` must hold integer class labels, got e.g. {example!r} "
            f"(dtype {arr.dtype}); pass the class index, not its name or score."
        )
    if kind == "f":
        finite = np.isfinite(arr)
        if not finite.all():
            raise ValueError(
                f"`{name}` must hold integer class labels, got NaN or infinity "
                f"({_first_bad(arr, ~finite)}); every example needs a class label."
            )
        fractional = np.mod(arr, 1) != 0
        if fractional.any():
            raise ValueError(
                f"`{name}` must hold integer class labels, got a value that is not a whole "
                f"number ({_first_bad(arr, fractional)}); pass the predicted class (e.g. the "
                "argmax), not a score or probability."
            )
        huge = np.abs(arr) > _EXACT_INT
        if huge.any():
            raise ValueError(
                f"`{name}` must hold integer class labels, got a value too large to be one "
                f"({_first_bad(arr, huge)})."
            )
    return arr.astype(np.int64)


def same_length(**arrays: np.ndarray) -> None:
    lengths = {name: len(a) for name, a in arrays.items()}
    if len(set(lengths.values())) > 1:
        said = ", ".join(f"`{n}` has {k}" for n, k in lengths.items())
        raise ValueError(f"Inputs must have the same length: {said}.")


def check_num_classes(num_classes: int | None) -> None:
    """``num_classes`` is None (no upper bound) or a positive int."""
    if num_classes is None:
        return
    if isinstance(num_classes, bool) or not isinstance(num_classes, int | np.integer):
        raise ValueError(f"`num_classes` must be a positive int or None, got {num_classes!r}.")
    if num_classes < 1:
        raise ValueError(f"`num_classes` must be a positive int or None, got {num_classes}.")


def labels_in_range(
    arr: np.ndarray, name: str, num_classes: int | None, allow_unmapped: bool
) -> None:
    """Labels must lie in [0, num_classes); predictions may also be -1 (unmapped = wrong)."""
    check_num_classes(num_classes)
    low = -1 if allow_unmapped else 0
    bad = arr < low
    if num_classes is not None:
        bad |= arr >= num_classes
    if bad.any():
        rng = f"[{low}, {num_classes})" if num_classes is not None else f">= {low}"
        hint = ("; -1 marks a model class outside the benchmark" if allow_unmapped else "") + (
            "; map the model's classes to the benchmark's labels first"
            if num_classes is not None and (arr >= num_classes).any()
            else ""
        )
        raise ValueError(
            f"`{name}` has {int(bad.sum())} value(s) out of range {rng}, "
            f"{_first_bad(arr, bad)}{hint}."
        )


def as_float_array(
    values: Sequence[float] | np.ndarray,
    name: str,
    *,
    ndim: int | None = 1,
    low: float | None = None,
    high: float | None = None,
) -> np.ndarray:
    """``values`` as a finite float64 array of ``ndim`` dimensions, optionally in [low, high].

    Ints and floats only: strings (``"0.5"``), booleans and ``None`` are errors.
    """
    raw = np.asarray(values)
    if raw.dtype.kind not in "iuf":
        bad = [
            v for v in raw.ravel().tolist() if not isinstance(v, int | float) or isinstance(v, bool)
        ]
        example = f" e.g. {bad[0]!r}" if bad else ""
        raise ValueError(f"`{name}` must hold numbers, got{example} (dtype {raw.dtype}).")
    arr = raw.astype(np.float64)
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"`{name}` must be {ndim}-dimensional, got shape {arr.shape}.")
    if arr.size == 0:
        raise ValueError(f"`{name}` is empty; at least one example is needed.")
    finite = np.isfinite(arr)
    if not finite.all():
        raise ValueError(f"`{name}` holds NaN or infinite values ({_first_bad(arr, ~finite)}).")
    bad = np.zeros(arr.shape, dtype=bool)
    if low is not None:
        bad |= arr < low
    if high is not None:
        bad |= arr > high
    if bad.any():
        raise ValueError(
            f"`{name}` has {int(bad.sum())} value(s) outside [{low}, {high}], "
            f"{_first_bad(arr, bad)}."
        )
    return arr


def as_bool_array(values: Sequence[bool] | np.ndarray, name: str) -> np.ndarray:
    """``values`` as a 1-D bool array; accepts booleans or 0/1 (never strings or NaN)."""
    arr = np.asarray(values)
    _check_shape(arr, name, 1)
    if arr.dtype.kind == "b":
        return arr
    if arr.dtype.kind not in "iuf":
        raise ValueError(
            f"`{name}` must hold booleans (or 0/1), got e.g. {_plain(arr.flat[0])!r} "
            f"(dtype {arr.dtype}); strings such as 'yes'/'no' are not accepted."
        )
    bad = ~np.isin(arr, (0, 1))
    if bad.any():
        raise ValueError(f"`{name}` must hold booleans (or 0/1), got {_first_bad(arr, bad)}.")
    return arr.astype(bool)


def as_name_array(values: Sequence[str] | np.ndarray, name: str) -> np.ndarray:
    """``values`` as a 1-D object array of strings (variant or edit names, ids)."""
    arr = np.asarray(values, dtype=object)
    _check_shape(arr, name, 1)
    bad = [v for v in arr.tolist() if not isinstance(v, str)]
    if bad:
        raise ValueError(f"`{name}` must hold strings, got e.g. {bad[0]!r}.")
    return arr


# ---- inlined from hf_bgbench/evaluate_metrics/wrappers/_common.py
def check_raw_column(values: Any, name: str, feature: Any) -> None:
    """Check one input column (one value per example) against its ``datasets`` feature."""
    if values is None:
        raise ValueError(f"`{name}` is missing; pass one value per example.")
    scalar = isinstance(values, np.ndarray) and values.ndim == 0
    if scalar or isinstance(values, str | bytes | Mapping) or not hasattr(values, "__len__"):
        raise ValueError(f"`{name}` must be a list with one value per example, got {values!r}.")
    if len(values) == 0:
        return  # an empty batch adds nothing; compute() refuses an empty total
    inner = getattr(feature, "feature", None)
    if inner is not None:  # a list per example, e.g. one prediction per background
        for i, row in enumerate(values):
            if isinstance(row, str | bytes) or not hasattr(row, "__len__"):
                raise ValueError(f"`{name}` must hold one list per example; entry {i} is {row!r}.")
            if len(row):
                check_raw_column(list(row), f"{name}[{i}]", inner)
        return
    dtype = str(getattr(feature, "dtype", ""))
    if dtype == "bool":
        as_bool_array(values, name)
    elif dtype.startswith(("int", "uint")):
        as_int_array(values, name)
    elif dtype.startswith("float"):
        as_float_array(values, name)
    elif dtype in ("string", "large_string"):
        as_name_array(values, name)


def check_raw_inputs(features: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
    """Check every declared input present in ``inputs``; they must have the same length."""
    present = {name: inputs.get(name) for name in features}
    for name, values in present.items():
        check_raw_column(values, name, features[name])
    same_length(**{name: np.empty(len(values)) for name, values in present.items()})


class CheckedInputs:
    """Mixin for an ``evaluate.Metric`` (list it first): checks raw inputs, then stores them.

    Not itself a Metric, so ``evaluate.load`` still picks the metric class of the module.
    """

    def add_batch(self, *, predictions: Any = None, references: Any = None, **kwargs: Any):
        """Check a batch of inputs (one list per input, one value per example), then add it.

        (``evaluate`` appends the module's input description to this docstring.)
        """
        batch = {"predictions": predictions, "references": references, **kwargs}
        check_raw_inputs(self.features, batch)
        return super().add_batch(predictions=predictions, references=references, **kwargs)

    def add(self, *, prediction: Any = None, reference: Any = None, **kwargs: Any):
        """Check one example's inputs (one value per input), then add it.

        (``evaluate`` appends the module's input description to this docstring.)
        """
        example = {"predictions": prediction, "references": reference, **kwargs}
        check_raw_inputs(self.features, {k: None if v is None else [v] for k, v in example.items()})
        return super().add(prediction=prediction, reference=reference, **kwargs)


# ---- inlined from hf_bgbench/metrics/challenge.py
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


# From the spec of the benchmark that lists this metric (IN-9, SPEC §1), written in as values
# when the module is generated: names, citation and its classes.
BENCHMARK = {
    "name": "in9",
    "short_name": "IN-9",
    "title": "ImageNet-9 Backgrounds Challenge",
    "description": (
        "Nine coarse ImageNet classes; eight variants that separate foreground and background "
        "signal. BG-GAP = acc(mixed_same) - acc(mixed_rand)."
    ),
    "citation": """\
@inproceedings{xiao2021noise,
  title={Noise or Signal: The Role of Image Backgrounds in Object Recognition},
  author={Xiao, Kai Yuanqing and Engstrom, Logan and Ilyas, Andrew and Madry, Aleksander},
  booktitle={International Conference on Learning Representations},
  year={2021},
  note={arXiv:2006.09994}
}""",
    "paper_url": "https://arxiv.org/abs/2006.09994",
    "homepage": "https://github.com/MadryLab/backgrounds_challenge",
    "variants": (
        "original",
        "only_bg_b",
        "only_bg_t",
        "no_fg",
        "only_fg",
        "mixed_same",
        "mixed_rand",
        "mixed_next",
    ),
    "reference_variant": "original",
    "num_classes": 9,
}

_SHORT = BENCHMARK["short_name"]
_NUM_CLASSES = BENCHMARK["num_classes"]

_DESCRIPTION = f"""\
Challenge accuracy = fraction of {_SHORT} test foregrounds that no background (out of every
background-only test image) can make the model misclassify. With the full foreground x
background prediction table (config "fooling_matrix") also each background's attack success
rate, the share of foregrounds foolable into each class, and the share foolable into the
background's class by some background.

{BENCHMARK["title"]}: {BENCHMARK["description"]}
"""

_KWARGS_DESCRIPTION = f"""
Args (config "default"):
    vulnerable (`list` of `bool`): per foreground, whether some background flipped it
        (True/False or 1/0; strings such as "yes" and NaN are errors).
Args (config "per_class"):
    vulnerable (`list` of `bool`) and foreground_labels (`list` of `int`).
Args (config "fooling_matrix"), one row per foreground:
    foreground_labels (`int`): the foreground's class.
    predictions (`list` of `int`): the class predicted for this foreground pasted on each
        background, in one fixed background order shared by all rows (-1 = a class outside
        the benchmark: wrong, but never "fooled into" a background's class).
    background_labels (`list` of `int`, compute keyword, required): the class of each
        background, in that order.
    num_classes (`int` or `None`, compute keyword, default {_NUM_CLASSES} = {_SHORT}): labels
        must lie in [0, num_classes) and predictions also may be -1; None lifts the upper
        bound.
Returns:
    challenge_accuracy (`float`): in [0, 1].
    challenge_accuracy_per_class (`dict`, "per_class" and "fooling_matrix"): class -> value.
    attack_success_rate (`list` of `float`, "fooling_matrix"): per background, fraction of
        other-class foregrounds it flips to its class (NaN if every foreground shares its class).
    max_attack_success_rate_per_class (`dict`): class -> ASR of its most fooling background.
    foolable_into (`dict`): class c -> share of other-class foregrounds that some background
        of class c flips into c.
    fooled_into_background_class (`float`): share of foregrounds that some background of
        another class flips into that background's class.
Examples:
    >>> challenge = evaluate.load("path/to/bg_challenge")  # "bgbench/bg_challenge" once published
    >>> challenge.compute(vulnerable=[True, False, True, True])
    {{'challenge_accuracy': 0.25}}
"""

_CONFIGS = {
    "default": {"vulnerable": datasets.Value("bool")},
    "per_class": {
        "vulnerable": datasets.Value("bool"),
        "foreground_labels": datasets.Value("int64"),
    },
    "fooling_matrix": {
        "foreground_labels": datasets.Value("int64"),
        "predictions": datasets.Sequence(datasets.Value("int64")),
    },
}


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class BgChallenge(CheckedInputs, evaluate.Metric):
    """Challenge accuracy, optionally per class or with the fooling-matrix statistics."""

    def _info(self):
        if self.config_name not in _CONFIGS:
            raise ValueError(
                f"Unknown config {self.config_name!r} for bg_challenge; use one of "
                f"{sorted(_CONFIGS)}."
            )
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=BENCHMARK["citation"],
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(_CONFIGS[self.config_name]),
            homepage=BENCHMARK["homepage"],
            reference_urls=[BENCHMARK["paper_url"]],
        )

    def _compute(
        self,
        vulnerable=None,
        foreground_labels=None,
        predictions=None,
        background_labels=None,
        num_classes=_NUM_CLASSES,
    ):
        if self.config_name == "default":
            return {"challenge_accuracy": challenge_accuracy(vulnerable)}
        if self.config_name == "per_class":
            return {
                "challenge_accuracy": challenge_accuracy(vulnerable),
                "challenge_accuracy_per_class": challenge_accuracy_per_class(
                    vulnerable, foreground_labels, num_classes
                ),
            }
        if background_labels is None:
            raise ValueError(
                "`background_labels` is missing: pass compute(..., background_labels=[...]) "
                "with the class of each background, in the order of the prediction rows."
            )
        matrix = FoolingMatrix.from_rows(
            foreground_labels, predictions, background_labels, num_classes=num_classes
        )
        return challenge_report(matrix)
