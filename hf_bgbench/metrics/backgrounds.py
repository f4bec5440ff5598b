"""Background-reliance scores of ImageNet-9 (Xiao et al., 2020; SPEC §1).

All functions are pure: they take benchmark-space predictions and labels (and variant
names) and return numbers; they never see a model, and they know no benchmark. Callers that
know the benchmark pass what its spec declares: the gaps (``gaps``: name -> the two variants
compared, BG-GAP = mixed_same − mixed_rand first), the three views of the prediction
categories (``category_roles``: full / foreground / background -> variant), its variant names
(``valid_variants``, so a typo such as "mixed-rand" fails loudly) and its number of classes
(``num_classes``, so an ImageNet index such as 207 is refused); ``None`` skips those checks.
The ``bg_gap`` ``evaluate`` module passes IN-9's, generated from its spec.
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

CATEGORIES = ("bg_required", "bg_fg_required", "bg_irrelevant", "bg_fools", "other")

# The three views of one image that the Table 3 buckets compare (keys of ``category_roles``).
CATEGORY_ROLES = ("full", "foreground", "background")

Gaps = Mapping[str, tuple[str, str]]  # gap name -> (minuend variant, subtrahend variant)


def bg_gap(accuracy_mixed_same: float, accuracy_mixed_rand: float) -> float:
    """BG-GAP = acc(mixed_same) - acc(mixed_rand), in [-1, 1].

    How much accuracy the model loses when a foreground's background is swapped for one of
    a random class instead of one of its own class: the foreground signal is identical in
    both variants, so the gap is the benefit the model draws from class-typical backgrounds.
    """
    same = as_float_array([accuracy_mixed_same], "accuracy_mixed_same", low=0.0, high=1.0)[0]
    rand = as_float_array([accuracy_mixed_rand], "accuracy_mixed_rand", low=0.0, high=1.0)[0]
    return float(same - rand)


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
