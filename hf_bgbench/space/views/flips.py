"""The images behind a paired gap: which images a model gets right on one variant and wrong
on the other (BG-GAP: right on mixed_same, wrong on mixed_rand), and the reverse.

A paired gap of the benchmark (:class:`~hf_bgbench.scoring.PairedGap`: IN-9's BG-GAP,
ImageNet-E's DA per edit) is the accuracy on its first variant minus that on its second, over
the same images. Joined by image id, the ``evaluate`` run's per-image predictions split it:
gap = (images lost − images gained) / images, so the images lost are exactly what the gap
counts. Each is shown in the benchmark's reference variant (the original photo) and in the
two variants, with the model's prediction on each, and -- when the data records it
(``bg_id``/``bg_label``, as the Hub build of IN-9 does) -- the photo whose background was
pasted behind the object; when it does not (the authors' release names no background, and so
neither does its conversion), the summary says so (:func:`unrecorded_background`).

* :func:`flip_pairs` -- the benchmark's paired gaps, as choices;
* :func:`find_flips` -- the ids lost and gained, from the run's prediction tables;
* :func:`flip_rows` / :func:`flips_html` -- those images, side by side, as HTML.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

import numpy as np

from hf_bgbench.benchmarks import BenchmarkSpec, get_benchmark
from hf_bgbench.data.schema import BG_ID, BG_LABEL, ID, IMAGE
from hf_bgbench.data.sources import DataSourceError, Reader
from hf_bgbench.scoring import PairedGap
from hf_bgbench.space.views.images import class_name, data_uri, open_reader, thumbnail

SHOWN = 12  # images shown per direction (the counts cover them all)
PREDICTIONS = "predictions/"  # the folder of per-variant prediction tables a task declares


def predictions_task(spec: BenchmarkSpec) -> str:
    """The benchmark's first task that writes per-variant predictions (``evaluate``):
    the run whose predictions the flips are read from."""
    from hf_bgbench.tasks import get_task

    for name in spec.tasks:
        if PREDICTIONS in get_task(name).outputs:
            return name
    raise ValueError(f"No task of {spec.short_name} writes per-image predictions per variant.")


@dataclass(frozen=True)
class FlipPair:
    """A paired gap: accuracy on ``first`` minus accuracy on ``second``, same images."""

    name: str  # the metric's key (bg_gap)
    label: str  # how the page names it
    first: str  # mixed_same
    second: str  # mixed_rand


def flip_pairs(spec: BenchmarkSpec) -> list[FlipPair]:
    """The benchmark's paired gaps, its headline first (BG-GAP before IN-9's others)."""
    gaps = [m for m in spec.metrics if isinstance(m, PairedGap)]
    return [
        FlipPair(m.name, m.short or m.label, m.minuend, m.subtrahend)
        for m in sorted(gaps, key=lambda m: not m.headline)
    ]


def pair_named(spec: BenchmarkSpec, name: str | None) -> FlipPair:
    """The paired gap ``name`` of ``spec`` (its first when None); ValueError naming the
    choices otherwise."""
    pairs = flip_pairs(spec)
    if not pairs:
        raise ValueError(f"{spec.short_name} has no paired gap to explore image by image.")
    for pair in pairs:
        if name in (None, "", pair.name):
            return pair
    raise ValueError(
        f"{name!r} is not a paired gap of {spec.short_name}; pick one of "
        f"{', '.join(p.name for p in pairs)}."
    )


@dataclass
class Flips:
    """The images a gap counts: ``lost`` (right on ``first``, wrong on ``second``) and
    ``gained`` (the reverse), out of ``shared`` images both variants scored."""

    pair: FlipPair
    lost: list[str]
    gained: list[str]
    shared: int

    @property
    def gap(self) -> float:
        """The paired gap itself, in points: what the run's results report."""
        return 100 * (len(self.lost) - len(self.gained)) / self.shared if self.shared else 0.0


