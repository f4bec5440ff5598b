# GENERATED FILE - do not edit. Written by `python -m hf_bgbench.evaluate_metrics.generate`
# from hf_bgbench/evaluate_metrics/wrappers/rfs.py
# and the hf_bgbench code it imports, copied below from:
#   hf_bgbench/metrics/_checks.py
#   hf_bgbench/evaluate_metrics/wrappers/_common.py
#   hf_bgbench/metrics/noise.py
# Edit those files (benchmark facts: the benchmark's spec) and regenerate.
"""Relative foreground sensitivity (RIVAL10 noise analysis; Moayeri et al., CVPR 2022) as an
`evaluate` metric.

Every number comes from the hf_bgbench metric core (``rfs_report``); the published module
carries that core inlined and the benchmark's facts written in, so it needs only numpy and
evaluate.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
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


# ---- inlined from hf_bgbench/metrics/noise.py
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


# From the spec of the benchmark that lists this metric (RIVAL10, SPEC §2), written in as
# values when the module is generated: names, citation and its classes (labels outside
# [0, num_classes) are refused unless the num_classes keyword says otherwise).
BENCHMARK = {
    "name": "rival10",
    "short_name": "RIVAL10",
    "title": "RIVAL10",
    "description": (
        "Ten classes of ImageNet images with object masks, 18 attributes and attribute masks; "
        "noise analysis (RFS) and saliency alignment."
    ),
    "citation": """\
@inproceedings{moayeri2022comprehensive,
  title={A Comprehensive Study of Image Classification Model Sensitivity to Foregrounds,
         Backgrounds, and Visual Attributes},
  author={Moayeri, Mazda and Pope, Phillip and Balaji, Yogesh and Feizi, Soheil},
  booktitle={Proceedings of the IEEE/CVF Conference on Computer Vision and Pattern
             Recognition (CVPR)},
  year={2022}
}""",
    "paper_url": "https://arxiv.org/abs/2201.10766",
    "homepage": "https://arxiv.org/abs/2201.10766",
    "variants": ("ordinary",),
    "reference_variant": "ordinary",
    "num_classes": 10,
}

_DESCRIPTION = f"""\
Relative foreground sensitivity RFS = (a_bg - a_fg) / (2 min(ā, 1 - ā)), where a_fg and a_bg
are the accuracies with Gaussian noise added to the object only and to the background only
and ā their mean. In [-1, 1]; positive = the model depends more on the foreground. Defined as
0 when ā is 0 or 1 (then a_fg = a_bg). Optional inputs (pick them with the config name) add
instance-wise iRFS from true-class probabilities, per-noise-level values and trial grouping.

{BENCHMARK["title"]}: {BENCHMARK["description"]}
"""

_KWARGS_DESCRIPTION = f"""
Args:
    predictions_fg_noise (`list` of `int`): predicted class with noise on the object (-1 = a
        model class outside the benchmark, always wrong). Whole numbers only.
    predictions_bg_noise (`list` of `int`): predicted class with noise on the background.
    references (`list` of `int`): true class. One row per (image, trial[, noise level]).
    probabilities_fg_noise, probabilities_bg_noise (`list` of `float`, config token "irfs"):
        the model's probability of the true class under fg / bg noise, in [0, 1].
    noise_levels (`list` of `float`, config token "noise_levels"): σ (or ε) of each row.
    instance_ids (`list` of `str`, config token "instance_ids", needs "irfs"): image id of
        each row; rows sharing an id (and noise level) are trials whose probabilities are
        averaged before iRFS. Without it every row is one image.
    num_classes (`int` or `None`, compute keyword, default {BENCHMARK["num_classes"]} = \
{BENCHMARK["short_name"]}): labels must lie in [0, num_classes); None lifts the upper bound.
    The config name is "default" or "+"-joined tokens, e.g. "irfs+noise_levels".
Returns:
    rfs (`float`): RFS from the accuracies pooled over all rows, in [-1, 1].
    accuracy_fg_noise, accuracy_bg_noise (`float`): in [0, 1].
    rfs_per_class (`dict`): class -> RFS over that class's rows.
    rfs_per_noise_level (`dict`, "noise_levels"): level -> RFS; rfs_mean_over_noise_levels.
    irfs_mean (`float`, "irfs"): mean iRFS over images, in [-1, 1]; irfs_per_class (`dict`);
        irfs_mean_per_noise_level (`dict`, "irfs+noise_levels").
Examples:
    >>> rfs = evaluate.load("path/to/rfs")  # this folder; "bgbench/rfs" once published
    >>> rfs.compute(
    ...     predictions_fg_noise=[0, 1, 2, 2],
    ...     predictions_bg_noise=[0, 1, 1, 3],
    ...     references=[0, 1, 1, 3],
    ... )
    {{'rfs': 1.0, 'accuracy_fg_noise': 0.5, 'accuracy_bg_noise': 1.0, 'rfs_per_class': \
{{0: 0.0, 1: 1.0, 3: 1.0}}}}
"""

_BASE = {
    "predictions_fg_noise": datasets.Value("int64"),
    "predictions_bg_noise": datasets.Value("int64"),
    "references": datasets.Value("int64"),
}
_TOKENS = {
    "irfs": {
        "probabilities_fg_noise": datasets.Value("float64"),
        "probabilities_bg_noise": datasets.Value("float64"),
    },
    "noise_levels": {"noise_levels": datasets.Value("float64")},
    "instance_ids": {"instance_ids": datasets.Value("string")},
}


def _features(config_name):
    """The input features of a config: "default", or "+"-joined tokens of _TOKENS."""
    tokens = [] if config_name == "default" else config_name.split("+")
    unknown = [t for t in tokens if t not in _TOKENS]
    if unknown or len(set(tokens)) != len(tokens):
        raise ValueError(
            f"Bad rfs config {config_name!r}: use 'default' or '+'-joined tokens out of "
            f"{sorted(_TOKENS)}, each at most once (e.g. 'irfs+noise_levels')."
        )
    if "instance_ids" in tokens and "irfs" not in tokens:
        raise ValueError(
            "The rfs config token 'instance_ids' needs 'irfs' (it groups iRFS trials)."
        )
    spec = dict(_BASE)
    for token in sorted(tokens, key=list(_TOKENS).index):
        spec.update(_TOKENS[token])
    return datasets.Features(spec)


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Rfs(CheckedInputs, evaluate.Metric):
    """RFS (and optionally iRFS, per noise level) over fg-noise / bg-noise prediction rows."""

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=BENCHMARK["citation"],
            inputs_description=_KWARGS_DESCRIPTION,
            features=_features(self.config_name),
            homepage=BENCHMARK["homepage"],
            reference_urls=[BENCHMARK["paper_url"]],
        )

    def _compute(
        self,
        predictions_fg_noise,
        predictions_bg_noise,
        references,
        probabilities_fg_noise=None,
        probabilities_bg_noise=None,
        noise_levels=None,
        instance_ids=None,
        num_classes=BENCHMARK["num_classes"],
    ):
        return rfs_report(
            predictions_fg_noise,
            predictions_bg_noise,
            references,
            probabilities_fg_noise=probabilities_fg_noise,
            probabilities_bg_noise=probabilities_bg_noise,
            noise_levels=noise_levels,
            instance_ids=instance_ids,
            num_classes=num_classes,
        )
