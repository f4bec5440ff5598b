"""What the Space shows beside the numbers: one image across its variants (or edits) with the
model's prediction and confidence on each, a few images per variant after a scoring run, and
the report with its paste-ready extras set apart.

Built on the public library only: the readers (:mod:`hf_bgbench.data.sources`) and the task
runner (:func:`hf_bgbench.tasks.runner.open_run`): an explored image is scored as the
benchmark's first task -- what the Score tab runs -- scores it, with the same protocol, head,
label map and input geometry (:func:`~hf_bgbench.inference.geometry.image_transform`).

* :func:`image_choices` -- the images a visitor can pick (the reference variant's);
* :func:`explore_image` -- run in the Space's job process: that image in every variant that
  holds it, with the prediction, its confidence and whether it is right;
* :func:`prediction_gallery` / :func:`samples_html` -- after an ``evaluate`` run: the same few
  seeded images in each scored variant with the true class and the prediction the run
  recorded, as a grid (a row per variant, a column per image);
* :func:`split_report` -- the report's LaTeX row and model-index block apart from the rest.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hf_bgbench.benchmarks import BenchmarkSpec, get_benchmark
from hf_bgbench.data.schema import ID, IMAGE, LABEL
from hf_bgbench.data.sources import DataSourceError, Reader, resolve_source

THUMBNAIL = 224  # longest side of an image shown in a gallery


@dataclass
class VariantPrediction:
    """One variant of the explored image and what the model says about it."""

    variant: str
    image: np.ndarray  # uint8 (H, W, 3), as the model saw it
    label: str  # true benchmark class
    prediction: str  # predicted benchmark class ("outside <benchmark>" for an unmapped class)
    model_class: str  # the model's own argmax class
    confidence: float  # probability of the predicted class (summed over its model classes)
    correct: bool

    @property
    def caption(self) -> str:
        mark = "✓" if self.correct else "✗"
        via = f" ({self.model_class})" if self.model_class != self.prediction else ""
        return f"{self.variant}: {mark} {self.prediction}{via} {100 * self.confidence:.0f}%"


def open_reader(data: Reader | str | Path, spec: BenchmarkSpec) -> Reader:
    """``data`` as a reader of ``spec``'s benchmark (a reader given stays as it is)."""
    return data if isinstance(data, Reader) else resolve_source(data, spec)


def class_name(spec: BenchmarkSpec, label: int) -> str:
    """The class name of ``label``, or a note that it lies outside the benchmark."""
    return spec.classes[label] if 0 <= label < spec.num_classes else f"outside {spec.name}"


def image_choices(data: Reader | str | Path, benchmark: str) -> list[tuple[str, str]]:
    """(shown label "class · id", id) of every image of the benchmark's reference variant
    (or the data's first variant), in dataset order."""
    spec = get_benchmark(benchmark)
    reader = open_reader(data, spec)
    variant = (
        spec.reference_variant if spec.reference_variant in reader.variants else reader.variants[0]
    )
    rows = reader.load(variant).select_columns([ID, LABEL])
    return [
        (f"{class_name(spec, int(y))} · {i}", str(i))
        for i, y in zip(rows[ID], rows[LABEL], strict=True)
    ]


def _row_index(ds: Any, image_id: str) -> int | None:
    ids = ds.select_columns([ID])[ID]
    try:
        return ids.index(image_id)
    except ValueError:
        return None


def explore_image(
    model: Any,
    benchmark: str,
    data: Reader | str | Path,
    image_id: str,
    *,
    variants: Sequence[str] | None = None,
    restrict_to_benchmark: bool = False,
    device: str | None = None,
) -> list[VariantPrediction]:
    """The image ``image_id`` in each of ``variants`` (default: all the data offers) that
    holds it, with ``model``'s prediction and confidence, scored as the benchmark's first
    task scores it (:func:`explored_run`). A DataSourceError if no variant holds the image."""
    import torch

    from hf_bgbench.data.loader import DecodedRows
    from hf_bgbench.inference.geometry import image_transform

    spec = get_benchmark(benchmark)
    reader = open_reader(data, spec)
    chosen = [v for v in (variants or reader.variants) if v in reader.variants]
    found: dict[str, tuple[Any, int]] = {}
    for variant in chosen:
        ds = reader.load(variant)
        index = _row_index(ds, image_id)
        if index is not None:
            found[variant] = (ds, index)
    if not found:
        raise DataSourceError(f"No variant of the data holds an image with id {image_id!r}.")
    run = explored_run(model, benchmark, reader, restrict_to_benchmark, device)
    step, mapper, classifier = run.step, run.mapper, run.classifier
    first_ds = next(iter(found.values()))[0]
    transform, _, _ = image_transform(step, spec, reader, first_ds, False, stretch=run.stretch)
    names = list(getattr(classifier.label_space, "names", ()))
    out = []
    for variant, (ds, index) in found.items():
        item = DecodedRows(ds, [index], image_transform=transform)[0]
        if item["error"] is not None:
            raise DataSourceError(f"{variant} image {image_id!r} cannot be read: {item['error']}")
        image, label = item[IMAGE], int(item[LABEL])
        logits = step.logits(image.unsqueeze(0)).float().cpu()
        pred, pred_model, _ = mapper(logits, torch.tensor([label]))
        predicted, model_index = int(pred[0]), int(pred_model[0])
        if predicted >= 0:  # P(predicted benchmark class): its model classes summed
            confidence = float(mapper(logits, torch.tensor([predicted]))[2][0])
        else:
            confidence = float(logits.softmax(dim=1)[0, model_index])
        out.append(
            VariantPrediction(
                variant=variant,
                image=image.permute(1, 2, 0).numpy().copy(),
                label=class_name(spec, label),
                prediction=class_name(spec, predicted),
                model_class=names[model_index] if model_index < len(names) else str(model_index),
                confidence=confidence,
                correct=predicted == label,
            )
        )
    return out


