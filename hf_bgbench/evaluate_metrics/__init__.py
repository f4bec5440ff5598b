"""The four ``evaluate`` metric modules: ``bg_gap``, ``bg_challenge``, ``rfs`` and
``dropped_accuracy``.

They are generated from the installed package on first use (into the bgbench cache, keyed
by the content, so a new core never meets an old module) and load offline::

    import hf_bgbench

    bg_gap = hf_bgbench.load_metric("bg_gap")  # = evaluate.load("bgbench/bg_gap") once published

Each module is *generated* from the metric core (:mod:`hf_bgbench.metrics`) by
:mod:`hf_bgbench.evaluate_metrics.generate`, which inlines the core's numpy functions, so the
modules are self-contained (numpy and evaluate only) and cannot disagree with the core; the
benchmark facts (citation, variant names, class count) are written in from the spec of the
benchmark that lists the metric (:mod:`hf_bgbench.evaluate_metrics.facts`), so they cannot
disagree with the registry.
``bgbench publish-metrics`` publishes them as Spaces.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hf_bgbench.evaluate_metrics.wrappers import METRIC_NAMES


def metric_dir(name: str) -> Path:
    """A folder holding the generated metric ``name`` (``<name>.py``, ``README.md``, ...):
    ``<cache root>/evaluate_metrics/<content hash>/<name>`` (``evaluate.load`` wants the
    folder named as the module), written once."""
    import hashlib
    import os
    import tempfile

    from hf_bgbench.cache import cache_root
    from hf_bgbench.evaluate_metrics.generate import metric_files

    files = metric_files(name)  # raises a ValueError naming the metrics for an unknown name
    digest = hashlib.sha256(
        "".join(f"{k}\0{v}\0" for k, v in sorted(files.items())).encode()
    ).hexdigest()[:16]
    root = cache_root() / "evaluate_metrics" / digest
    folder = root / name
    if not folder.is_dir():
        root.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=root))
        for file_name, text in files.items():
            (staging / file_name).write_bytes(text.encode("utf-8"))
        try:
            os.replace(staging, folder)
        except OSError:  # another process finished first: its folder is identical
            import shutil

            shutil.rmtree(staging, ignore_errors=True)
    return folder


def load_metric(name: str, config_name: str | None = None, **kwargs: Any) -> Any:
    """``evaluate.load`` of the generated metric module ``name``: works offline, with the
    same module that ``evaluate.load("bgbench/<name>")`` fetches once the Spaces are
    published (``bgbench publish-metrics``). ``config_name`` and ``kwargs`` go to
    ``evaluate.load`` (e.g. ``load_metric("bg_gap", "with_ids")``).
    """
    import evaluate

    return evaluate.load(str(metric_dir(name)), config_name, **kwargs)


__all__ = ["METRIC_NAMES", "load_metric", "metric_dir"]
