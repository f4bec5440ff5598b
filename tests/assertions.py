"""Assertions shared by the metric tests."""

from __future__ import annotations

import numpy as np
import pytest


def assert_close(actual, expected):
    """Equality of (nested) result dicts, floats up to rounding, NaN equal to NaN."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict) and actual.keys() == expected.keys()
        for key in expected:
            assert_close(actual[key], expected[key])
    elif isinstance(expected, list | tuple | np.ndarray):
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected, strict=True):
            assert_close(a, e)
    else:
        assert actual == pytest.approx(expected, nan_ok=True, abs=1e-12)
