"""Input checks shared by the metric functions: every error names the argument at fault and
says how to fix it.

Rules (the same in the core and in the ``evaluate`` modules, which run these checks on the
raw inputs before ``datasets`` casts them):

- class labels are whole numbers: ints, or floats with no fractional part (``2.0`` is 2;
  ``1.7``, NaN, booleans and strings are errors);
- labels lie in ``[0, num_classes)``; predictions may also be ``-1`` (a model class outside
  the benchmark, always wrong) where that is meaningful;
- flags are booleans or 0/1; scores are finite numbers (not strings, not booleans);
- names are strings; aligned inputs have the same length; nothing is empty.

Only numpy and the standard library are used: these functions are inlined verbatim into the
self-contained ``evaluate`` modules (see ``hf_bgbench.evaluate_metrics``).
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

import numpy as np

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
