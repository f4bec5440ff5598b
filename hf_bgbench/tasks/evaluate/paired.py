"""The ``evaluate`` task's per-image values, for ``bgbench publish-results`` (its splits)
and ``bgbench compare`` (what it resamples): ``predictions/<variant>.parquet`` ->
``accuracy/<variant>`` = correct (0/1); each paired gap of the spec (BG-GAP, a DA per edit)
= the difference of two variants' correctness on the same image; a mean drop (mean DA) =
reference correctness minus the mean correctness over the averaged variants."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from hf_bgbench.benchmarks import get_benchmark
from hf_bgbench.scoring import MeanDrop, PairedGap
from hf_bgbench.tasks.per_image import read_per_image


def per_image_files(doc: Mapping[str, Any]) -> dict[str, str]:
    """One split per variant scored: ``predictions/<variant>.parquet``."""
    return {v: f"predictions/{v}.parquet" for v in doc.get("variants", {})}


def paired_values(doc: Mapping[str, Any], folder: Path) -> dict[str, pd.Series]:
    """Score key -> per-image values of the evaluate run in ``folder``."""
    correct: dict[str, pd.Series] = {}
    for variant, rel in per_image_files(doc).items():
        frame = read_per_image(folder / rel).set_index("id")
        correct[variant] = (frame["pred"] == frame["label"]).astype(float)
    out = {f"accuracy/{v}": c for v, c in correct.items()}
    spec = get_benchmark(doc["benchmark"])
    for metric in spec.metrics:
        if isinstance(metric, PairedGap) and {metric.minuend, metric.subtrahend} <= set(correct):
            a, b = correct[metric.minuend], correct[metric.subtrahend]
            shared = a.index.intersection(b.index)
            out[metric.name] = a[shared] - b[shared]
        elif isinstance(metric, MeanDrop) and metric.reference in correct:
            averaged = [v for v in doc.get(f"{metric.name}_variants", []) if v in correct]
            if averaged:
                table = pd.concat(
                    [correct[metric.reference], *(correct[v] for v in averaged)],
                    axis=1,
                    join="inner",
                )
                out[metric.name] = table.iloc[:, 0] - table.iloc[:, 1:].mean(axis=1)
    return out