def find_flips(predictions: Mapping[str, Any], pair: FlipPair) -> Flips:
    """The flips of ``pair`` in an ``evaluate`` run's prediction tables (variant -> id, label,
    pred), joined by image id. ValueError when the run did not score both variants."""
    missing = [v for v in (pair.first, pair.second) if v not in predictions]
    if missing:
        raise ValueError(f"The run did not score {', '.join(missing)}; nothing to pair.")
    first, second = (predictions[v].set_index("id") for v in (pair.first, pair.second))
    shared = first.index.intersection(second.index).sort_values()
    right_first = first.loc[shared, "pred"] == first.loc[shared, "label"]
    right_second = second.loc[shared, "pred"] == second.loc[shared, "label"]
    lost = [str(i) for i in shared[right_first & ~right_second]]
    gained = [str(i) for i in shared[~right_first & right_second]]
    return Flips(pair, lost, gained, int(len(shared)))


@dataclass
class FlipCell:
    """One image of a flipped image's row: a variant (or the background's source photo)."""

    title: str
    image: np.ndarray
    caption: str
    correct: bool | None = None  # None: no prediction shown (the background's photo)


@dataclass
class FlipRow:
    image_id: str
    label: str
    cells: list[FlipCell] = field(default_factory=list)
    background: str = ""  # where the second variant's background came from, when recorded


def _index(ds: Any) -> dict[str, int]:
    return {str(i): n for n, i in enumerate(ds.select_columns([ID])[ID])}


def flip_rows(
    data: Reader | str | Path,
    benchmark: str,
    predictions: Mapping[str, Any],
    pair: FlipPair,
    ids: Sequence[str],
) -> list[FlipRow]:
    """A row per image of ``ids``: the reference variant (when the data holds it), the
    pair's two variants with the run's prediction on each, and the background's source
    photo when the data records it (``bg_id`` in the second variant)."""
    spec = get_benchmark(benchmark)
    reader = open_reader(data, spec)
    shown = [v for v in dict.fromkeys((spec.reference_variant, pair.first, pair.second)) if v]
    shown = [v for v in shown if v in reader.variants]
    loaded = {v: reader.load(v) for v in shown}
    where = {v: _index(ds) for v, ds in loaded.items()}
    tables = {v: predictions[v].set_index("id") for v in shown if v in predictions}
    rows = []
    for image_id in ids:
        row = None
        for variant in shown:
            at = where[variant].get(image_id)
            if at is None:
                continue
            item = loaded[variant][at]
            label = class_name(spec, int(item["label"]))
            row = row or FlipRow(image_id, label)
            cell = FlipCell(variant, thumbnail(item[IMAGE]), "", None)
            if variant in tables and image_id in tables[variant].index:
                predicted = class_name(spec, int(tables[variant].loc[image_id, "pred"]))
                cell.correct = predicted == label
                cell.caption = f"{'✓' if cell.correct else '✗'} {predicted}"
            row.cells.append(cell)
            if variant == pair.second and item.get(BG_ID):
                _add_background(row, item, spec, loaded, where)
        if row is None:
            raise DataSourceError(f"No variant of the data holds an image with id {image_id!r}.")
        rows.append(row)
    return rows


def _add_background(
    row: FlipRow, item: Mapping[str, Any], spec: BenchmarkSpec, loaded: Mapping, where: Mapping
) -> None:
    """The photo whose background ``item`` (a mixed image) shows, from the reference
    variant, and its class; only the class and id when the data does not hold that photo."""
    source, cls = str(item[BG_ID]), item.get(BG_LABEL)
    cls = -1 if cls is None else int(cls)
    named = class_name(spec, cls) if cls >= 0 else "unknown class"
    row.background = f"{named} · {source}"
    reference = spec.reference_variant
    at = where.get(reference, {}).get(source)
    if at is not None:
        picture = thumbnail(loaded[reference][at][IMAGE])
        row.cells.append(FlipCell("background from", picture, row.background))


