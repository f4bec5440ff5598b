"""The four ``evaluate`` metric modules: ``bg_gap``, ``bg_challenge``, ``rfs`` and
``dropped_accuracy``.

They ship inside the package, in ``generated/<name>/`` (module, metric card, Space app and
requirements), and load offline::

    import hf_bgbench

    bg_gap = hf_bgbench.load_metric("bg_gap")  # = evaluate.load("bgbench/bg_gap") once published

Each module is *generated* from the metric core (:mod:`hf_bgbench.metrics`) by
:mod:`hf_bgbench.evaluate_metrics.generate`, which inlines the core's numpy functions, so the
modules are self-contained (numpy and evaluate only) and cannot disagree with the core.
``bgbench publish-metrics`` publishes them as Spaces.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

METRIC_NAMES = ("bg_gap", "bg_challenge", "rfs", "dropped_accuracy")


def packaged_metrics_dir() -> Path:
    """The folder inside the installed package that holds one folder per metric."""
    return Path(__file__).resolve().parent / "generated"


def metric_dir(name: str) -> Path:
    """The packaged folder of metric ``name`` (``<name>.py``, ``README.md``, ...)."""
    if name not in METRIC_NAMES:
        raise ValueError(f"Unknown metric {name!r}; choose from {', '.join(METRIC_NAMES)}.")
    folder = packaged_metrics_dir() / name
    if not (folder / f"{name}.py").is_file():
        raise FileNotFoundError(
            f"{folder / f'{name}.py'} is missing from this installation; regenerate it with "
            "`python -m hf_bgbench.evaluate_metrics.generate`."
        )
    return folder


def load_metric(name: str, config_name: str | None = None, **kwargs: Any) -> Any:
    """``evaluate.load`` of the packaged metric module ``name``: works offline, with the
    same module that ``evaluate.load("bgbench/<name>")`` fetches once the Spaces are
    published (``bgbench publish-metrics``). ``config_name`` and ``kwargs`` go to
    ``evaluate.load`` (e.g. ``load_metric("bg_gap", "with_ids")``).
    """
    import evaluate

    return evaluate.load(str(metric_dir(name)), config_name, **kwargs)


__all__ = ["METRIC_NAMES", "load_metric", "metric_dir", "packaged_metrics_dir"]
