# GENERATED FILE - do not edit. Written by `python -m hf_bgbench.evaluate_metrics.generate`
# from hf_bgbench/evaluate_metrics/wrappers/bg_gap.py
# and the hf_bgbench code it imports, copied below from:
#   hf_bgbench/metrics/_checks.py
#   hf_bgbench/evaluate_metrics/wrappers/_common.py
#   hf_bgbench/metrics/classification.py
#   hf_bgbench/metrics/backgrounds.py
# Edit those files (benchmark facts: the benchmark's spec) and regenerate.
"""BG-GAP and per-variant accuracy on ImageNet-9 (Xiao et al., ICLR 2021) as an `evaluate`
metric.

Every number comes from the hf_bgbench metric core (``bg_gap_report``); the published module
carries that core inlined and the benchmark's facts written in, so it needs only numpy and
evaluate.
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


# ---- inlined from hf_bgbench/metrics/backgrounds.py
CATEGORIES = ("bg_required", "bg_fg_required", "bg_irrelevant", "bg_fools", "other")


# The three views of one image that the Table 3 buckets compare (keys of ``category_roles``).
CATEGORY_ROLES = ("full", "foreground", "background")


Gaps = Mapping[str, tuple[str, str]]  # gap name -> (minuend variant, subtrahend variant)


def _check_gaps(gaps: Gaps) -> None:
    """``gaps`` maps gap names to (minuend, subtrahend) variant names; at least one."""
    if not isinstance(gaps, Mapping) or not gaps:
        raise ValueError(
            "`gaps` must map gap names to (minuend, subtrahend) variant names, the headline "
            f"gap first; got {gaps!r}."
        )
    for name, pair in gaps.items():
        ok = isinstance(pair, tuple | list) and len(pair) == 2
        if not (isinstance(name, str) and ok and all(isinstance(v, str) for v in pair)):
            raise ValueError(
                f"`gaps`: {name!r} must map to two variant names (minuend, subtrahend), "
                f"got {pair!r}."
            )


def background_gaps(accuracies: Mapping[str, float], gaps: Gaps) -> dict[str, float]:
    """Every gap of ``gaps`` (name -> (minuend, subtrahend) variant) whose two variants are in
    ``accuracies`` (variant -> accuracy, each a number in [0, 1]), in the order of ``gaps``."""
    if not isinstance(accuracies, Mapping):
        raise ValueError(f"`accuracies` must map variant names to accuracies, got {accuracies!r}.")
    _check_gaps(gaps)

    def acc(variant: str) -> float:
        value = [accuracies[variant]]
        return float(as_float_array(value, f"accuracies[{variant!r}]", low=0.0, high=1.0)[0])

    return {
        name: acc(a) - acc(b)
        for name, (a, b) in gaps.items()
        if a in accuracies and b in accuracies
    }


def _check_rows(
    predictions: ArrayLike,
    references: ArrayLike,
    variants: Sequence[str],
    valid_variants: Sequence[str] | None,
    num_classes: int | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validated long-format rows: int predictions in [-1, num_classes), int references in
    [0, num_classes), variant names (out of ``valid_variants`` when given)."""
    pred = as_int_array(predictions, "predictions")
    ref = as_int_array(references, "references")
    var = as_name_array(variants, "variants")
    same_length(predictions=pred, references=ref, variants=var)
    labels_in_range(ref, "references", num_classes, allow_unmapped=False)
    labels_in_range(pred, "predictions", num_classes, allow_unmapped=True)
    if isinstance(valid_variants, str):
        raise ValueError("`valid_variants` must be a list of variant names (or None), not one.")
    if valid_variants is not None:
        known_names(var, "variants", list(valid_variants), "variant")
    return pred, ref, var


def _rows_of(var: np.ndarray, variant: str) -> str:
    n = int(np.sum(var == variant))
    return f"{n} {variant} row{'' if n == 1 else 's'}"


def _check_paired(var: np.ndarray, idv: np.ndarray | None, gaps: Gaps) -> None:
    """Each gap compares the same images under its two variants: without ids, as many rows
    of one as of the other; with ids, the same ids in both."""
    present = set(var.tolist())
    for name, (a, b) in gaps.items():
        if a not in present or b not in present:
            continue
        if idv is None:
            if np.sum(var == a) != np.sum(var == b):
                raise ValueError(
                    f"`variants`: {name} compares the same images under {a} and {b}, but there "
                    f"are {_rows_of(var, a)} and {_rows_of(var, b)}; give one row per image in "
                    'each (or the image `ids`, config "with_ids", to pair them).'
                )
            continue
        first, second = set(idv[var == a].tolist()), set(idv[var == b].tolist())
        if first != second:
            only_a, only_b = sorted(first - second), sorted(second - first)
            raise ValueError(
                f"`ids`: {name} compares the same images under {a} and {b}, but "
                f"{len(only_a)} id(s) are only in {a}{_example(only_a)} and {len(only_b)} only "
                f"in {b}{_example(only_b)}; give both variants' rows of every image."
            )


