# GENERATED FILE - do not edit. Written by `python -m hf_bgbench.evaluate_metrics.generate`
# from hf_bgbench/evaluate_metrics/wrappers/dropped_accuracy.py
# and the hf_bgbench code it imports, copied below from:
#   hf_bgbench/metrics/_checks.py
#   hf_bgbench/evaluate_metrics/wrappers/_common.py
#   hf_bgbench/metrics/classification.py
#   hf_bgbench/metrics/edits.py
# Edit those files (benchmark facts: the benchmark's spec) and regenerate.
"""Dropped accuracy under ImageNet-E attribute edits (Li et al., CVPR 2023) as an `evaluate`
metric.

Every number comes from the hf_bgbench metric core (``dropped_accuracy_report``); the
published module carries that core inlined and the benchmark's facts written in, so it needs
only numpy and evaluate.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
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


def known_names(values: np.ndarray, name: str, allowed: Sequence[str], what: str) -> None:
    """Raise a ValueError naming ``name`` if ``values`` holds a string not in ``allowed``,
    with a "did you mean" hint for near misses ("mixed-rand" -> "mixed_rand")."""
    unknown = sorted(set(values.tolist()) - set(allowed))
    if unknown:
        hints = [difflib.get_close_matches(u, list(allowed), n=1) for u in unknown]
        said = ", ".join(
            f"{u!r}" + (f" (did you mean {h[0]!r}?)" if h else "")
            for u, h in zip(unknown, hints, strict=True)
        )
        raise ValueError(
            f"`{name}` has unknown {what} name(s) {said}; valid names: {', '.join(allowed)}."
        )


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


# ---- inlined from hf_bgbench/metrics/classification.py
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


# ---- inlined from hf_bgbench/metrics/edits.py
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


# From the spec of the benchmark that lists this metric (ImageNet-E, SPEC §3), written in as
# values when the module is generated: names, citation, the edit names (its variants, the
# unedited reference first) and its classes (ImageNet-1k's).
BENCHMARK = {
    "name": "imagenet-e",
    "short_name": "ImageNet-E",
    "title": "ImageNet-E: attribute editing (background, size, position, direction)",
    "description": (
        "ImageNet photos with one attribute edited at a time (background complexity, random "
        "background, object size, position, rotation); dropped accuracy DA = acc(original) − "
        "acc(edit) per edit and averaged."
    ),
    "citation": """\
@inproceedings{li2023imagenet,
  title={ImageNet-E: Benchmarking Neural Network Robustness via Attribute Editing},
  author={Li, Xiaodan and Chen, Yuefeng and Zhu, Yao and Wang, Shuhui and Zhang, Rong and
          Xue, Hui},
  booktitle={Proceedings of the IEEE/CVF Conference on Computer Vision and Pattern
             Recognition (CVPR)},
  year={2023}
}""",
    "paper_url": "https://arxiv.org/abs/2303.17096",
    "homepage": "https://arxiv.org/abs/2303.17096",
    "variants": (
        "original",
        "bg_inversion",
        "bg_simpler",
        "bg_complex",
        "bg_complex_adv",
        "bg_random",
        "bg_texture",
        "size_full",
        "size_0.1",
        "size_0.08",
        "size_0.05",
        "position",
        "rotation",
    ),
    "reference_variant": "original",
    "num_classes": 1000,
}

_SHORT = BENCHMARK["short_name"]
_REFERENCE = BENCHMARK["reference_variant"]
_EDITS = ", ".join(BENCHMARK["variants"])
_EDIT = BENCHMARK["variants"][-1]  # an edit for the example

_DESCRIPTION = f"""\
Dropped accuracy (DA) = accuracy on the {_REFERENCE} images minus accuracy on an edited copy
of them, per {_SHORT} edit, and its mean over the edits.

{BENCHMARK["title"]}: {BENCHMARK["description"]}
"""

_KWARGS_DESCRIPTION = f"""
Args:
    predictions (`list` of `int`): predicted class per row (whole numbers only).
    references (`list` of `int`): true class per row.
    edits (`list` of `str`): the edit of each row; "{_REFERENCE}" rows are required. Default
        names: {_EDITS}.
    reference_edit (`str`, compute keyword, default "{_REFERENCE}"): the unedited rows' name.
    known_edits (`list` of `str` or `None`, compute keyword): accepted edit names (default
        the {_SHORT} names above); `None` accepts any name (e.g. custom texture edits).
    num_classes (`int` or `None`, compute keyword, default {BENCHMARK["num_classes"]}): classes
        must lie in [0, num_classes); None lifts the upper bound.
Returns:
    accuracy (`dict`): edit -> accuracy, in [0, 1], "{_REFERENCE}" included.
    dropped_accuracy (`dict`): edit -> acc({_REFERENCE}) - acc(edit), in [-1, 1].
    mean_dropped_accuracy (`float`): unweighted mean of `dropped_accuracy` over the edits.
Examples:
    >>> da = evaluate.load("path/to/dropped_accuracy")  # "bgbench/dropped_accuracy" once published
    >>> da.compute(
    ...     predictions=[3, 7, 3, 0],
    ...     references=[3, 7, 3, 7],
    ...     edits=["{_REFERENCE}", "{_REFERENCE}", "{_EDIT}", "{_EDIT}"],
    ... )
    {{'accuracy': {{'{_REFERENCE}': 1.0, '{_EDIT}': 0.5}},
     'dropped_accuracy': {{'{_EDIT}': 0.5}}, 'mean_dropped_accuracy': 0.5}}
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class DroppedAccuracy(CheckedInputs, evaluate.Metric):
    """Per-edit and mean dropped accuracy over long-format rows, one edit name per row."""

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=BENCHMARK["citation"],
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "predictions": datasets.Value("int64"),
                    "references": datasets.Value("int64"),
                    "edits": datasets.Value("string"),
                }
            ),
            homepage=BENCHMARK["homepage"],
            reference_urls=[BENCHMARK["paper_url"]],
        )

    def _compute(
        self,
        predictions,
        references,
        edits,
        reference_edit=_REFERENCE,
        known_edits=BENCHMARK["variants"],
        num_classes=BENCHMARK["num_classes"],
    ):
        return dropped_accuracy_report(
            predictions,
            references,
            edits,
            reference_edit=reference_edit,
            known_edits=known_edits,
            num_classes=num_classes,
        )
