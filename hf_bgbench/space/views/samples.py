"""A few images per variant after a scoring run: the same seeded images in each scored
variant with the true class and the prediction the run recorded (:func:`prediction_gallery`),
as a grid -- a row per variant, a column per image (:func:`samples_html`) -- read from the
run's per-variant prediction tables (:func:`read_predictions`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hf_bgbench.benchmarks import get_benchmark
from hf_bgbench.data.schema import ID, IMAGE
from hf_bgbench.data.sources import Reader
from hf_bgbench.space.views.images import class_name, data_uri, open_reader, thumbnail


@dataclass
class PredictionSample:
    """One image of one variant with the prediction a scoring run recorded for it."""

    variant: str
    image_id: str
    image: np.ndarray  # uint8 thumbnail (H, W, 3)
    label: str  # true benchmark class
    prediction: str  # predicted benchmark class ("outside <benchmark>" for an unmapped class)

    @property
    def correct(self) -> bool:
        return self.prediction == self.label

    @property
    def caption(self) -> str:
        if self.correct:
            return f"{self.variant}: ✓ {self.prediction}"
        return f"{self.variant}: ✗ {self.prediction} (true {self.label})"


def prediction_gallery(
    data: Reader | str | Path,
    benchmark: str,
    predictions: Mapping[str, Any],
    *,
    per_variant: int = 6,
    seed: int = 0,
) -> list[PredictionSample]:
    """``per_variant`` images of each variant of ``predictions`` (variant -> the run's
    prediction table: id, label, pred), variant after variant, in the benchmark's variant
    order. The same images in every variant (drawn with ``seed`` among the ids all of them
    scored), so a grid of ``per_variant`` columns has a row per variant, a column per image."""
    spec = get_benchmark(benchmark)
    reader = open_reader(data, spec)
    order = {v: i for i, v in enumerate(spec.variants)}
    tables = {
        v: predictions[v].set_index("id")
        for v in sorted(predictions, key=lambda v: order.get(v, len(order)))
        if len(predictions[v])
    }
    if not tables:
        return []
    shared = sorted(set.intersection(*(set(t.index) for t in tables.values())))
    rng = np.random.default_rng(seed)
    picked = [shared[i] for i in sorted(rng.permutation(len(shared))[:per_variant])]
    samples = []
    for variant, table in tables.items():
        ds = reader.load(variant)
        where = {image_id: i for i, image_id in enumerate(ds.select_columns([ID])[ID])}
        for image_id in picked:
            if image_id in where:
                row = table.loc[image_id]
                samples.append(
                    PredictionSample(
                        variant=variant,
                        image_id=str(image_id),
                        image=thumbnail(ds[where[image_id]][IMAGE]),
                        label=class_name(spec, int(row["label"])),
                        prediction=class_name(spec, int(row["pred"])),
                    )
                )
    return samples


def samples_html(samples: Sequence[PredictionSample], size: int = 120) -> str:
    """The samples as an HTML grid: a row per variant (named on the left), a column per
    image (its true class on top), each cell the image and ✓/✗ with the prediction."""
    from html import escape

    if not samples:
        return ""
    variants = list(dict.fromkeys(s.variant for s in samples))
    columns = list(dict.fromkeys(s.image_id for s in samples))
    cell = {(s.variant, s.image_id): s for s in samples}
    truth = {s.image_id: s.label for s in samples}
    head = "".join(f'<th title="{escape(i)}">true: {escape(truth[i])}</th>' for i in columns)
    rows = []
    for variant in variants:
        cells = []
        for image_id in columns:
            sample = cell.get((variant, image_id))
            if sample is None:
                cells.append("<td></td>")
                continue
            colour = "#1a7f37" if sample.correct else "#cf222e"
            cells.append(
                f'<td><img src="{data_uri(sample.image)}" width="{size}" height="{size}" '
                f'alt="{escape(sample.caption)}" style="object-fit:contain;display:block;'
                # at their own size on a phone too: the grid scrolls sideways instead
                f'width:{size}px;height:{size}px;max-width:none">'
                f'<div style="color:{colour}">{"✓" if sample.correct else "✗"} '
                f"{escape(sample.prediction)}</div></td>"
            )
        rows.append(f"<tr><th>{escape(variant)}</th>{''.join(cells)}</tr>")
    # in a box that scrolls sideways: on a phone the grid is wider than the screen
    return (
        '<div class="bgbench-scroll" style="overflow-x:auto;max-width:100%">'
        '<table class="bgbench-samples" '
        'style="border-collapse:collapse;text-align:center;width:max-content">'
        f"<tr><th>variant</th>{head}</tr>{''.join(rows)}</table></div>"
    )


def read_predictions(folder: str | Path) -> dict[str, Any]:
    """The per-variant prediction tables ``evaluate`` wrote (``predictions/<variant>.parquet``)."""
    import pandas as pd

    folder = Path(folder)
    return {p.stem: pd.read_parquet(p) for p in sorted(folder.glob("*.parquet"))}