def _example(ids: list[str]) -> str:
    return f" (e.g. {ids[0]!r})" if ids else ""


def _check_ids(ref: np.ndarray, var: np.ndarray, idv: np.ndarray) -> None:
    """One row per image id and variant; an id's references agree across its variants."""
    seen: dict[tuple[str, str], int] = {}
    label: dict[str, tuple[int, str]] = {}
    for r, v, i in zip(ref.tolist(), var.tolist(), idv.tolist(), strict=True):
        if (v, i) in seen:
            raise ValueError(
                f"`ids` repeats image id {i!r} within variant {v!r}; each image has one row "
                "per variant."
            )
        seen[(v, i)] = r
        first = label.setdefault(i, (r, v))
        if first[0] != r:
            raise ValueError(
                f"`references` differ between the variants of image id {i!r} ({first[0]} in "
                f"{first[1]}, {r} in {v}); every variant of an image has its foreground's class."
            )


def accuracy_by_variant(
    predictions: ArrayLike,
    references: ArrayLike,
    variants: Sequence[str],
    *,
    valid_variants: Sequence[str] | None = None,
    num_classes: int | None = None,
) -> dict[str, float]:
    """variant -> accuracy, for rows tagged with a variant name each.

    Pass the benchmark's ``valid_variants`` so that a typo ("mixed-rand") fails loudly instead
    of silently dropping out of the gaps, and its ``num_classes`` to refuse labels outside
    it; ``None`` (the default) skips that check.
    """
    pred, ref, var = _check_rows(predictions, references, variants, valid_variants, num_classes)
    return {str(v): accuracy(pred[var == v], ref[var == v]) for v in sorted(set(var.tolist()))}


