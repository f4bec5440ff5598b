"""hf_bgbench: how much does an image classifier lean on the background?

Public API (imported lazily so ``import hf_bgbench`` stays fast)::

    from hf_bgbench import evaluate_model, run_challenge, load_classifier, get_benchmark
"""

from __future__ import annotations

import importlib
from typing import Any

from hf_bgbench.version import __version__

_LAZY = {
    "evaluate_model": "hf_bgbench.tasks.evaluate",
    "run_challenge": "hf_bgbench.tasks.challenge",
    "run_noise": "hf_bgbench.tasks.noise",
    "run_saliency": "hf_bgbench.tasks.saliency",
    "run_task": "hf_bgbench.tasks",
    "list_tasks": "hf_bgbench.tasks",
    "ModelStep": "hf_bgbench.inference.model_step",
    "load_classifier": "hf_bgbench.models",
    "get_benchmark": "hf_bgbench.benchmarks",
    "list_benchmarks": "hf_bgbench.benchmarks",
    "load_variant": "hf_bgbench.data.sources",
    "load_metric": "hf_bgbench.evaluate_metrics",
}
__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'hf_bgbench' has no attribute {name!r}")