def _cell_html(cell: FlipCell, size: int) -> str:
    colour = {True: "#1a7f37", False: "#cf222e", None: "inherit"}[cell.correct]
    return (
        f'<figure style="margin:0 6px 6px 0;flex:0 0 auto;width:{size}px">'
        f'<figcaption style="font-size:0.8em">{escape(cell.title)}</figcaption>'
        f'<img src="{data_uri(cell.image)}" width="{size}" height="{size}" '
        f'alt="{escape(cell.title)}: {escape(cell.caption)}" '
        'style="object-fit:contain;display:block;max-width:100%;height:auto">'
        f'<div style="color:{colour};font-size:0.85em;overflow-wrap:anywhere">'
        f"{escape(cell.caption)}</div></figure>"
    )


def flips_html(rows: Sequence[FlipRow], size: int = 112) -> str:
    """The rows as HTML: per image, its class and id, then its images side by side (they
    wrap on a narrow screen)."""
    out = []
    for row in rows:
        where = f" — background from {escape(row.background)}" if row.background else ""
        cells = "".join(_cell_html(c, size) for c in row.cells)
        out.append(
            f'<div class="bgbench-flip" data-id="{escape(row.image_id)}" style="margin:8px 0">'
            f"<div><b>{escape(row.label)}</b> · <code>{escape(row.image_id)}</code>{where}</div>"
            f'<div style="display:flex;flex-wrap:wrap;align-items:flex-start">{cells}</div></div>'
        )
    return "".join(out)


def flips_summary(flips: Flips, model_id: str) -> str:
    """One Markdown paragraph: how many images flip each way, and that this is the gap."""
    pair = flips.pair
    return (
        f"**{model_id}**, {pair.label} ({pair.first} − {pair.second}) = {flips.gap:.1f} points "
        f"over {flips.shared} images: right on {pair.first} and wrong on {pair.second} for "
        f"**{len(flips.lost)}** images, the reverse for **{len(flips.gained)}** "
        f"(({len(flips.lost)} − {len(flips.gained)}) / {flips.shared} is the gap)."
    )


def unrecorded_background(data: Reader | str | Path, benchmark: str, pair: FlipPair) -> str:
    """A sentence for the summary when ``pair``'s second variant shows another photo's
    background (the benchmark's layout names its rule) and the data does not record which
    photo (no ``bg_id``: the authors' release names none); empty otherwise."""
    spec = get_benchmark(benchmark)
    if spec.layout is None or pair.second not in spec.layout.backgrounds:
        return ""
    reader = open_reader(data, spec)
    if pair.second not in reader.variants or BG_ID in reader.load(pair.second).column_names:
        return ""
    return (
        f" This dataset does not record which photo each {pair.second} background was taken "
        f"from (no `{BG_ID}` column), so that photo is not shown."
    )


def flips_page(
    data: Reader | str | Path,
    benchmark: str,
    predictions: Mapping[str, Any],
    pair: FlipPair,
    model_id: str,
    shown: int = SHOWN,
) -> tuple[str, str]:
    """(the summary, the HTML of both directions, at most ``shown`` images each)."""
    flips = find_flips(predictions, pair)
    parts = []
    for ids, what in (
        (flips.lost, f"Right on {pair.first}, wrong on {pair.second}"),
        (flips.gained, f"Wrong on {pair.first}, right on {pair.second}"),
    ):
        count = f"{min(len(ids), shown)} of {len(ids)} shown" if len(ids) > shown else len(ids)
        parts.append(f'<h3 class="bgbench-flips-head">{escape(what)} ({count})</h3>')
        rows = flip_rows(data, benchmark, predictions, pair, ids[:shown])
        parts.append(flips_html(rows) or "<p>None.</p>")
    summary = flips_summary(flips, model_id) + unrecorded_background(data, benchmark, pair)
    return summary, "".join(parts)
