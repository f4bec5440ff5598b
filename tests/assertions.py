"""Assertions and probes shared by the tests."""

from __future__ import annotations

from pathlib import Path

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


def live_group(pgid: int) -> list[int]:
    """The live processes (zombies aside) of process group ``pgid``, from the process table:
    a Space job and the workers it started."""
    alive = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            alive.append(int(stat.parent.name))
    return alive
