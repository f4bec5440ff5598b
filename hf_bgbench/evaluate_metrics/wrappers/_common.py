"""Shared by the four metric modules: check the raw inputs before ``evaluate`` casts them.

``evaluate`` stores inputs through their declared ``datasets`` features, and the cast is
lossy: ``Value("int64")`` turns 1.7 into 1 and "3" into 3, ``Value("bool")`` turns "no" and
NaN into True, ``Value("string")`` turns 5 into "5". :class:`CheckedInputs` runs the metric
core's own checks (:mod:`hf_bgbench.metrics._checks`) on every ``add`` / ``add_batch`` /
``compute`` input first, so bad values fail with a ValueError that names the argument.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from hf_bgbench.metrics._checks import (
    as_bool_array,
    as_float_array,
    as_int_array,
    as_name_array,
    same_length,
)


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
