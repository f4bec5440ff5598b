"""One image across its variants (or edits) with the model's prediction and confidence on
each: the Explore tab's result.

Built on the public library only: the readers (:mod:`hf_bgbench.data.sources`) and the task
runner (:func:`hf_bgbench.tasks.runner.open_run`): an explored image is scored as the
benchmark's first task -- what the Score tab runs -- scores it, with the same protocol, head,
label map and input geometry (:func:`~hf_bgbench.inference.geometry.image_transform`).

* :func:`image_choices` -- the images a visitor can pick (the reference variant's), every
  one of them; :func:`image_classes` and :func:`images_of_class` narrow the list to a class;
* :func:`explore_image` -- run in the Space's job process: that image in every variant that
  holds it, with the prediction, its confidence and whether it is right;
* :func:`explore_summary` -- on how many variants the model is right, in one paragraph.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hf_bgbench.benchmarks import BenchmarkSpec, get_benchmark
from hf_bgbench.data.schema import ID, IMAGE, LABEL
from hf_bgbench.data.sources import DataSourceError, Reader
from hf_bgbench.space.views.images import class_name, open_reader


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
        (f"{class_name(spec, int(y))}{_SEPARATOR}{i}", str(i))
        for i, y in zip(rows[ID], rows[LABEL], strict=True)
    ]


EVERY_CLASS = "every class"
"""The class filter's first choice: no filter, every image listed."""
_SEPARATOR = " · "  # between the class and the id in a choice's label


def image_classes(choices: Sequence[tuple[str, str]]) -> list[str]:
    """The classes of ``choices`` (:func:`image_choices`), in their order of first
    appearance: the class filter's choices after :data:`EVERY_CLASS`."""
    return list(dict.fromkeys(label.split(_SEPARATOR, 1)[0] for label, _ in choices))


def images_of_class(choices: Sequence[tuple[str, str]], name: str | None) -> list[tuple[str, str]]:
    """The choices of class ``name`` (all of them for :data:`EVERY_CLASS` or no name), in
    their order; ValueError for a class none of them has."""
    if not name or name == EVERY_CLASS:
        return list(choices)
    shown = [c for c in choices if c[0].split(_SEPARATOR, 1)[0] == name]
    if not shown:
        raise ValueError(f"No image of class {name!r} in this dataset; pick a class from the list.")
    return shown


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
    from hf_bgbench.data.loader import DecodedRows
    from hf_bgbench.inference.geometry import image_transform

    spec = get_benchmark(benchmark)
    reader = open_reader(data, spec)
    chosen = [v for v in (variants or reader.variants) if v in reader.variants]
    found = _rows_holding(reader, chosen, image_id)
    run = explored_run(model, benchmark, reader, restrict_to_benchmark, device)
    first_ds = next(iter(found.values()))[0]
    transform, _, _ = image_transform(run.step, spec, reader, first_ds, False, stretch=run.stretch)
    out = []
    for variant, (ds, index) in found.items():
        item = DecodedRows(ds, [index], image_transform=transform)[0]
        if item["error"] is not None:
            raise DataSourceError(f"{variant} image {image_id!r} cannot be read: {item['error']}")
        out.append(_variant_prediction(run, spec, variant, item))
    return out


def _rows_holding(reader: Reader, variants: Sequence[str], image_id: str) -> dict[str, Any]:
    """Variant -> (its rows, the index of ``image_id`` in them), for each of ``variants``
    that holds the image; a DataSourceError when none does."""
    found: dict[str, tuple[Any, int]] = {}
    for variant in variants:
        ds = reader.load(variant)
        index = _row_index(ds, image_id)
        if index is not None:
            found[variant] = (ds, index)
    if not found:
        raise DataSourceError(f"No variant of the data holds an image with id {image_id!r}.")
    return found


def _variant_prediction(
    run: Any, spec: BenchmarkSpec, variant: str, item: dict[str, Any]
) -> VariantPrediction:
    """What ``run``'s model says of one decoded image (``item``) of ``variant``: its
    prediction among the benchmark's classes, its own class and the confidence."""
    import torch

    step, mapper = run.step, run.mapper
    names = list(getattr(run.classifier.label_space, "names", ()))
    image, label = item[IMAGE], int(item[LABEL])
    logits = step.logits(image.unsqueeze(0)).float().cpu()
    pred, pred_model, _ = mapper(logits, torch.tensor([label]))
    predicted, model_index = int(pred[0]), int(pred_model[0])
    if predicted >= 0:  # P(predicted benchmark class): its model classes summed
        confidence = float(mapper(logits, torch.tensor([predicted]))[2][0])
    else:
        confidence = float(logits.softmax(dim=1)[0, model_index])
    return VariantPrediction(
        variant=variant,
        image=image.permute(1, 2, 0).numpy().copy(),
        label=class_name(spec, label),
        prediction=class_name(spec, predicted),
        model_class=names[model_index] if model_index < len(names) else str(model_index),
        confidence=confidence,
        correct=predicted == label,
    )


def explored_run(
    model: Any, benchmark: str, reader: Reader, restrict: bool, device: str | None
) -> Any:
    """The run that scores an explored image: the benchmark's first task (what the Score tab
    runs by default) set up by the runner, its published protocol's head and geometry."""
    from hf_bgbench.space.checks.inputs import default_task
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
