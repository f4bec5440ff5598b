"""Input checks shared by the metric functions: every error names the argument at fault."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

ArrayLike = Sequence[int] | np.ndarray


def as_int_array(values: ArrayLike, name: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"`{name}` must be one-dimensional, got shape {arr.shape}.")
    if arr.size == 0:
        raise ValueError(f"`{name}` is empty; at least one example is needed.")
    if not np.issubdtype(arr.dtype, np.integer):
        if np.issubdtype(arr.dtype, np.floating) and np.all(np.mod(arr, 1) == 0):
            arr = arr.astype(np.int64)
        else:
            raise ValueError(f"`{name}` must hold integer class labels, got dtype {arr.dtype}.")
    return arr.astype(np.int64)


def same_length(**arrays: np.ndarray) -> None:
    lengths = {name: len(a) for name, a in arrays.items()}
    if len(set(lengths.values())) > 1:
        said = ", ".join(f"`{n}` has {k}" for n, k in lengths.items())
        raise ValueError(f"Inputs must have the same length: {said}.")


def labels_in_range(arr: np.ndarray, name: str, num_classes: int | None, allow_unmapped: bool):
    """Labels must lie in [0, num_classes); predictions may also be -1 (unmapped = wrong)."""
    low = -1 if allow_unmapped else 0
    bad = arr < low
    if num_classes is not None:
        bad |= arr >= num_classes
    if bad.any():
        rng = f"[{low}, {num_classes})" if num_classes is not None else f">= {low}"
        raise ValueError(
            f"`{name}` has {int(bad.sum())} value(s) out of range {rng}, e.g. {int(arr[bad][0])}."
        )


def as_float_array(
    values: Sequence[float] | np.ndarray,
    name: str,
    *,
    ndim: int | None = 1,
    low: float | None = None,
    high: float | None = None,
) -> np.ndarray:
    """``values`` as a finite float64 array of ``ndim`` dimensions, optionally in [low, high]."""
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"`{name}` must hold numbers.") from None
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"`{name}` must be {ndim}-dimensional, got shape {arr.shape}.")
    if arr.size == 0:
        raise ValueError(f"`{name}` is empty; at least one example is needed.")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"`{name}` holds NaN or infinite values.")
    bad = np.zeros(arr.shape, dtype=bool)
    if low is not None:
        bad |= arr < low
    if high is not None:
        bad |= arr > high
    if bad.any():
        raise ValueError(
            f"`{name}` has {int(bad.sum())} value(s) outside [{low}, {high}], "
            f"e.g. {float(arr[bad][0])}."
        )
    return arr


def as_bool_array(values: Sequence[bool] | np.ndarray, name: str) -> np.ndarray:
    """``values`` as a 1-D bool array; accepts bools or 0/1 integers."""
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"`{name}` must be one-dimensional, got shape {arr.shape}.")
    if arr.size == 0:
        raise ValueError(f"`{name}` is empty; at least one example is needed.")
    if arr.dtype != bool:
        if arr.dtype == object or not np.all(np.isin(arr, (0, 1))):
            raise ValueError(f"`{name}` must hold booleans (or 0/1), got e.g. {arr.flat[0]!r}.")
        arr = arr.astype(bool)
    return arr


def as_name_array(values: Sequence[str] | np.ndarray, name: str) -> np.ndarray:
    """``values`` as a 1-D object array of strings (variant or edit names, ids)."""
    arr = np.asarray(values, dtype=object)
    if arr.ndim != 1:
        raise ValueError(f"`{name}` must be one-dimensional, got shape {arr.shape}.")
    if arr.size == 0:
        raise ValueError(f"`{name}` is empty; at least one example is needed.")
    bad = [v for v in arr.tolist() if not isinstance(v, str)]
    if bad:
        raise ValueError(f"`{name}` must hold strings, got e.g. {bad[0]!r}.")
    return arr


def known_names(values: np.ndarray, name: str, allowed: Sequence[str], what: str) -> None:
    """Raise a ValueError naming ``name`` if ``values`` holds a string not in ``allowed``."""
    unknown = sorted(set(values.tolist()) - set(allowed))
    if unknown:
        raise ValueError(
            f"`{name}` has unknown {what} name(s) {unknown}; valid names: {', '.join(allowed)}."
        )