def explored_run(
    model: Any, benchmark: str, reader: Reader, restrict: bool, device: str | None
) -> Any:
    """The run that scores an explored image: the benchmark's first task (what the Score tab
    runs by default) set up by the runner, its published protocol's head and geometry."""
    from hf_bgbench.space.inputs import default_task
    from hf_bgbench.tasks import get_task
    from hf_bgbench.tasks.runner import open_run

    task = get_task(default_task(benchmark))
    return open_run(
        task,
        model,
        benchmark=benchmark,
        data=reader,
        restrict_to_benchmark=restrict,
        device=device,
        progress=False,
        num_workers=0,
    )


def explore_summary(shown: Sequence[VariantPrediction], model_id: str, image_id: str) -> str:
    """One Markdown paragraph: on how many variants ``model_id`` is right, and where wrong."""
    right = [v.variant for v in shown if v.correct]
    wrong = [f"{v.variant} ({v.prediction})" for v in shown if not v.correct]
    return (
        f"**{shown[0].label}** image `{image_id}`: {model_id} is right on {len(right)} of "
        f"{len(shown)} variants"
        + (f"; wrong on {', '.join(wrong)}." if wrong else ".")
        + " Confidence: the model's probability of the class it predicts."
    )


def thumbnail(image: Any) -> np.ndarray:
    """``image`` (PIL or array) as an RGB array at most ``THUMBNAIL`` pixels a side."""
    from PIL import Image

    picture = image if isinstance(image, Image.Image) else Image.fromarray(image)
    picture = picture.convert("RGB")
    picture.thumbnail((THUMBNAIL, THUMBNAIL))
    return np.asarray(picture)


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


def data_uri(image: np.ndarray) -> str:
    """``image`` as a PNG data URI, for an ``<img>`` in HTML."""
    import base64
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(image).save(buffer, format="JPEG", quality=85)
    return "data:image/jpeg;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


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
                f'alt="{escape(sample.caption)}" style="object-fit:contain;display:block">'
                f'<div style="color:{colour}">{"✓" if sample.correct else "✗"} '
                f"{escape(sample.prediction)}</div></td>"
            )
        rows.append(f"<tr><th>{escape(variant)}</th>{''.join(cells)}</tr>")
    # in a box that scrolls sideways: on a phone the grid is wider than the screen
    return (
        '<div class="bgbench-scroll" style="overflow-x:auto;max-width:100%">'
        '<table class="bgbench-samples" style="border-collapse:collapse;text-align:center">'
        f"<tr><th>variant</th>{head}</tr>{''.join(rows)}</table></div>"
    )


def read_predictions(folder: str | Path) -> dict[str, Any]:
    """The per-variant prediction tables ``evaluate`` wrote (``predictions/<variant>.parquet``)."""
    import pandas as pd

    folder = Path(folder)
    return {p.stem: pd.read_parquet(p) for p in sorted(folder.glob("*.parquet"))}


REPORT_EXTRAS = ("LaTeX row (columns:", "Model card (`model-index`")


def split_report(markdown: str) -> tuple[str, str]:
    """(the report a visitor reads, its paste-ready extras): the LaTeX row and the
    model-index block of :func:`hf_bgbench.render.render_markdown` moved out of the way, so
    the notes after them follow the tables. ``(markdown, "")`` when it has no extras."""
    starts = [markdown.find(marker) for marker in REPORT_EXTRAS if marker in markdown]
    if not starts:
        return markdown, ""
    start = min(starts)
    fence = markdown.find("```yaml", start)
    end = markdown.find("```\n", fence + len("```yaml")) if fence >= 0 else -1
    end = len(markdown) if end < 0 else end + len("```\n")
    return markdown[:start] + markdown[end:].lstrip("\n"), markdown[start:end].strip()
