"""The runs this Space process has finished, so that a comparison or the flip explorer reuses
a model's run instead of scoring it again.

A run is known by what decides its numbers: the task, the model, the allow-listed dataset
and the task's options as the Space passed them (the class restriction, the caps). The
variants are apart: a run that scored more variants than are asked for serves (its
per-image predictions hold those asked for); so does a run whose subset caps left no image
out, for a request whose caps would not either (a cap shared by the variants picked differs
with their number). A folder that is gone (the Space keeps only
its newest run folders, :func:`hf_bgbench.space.settings.run_output_dir`) is forgotten.
Below that, the task's own prediction cache still spares the model's forward passes.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hf_bgbench.space.views.leaderboard import SUBSET_IDS, cap_left_images_out, drawn_ids

# options that say where or how a run happened, not what it measured
_PLACE = {"variants", "progress", "output_dir", "data", "device", "batch_size", "num_workers"}


@dataclass(frozen=True)
class FinishedRun:
    """A finished run: its folder and the results document the task returned."""

    folder: Path
    results: dict[str, Any]
    uncut: Mapping[str, int] = field(default_factory=dict)  # caps that left nothing out

    @property
    def variants(self) -> list[str]:
        return list(self.results.get("variants") or {})


def _key(
    task: str, model_id: str, dataset: str, options: Mapping[str, Any], free: Iterable[str] = ()
) -> tuple:
    """What decides a run's numbers; the caps named in ``free`` count as no cap."""
    free = set(free)
    measured = tuple(
        sorted((k, repr(None if k in free else v)) for k, v in options.items() if k not in _PLACE)
    )
    return (task, model_id, dataset, measured)


def _uncut(options: Mapping[str, Any], results: Mapping[str, Any]) -> dict[str, int]:
    """The subset caps of a run that left no image out: cap -> how many images it drew
    (every one). Such a run is the full run, whatever its cap was (a cap shared by the
    variants picked differs with their number)."""
    uncut = {}
    for cap in SUBSET_IDS:
        drawn = drawn_ids(results, cap)
        if options.get(cap) is not None and drawn is not None:
            if not cap_left_images_out(results, cap, options[cap], results):
                uncut[cap] = len(drawn)
    return uncut


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
        uncut = _uncut(options, results)
        run = FinishedRun(Path(folder), results, uncut)
        with self._lock:
            self._runs.setdefault(_key(task, model_id, dataset, options), []).insert(0, run)
            if uncut:  # also known as the full run it is
                free = _key(task, model_id, dataset, options, uncut)
                self._runs.setdefault(free, []).insert(0, run)

    def find(
        self,
        task: str,
        model_id: str,
        dataset: str,
        options: Mapping[str, Any],
        variants: Sequence[str] = (),
    ) -> FinishedRun | None:
        """The newest finished run of the same measurement that scored every one of
        ``variants`` and whose folder is still there -- the same options, or a run whose caps
        left no image out when these caps would not either; None when there is none."""
        caps = [c for c in SUBSET_IDS if options.get(c) is not None]
        exact = _key(task, model_id, dataset, options)
        free = _key(task, model_id, dataset, options, caps)
        with self._lock:
            for key in dict.fromkeys([exact, free]):
                runs = self._runs.get(key, [])
                runs[:] = [r for r in runs if r.folder.is_dir()]
                for run in runs:
                    covered = key == exact or all(
                        c in run.uncut and options[c] >= run.uncut[c] for c in caps
                    )
                    if covered and set(variants) <= set(run.variants):
                        return run
        return None
