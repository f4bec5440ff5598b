"""Shared by the tests that load the ``evaluate`` metric modules: every evaluate / HF cache
in a temporary folder, offline. Import the fixture into a test module to use it::

    from tests.metric_env import evaluate_cache  # noqa: F401  (autouse)
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

evaluate = pytest.importorskip("evaluate")

ROOT = Path(__file__).resolve().parent.parent
METRICS_DIR = ROOT / "metrics"
NAMES = ("bg_gap", "bg_challenge", "rfs", "dropped_accuracy")


@pytest.fixture(scope="module", autouse=True)
def evaluate_cache(tmp_path_factory):
    """Point every evaluate / HF cache at a temporary folder, so nothing is written to ~."""
    root = tmp_path_factory.mktemp("hf_home")
    with pytest.MonkeyPatch.context() as mp:
        for var, sub in [
            ("HF_HOME", ""),
            ("HF_EVALUATE_CACHE", "evaluate"),
            ("HF_METRICS_CACHE", "metrics"),
            ("HF_MODULES_CACHE", "modules"),
        ]:
            mp.setenv(var, str(root / sub))
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("HF_DATASETS_OFFLINE", "1")
        mp.setenv("GRADIO_ANALYTICS_ENABLED", "False")
        # evaluate reads these at import time; patch the live values too.
        mp.setattr(evaluate.config, "HF_CACHE_HOME", str(root))
        mp.setattr(evaluate.config, "HF_EVALUATE_CACHE", root / "evaluate")
        mp.setattr(evaluate.config, "HF_METRICS_CACHE", root / "metrics")
        modules = root / "modules"
        if "evaluate_modules" in sys.modules:
            # Python has already imported the dynamic-modules package from an earlier test's
            # cache; keep using that folder, or the new module could not be imported.
            modules = Path(list(sys.modules["evaluate_modules"].__path__)[0]).parent
        mp.setattr(evaluate.config, "HF_MODULES_CACHE", modules)
        mp.setattr(evaluate.config, "HF_EVALUATE_OFFLINE", True)
        yield modules


def load(name: str, config: str | None = None, **kwargs):
    """The generated module in the top-level ``metrics/<name>/`` folder."""
    return evaluate.load(str(METRICS_DIR / name), config, **kwargs)
