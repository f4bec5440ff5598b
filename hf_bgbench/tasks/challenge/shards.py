"""The Backgrounds Challenge over several processes: each takes a contiguous share of the
foregrounds against every background (:mod:`hf_bgbench.inference.distributed`), and the shares'
outputs become one, as one process would have produced them.

Verdicts, clean predictions, full-matrix rows and everything computed from them are those of
one process: a foreground's verdict depends on it and the backgrounds only. In early stop
each process orders the backgrounds by the fooling counts *it* has seen, so the composites
spent and the fooling background recorded for a vulnerable foreground (the first found in
the schedule, not in dataset order) may differ from a one-process run's; the verdicts may not.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

# Per-foreground lists, concatenated in process order (= foreground order).
PER_FOREGROUND = (
    "ids",
    "labels",
    "clean_pred",
    "vulnerable",
    "first_bg",
    "first_pred",
    "composites_per_fg",
    "rows",
    "skipped",
)
# Counts of work done, summed over processes.
SUMMED = (
    "composites",
    "composites_computed",
    "clean_forwards",
    "rows_computed",
    "rows_reused",
)
# What every process reads alike: the backgrounds.
SHARED = ("bg_ids", "bg_skipped")


def merge_shards(outs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One output of :func:`~hf_bgbench.tasks.challenge.run.run_pairs` from the outputs of
    consecutive shares of the foregrounds (one per process, in process order)."""
    if len(outs) == 1:
        return outs[0]
    first = outs[0]
    for other in outs[1:]:
        for key in SHARED:
            if other[key] != first[key]:
                raise RuntimeError(
                    f"the processes read different backgrounds ({key} differ); every process "
                    "must see the same data -- run them on one machine or on a shared folder."
                )
    merged: dict[str, Any] = {key: [v for out in outs for v in out[key]] for key in PER_FOREGROUND}
    merged.update({key: int(sum(out[key] for out in outs)) for key in SUMMED})
    merged.update({key: first[key] for key in SHARED})
    merged["bg_labels"] = np.asarray(first["bg_labels"], np.int64)
    merged["decode_seconds"] = max(out["decode_seconds"] for out in outs)
    merged["chunks"] = max(out["chunks"] for out in outs)  # free memory may differ per device
    return merged


def merge_memory(peaks: Sequence[dict[str, float | None]]) -> dict[str, Any]:
    """The largest peak of each kind over the processes (each holds every background), and
    how many processes there were."""
    merged: dict[str, Any] = {}
    for key in peaks[0]:
        values = [p[key] for p in peaks if p.get(key) is not None]
        merged[key] = max(values) if values else None
    merged["processes"] = len(peaks)
    return merged
