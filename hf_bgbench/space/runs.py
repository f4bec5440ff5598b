"""The runs this Space process has finished, so that a comparison or the flip explorer reuses
a model's run instead of scoring it again.

A run is known by what decides its numbers: the task, the model, the allow-listed dataset
and the task's options as the Space passed them (the class restriction, the caps). The
variants are apart: a run that scored more variants than are asked for serves (its
per-image predictions hold those asked for). A folder that is gone (the Space keeps only
its newest run folders, :func:`hf_bgbench.space.settings.run_output_dir`) is forgotten.
Below that, the task's own prediction cache still spares the model's forward passes.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# options that say where or how a run happened, not what it measured
_PLACE = {"variants", "progress", "output_dir", "data", "device", "batch_size", "num_workers"}


@dataclass(frozen=True)
class FinishedRun:
    """A finished run: its folder and the results document the task returned."""

    folder: Path
    results: dict[str, Any]

    @property
    def variants(self) -> list[str]:
        return list(self.results.get("variants") or {})


def _key(task: str, model_id: str, dataset: str, options: Mapping[str, Any]) -> tuple:
    measured = tuple(sorted((k, repr(v)) for k, v in options.items() if k not in _PLACE))
    return (task, model_id, dataset, measured)


class FinishedRuns:
    """Finished runs by (task, model, dataset, options); thread-safe (Gradio's workers)."""

    def __init__(self) -> None:
        self._runs: dict[tuple, list[FinishedRun]] = {}
        self._lock = threading.Lock()

    def add(
        self,
        task: str,
        model_id: str,
        dataset: str,
        options: Mapping[str, Any],
        folder: Path,
        results: dict[str, Any],
    ) -> None:
        with self._lock:
            runs = self._runs.setdefault(_key(task, model_id, dataset, options), [])
            runs.insert(0, FinishedRun(Path(folder), results))

    def find(
        self,
        task: str,
        model_id: str,
        dataset: str,
        options: Mapping[str, Any],
        variants: Sequence[str] = (),
    ) -> FinishedRun | None:
        """The newest finished run of the same measurement that scored every one of
        ``variants`` and whose folder is still there; None when there is none."""
        with self._lock:
            runs = self._runs.get(_key(task, model_id, dataset, options), [])
            runs[:] = [r for r in runs if r.folder.is_dir()]
            for run in runs:
                if set(variants) <= set(run.variants):
                    return run
        return None