def prediction_categories(
    full: ArrayLike,
    foreground: ArrayLike,
    background: ArrayLike,
    references: ArrayLike,
    *,
    num_classes: int | None = None,
) -> dict[str, float]:
    """Fractions of images in the paper's Table 3 buckets (they sum to 1).

    ``full`` are predictions on the full image (IN-9: ``original``), ``foreground`` on the
    foreground with an unrelated background (``mixed_rand``) and ``background`` on the
    background alone (``only_bg_t``), aligned by image. Buckets:

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
    labels_in_range(y, "references", num_classes, allow_unmapped=False)
    for view, name in ((f, "full"), (g, "foreground"), (b, "background")):
        labels_in_range(view, name, num_classes, allow_unmapped=True)
    full_ok, fg_ok, bg_ok = f == y, g == y, b == y
    masks = {
        "bg_required": full_ok & ~fg_ok & bg_ok,
        "bg_fg_required": full_ok & ~fg_ok & ~bg_ok,
        "bg_irrelevant": full_ok == fg_ok,
        "bg_fools": ~full_ok & fg_ok & (b == f),
        "other": ~full_ok & fg_ok & (b != f),
    }
    return {name: float(np.mean(masks[name])) for name in CATEGORIES}


def _check_roles(category_roles: Mapping[str, str]) -> None:
    """``category_roles`` maps each of :data:`CATEGORY_ROLES` to a variant name."""
    if (
        not isinstance(category_roles, Mapping)
        or set(category_roles) != set(CATEGORY_ROLES)
        or not all(isinstance(v, str) for v in category_roles.values())
    ):
        raise ValueError(
            f"`category_roles` must map {', '.join(CATEGORY_ROLES)} to variant names, got "
            f"{category_roles!r}."
        )


def prediction_categories_by_id(
    predictions: ArrayLike,
    references: ArrayLike,
    variants: Sequence[str],
    ids: Sequence[str],
    *,
    category_roles: Mapping[str, str],
    valid_variants: Sequence[str] | None = None,
    num_classes: int | None = None,
) -> dict[str, float]:
    """:func:`prediction_categories` from long-format rows, aligned by image id.

    Rows are (prediction, reference, variant, image id). ``category_roles`` names the variant
    of each view (IN-9: full = ``original``, foreground = ``mixed_rand``, background =
    ``only_bg_t``); the rows of one id in those three variants are the views of one image,
    and only ids present in all three are bucketed. Each id may appear at most once per
    variant, and its references must agree (they are the foreground's class).
    ``valid_variants`` and ``num_classes`` as in :func:`accuracy_by_variant`.
    """
    _check_roles(category_roles)
    pred, ref, var = _check_rows(predictions, references, variants, valid_variants, num_classes)
    idv = as_name_array(ids, "ids")
    same_length(predictions=pred, references=ref, variants=var, ids=idv)
    views: dict[str, dict[str, tuple[int, int]]] = {}
    for role in CATEGORY_ROLES:
        variant = category_roles[role]
        rows = np.flatnonzero(var == variant)
        table = {str(idv[i]): (int(pred[i]), int(ref[i])) for i in rows}
        if len(table) != len(rows):
            raise ValueError(f"`ids` repeats an image id within variant {variant!r}.")
        views[role] = table
    common = sorted(set(views["full"]) & set(views["foreground"]) & set(views["background"]))
    if not common:
        full, foreground, background = (category_roles[role] for role in CATEGORY_ROLES)
        raise ValueError(
            f"`ids`: no image id has rows in all of {full}, {foreground} and {background}, "
            "which the prediction categories compare."
        )
    columns = {role: np.array([views[role][i][0] for i in common]) for role in views}
    labels = {role: np.array([views[role][i][1] for i in common]) for role in views}
    if not (
        np.array_equal(labels["full"], labels["foreground"])
        and np.array_equal(labels["full"], labels["background"])
    ):
        raise ValueError("`references` differ between the variants of one image id.")
    return prediction_categories(
        columns["full"], columns["foreground"], columns["background"], labels["full"]
    )


def bg_gap_report(
    predictions: ArrayLike,
    references: ArrayLike,
    variants: Sequence[str],
    ids: Sequence[str] | None = None,
    *,
    gaps: Gaps,
    category_roles: Mapping[str, str] | None = None,
    valid_variants: Sequence[str] | None = None,
    num_classes: int | None = None,
) -> dict[str, float | dict[str, float]]:
    """Everything the ``bg_gap`` metric module reports, from long-format rows.

    Returns ``accuracy_<variant>`` for every variant present, every gap of ``gaps`` (name ->
    (minuend, subtrahend) variant) whose variants are present -- the first gap, the headline
    (IN-9: ``bg_gap`` = mixed_same − mixed_rand), needs rows of both of its variants -- and,
    when ``ids`` are given, ``prediction_categories`` over the views ``category_roles`` names
    (see :func:`prediction_categories_by_id`). ``valid_variants`` and ``num_classes`` as in
    :func:`accuracy_by_variant`. The ``bg_gap`` module passes IN-9's gaps, roles, eight
    variants and nine classes, from its spec.

    A gap compares the same images under its two variants, so their rows must pair up:
    without ``ids``, as many rows of one as of the other; with ``ids``, the same ids in both,
    one row per id and variant, and one reference per id. Anything else is an error, never a
    difference of accuracies over different images.
    """
    _check_gaps(gaps)
    if ids is not None and category_roles is None:
        raise ValueError("`category_roles` is required with `ids` (the prediction categories).")
    checks = {"valid_variants": valid_variants, "num_classes": num_classes}
    accs = accuracy_by_variant(predictions, references, variants, **checks)
    _, ref, var = _check_rows(predictions, references, variants, valid_variants, num_classes)
    idv = None
    if ids is not None:
        idv = as_name_array(ids, "ids")
        same_length(references=ref, ids=idv)
        _check_ids(ref, var, idv)
    headline, (minuend, subtrahend) = next(iter(gaps.items()))
    missing = [v for v in (minuend, subtrahend) if v not in accs]
    if missing:
        raise ValueError(
            f"`variants` has no row of {missing}; {headline} needs both {minuend} and "
            f"{subtrahend} (found: {', '.join(sorted(accs))})."
        )
    _check_paired(var, idv, gaps)
    out: dict[str, float | dict[str, float]] = {f"accuracy_{v}": a for v, a in accs.items()}
    out.update(background_gaps(accs, gaps))
    if ids is not None:
        out["prediction_categories"] = prediction_categories_by_id(
            predictions, references, variants, ids, category_roles=category_roles, **checks
        )
    return out


# From the spec of the benchmark that lists this metric (IN-9, SPEC §1), written in as values
# when the module is generated: names, citation, variants, classes; the gaps (BG-GAP first)
# and the views of the prediction categories.
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
GAPS = {
    "bg_gap": ("mixed_same", "mixed_rand"),
    "same_minus_next": ("mixed_same", "mixed_next"),
    "original_minus_only_fg": ("original", "only_fg"),
}
CATEGORY_VARIANTS = {"full": "original", "foreground": "mixed_rand", "background": "only_bg_t"}

_SHORT = BENCHMARK["short_name"]
_HEADLINE, (_SAME, _RAND) = next(iter(GAPS.items()))
_OTHER_GAPS = [(name, a, b) for name, (a, b) in GAPS.items() if name != _HEADLINE]
_LAST_CLASS = BENCHMARK["num_classes"] - 1
_VARIANT_NAMES = ", ".join(BENCHMARK["variants"])
_OTHER_DIFFERENCES = ", ".join(f"acc({a}) - acc({b})" for _, a, b in _OTHER_GAPS)
_OTHER_RETURNS = "".join(
    f"    {name} (`float`): accuracy_{a} - accuracy_{b} (when both are present).\n"
    for name, a, b in _OTHER_GAPS
)
_FULL, _FOREGROUND, _BACKGROUND = (
    CATEGORY_VARIANTS[view] for view in ("full", "foreground", "background")
)

_DESCRIPTION = f"""\
BG-GAP = accuracy on {_SHORT} {_SAME} minus accuracy on {_SHORT} {_RAND}: how much a classifier
gains from backgrounds typical of the foreground's class. Also reports the accuracy of every
{_SHORT} variant present, {_OTHER_DIFFERENCES}, and (config "with_ids") the paper's prediction
categories.

{BENCHMARK["title"]}: {BENCHMARK["description"]}
"""

_KWARGS_DESCRIPTION = f"""
Args:
    predictions (`list` of `int`): predicted {_SHORT} class per row, 0-{_LAST_CLASS} (-1 = a
        model class outside {_SHORT}, always wrong). Whole numbers only: 1.7 is an error.
    references (`list` of `int`): the foreground's {_SHORT} class per row, 0-{_LAST_CLASS}.
    variants (`list` of `str`): the {_SHORT} variant of each row: {_VARIANT_NAMES}.
        Rows of {_SAME} and {_RAND} are required.
    ids (`list` of `str`, config "with_ids" only): the source image id of each row, shared by
        the variants of one image; enables `prediction_categories`.
Returns:
    accuracy_<variant> (`float`): accuracy of every variant present, in [0, 1].
    {_HEADLINE} (`float`): accuracy_{_SAME} - accuracy_{_RAND}, in [-1, 1].
{_OTHER_RETURNS}\
    prediction_categories (`dict`, config "with_ids"): fractions of images that are
        bg_required, bg_fg_required, bg_irrelevant, bg_fools, other (they sum to 1), from the
        views full = {_FULL}, foreground = {_FOREGROUND}, background = {_BACKGROUND}.
Examples:
    >>> bg_gap = evaluate.load("path/to/bg_gap")  # this folder; "bgbench/bg_gap" once published
    >>> bg_gap.compute(
    ...     predictions=[0, 1, 1, 2],
    ...     references=[0, 1, 1, 1],
    ...     variants=["{_SAME}", "{_SAME}", "{_RAND}", "{_RAND}"],
    ... )
    {{'accuracy_{_RAND}': 0.5, 'accuracy_{_SAME}': 1.0, '{_HEADLINE}': 0.5}}
"""

_BASE = {
    "predictions": datasets.Value("int64"),
    "references": datasets.Value("int64"),
    "variants": datasets.Value("string"),
}
_CONFIGS = {
    "default": _BASE,
    "with_ids": {**_BASE, "ids": datasets.Value("string")},
}


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class BgGap(CheckedInputs, evaluate.Metric):
    """BG-GAP and per-variant accuracy over long-format rows of the benchmark's variants."""

    def _info(self):
        if self.config_name not in _CONFIGS:
            raise ValueError(
                f"Unknown config {self.config_name!r} for bg_gap; use one of {sorted(_CONFIGS)}."
            )
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=BENCHMARK["citation"],
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(_CONFIGS[self.config_name]),
            homepage=BENCHMARK["homepage"],
            reference_urls=[BENCHMARK["paper_url"]],
        )

    def _compute(self, predictions, references, variants, ids=None):
        return bg_gap_report(
            predictions,
            references,
            variants,
            ids=ids,
            gaps=GAPS,
            category_roles=CATEGORY_VARIANTS,
            valid_variants=BENCHMARK["variants"],
            num_classes=BENCHMARK["num_classes"],
        )
