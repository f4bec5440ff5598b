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
