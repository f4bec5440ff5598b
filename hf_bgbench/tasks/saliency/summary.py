"""What a saliency run computes and keeps: the numbers (overall, per predicted class, per
attribute, with bootstrap intervals), the per-image Parquet file and the gallery of the images
whose saliency sits most on the background; its report section is built from the numbers by
:mod:`hf_bgbench.tasks.saliency.report`.

The headline numbers follow the protocol's ``aggregation``. ``class-mean``, the RIVAL10
authors' (``saliency_alignment_plots.py``, ``gen_heatmap``;
:func:`hf_bgbench.metrics.classification.class_mean`): images grouped by the model's *predicted*
class, a NaN-skipping mean per class, then the unweighted mean over the classes that have a
defined value (``n_classes`` of them; a class never predicted is left out, as is an image
predicted outside the benchmark's classes); the plain mean over images is kept as
``<score>_image_mean``. ``image-pooled`` (bgbench-v1): the mean over images, the class mean
kept as ``<score>_class_mean``."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from hf_bgbench.data.loader import DataError, Geometry
from hf_bgbench.data.masks import attribute_masks
from hf_bgbench.metrics.classification import class_mean
from hf_bgbench.metrics.intervals import resampling_gap
from hf_bgbench.metrics.saliency import (
    bootstrap_mean_interval,
    class_mean_gap,
    class_mean_interval,
    saliency_fraction_inside,
)
from hf_bgbench.results import WITHHELD

SCORES = {  # result key (and per-image Parquet column) -> per-image key of the run
    "delta_density": "delta",
    "saliency_fraction_inside": "inside",
    "saliency_iou": "iou",
    "saliency_average_precision": "ap",
    "saliency_recall_25": "coverage_25",
    "saliency_recall_50": "coverage_50",
    "saliency_recall_75": "coverage_75",
}
MAIN_SCORES = tuple(SCORES)[:5]  # the authors' five plotted scores; recall at 25 % only
RESULT_KEYS = [  # what a reader wants first in saliency.json (after the header)
    "target",
    "method",
    *(k for key in MAIN_SCORES for k in (key, f"{key}_ci95")),
    "n_classes",
    "n_images",
]
AGGREGATIONS = ("class-mean", "image-pooled")  # what the headline numbers are
SUFFIX = {"class-mean": "class_mean", "image-pooled": "image_mean"}  # of the secondary one


def attribute_shares(
    row: Any, saliency: np.ndarray, geometry: Geometry | None, image_id: str
) -> dict[str, dict[str, float]]:
    """{attribute: {"share": share of the saliency on its mask, "area": mask area}} of one
    image, from its ``attribute_masks`` entries (masks resized like the image; empty masks
    are left out)."""
    names, masks = attribute_masks(row, geometry)
    if names and masks.shape[1:] != saliency.shape:
        raise DataError(
            f"image {image_id!r}: the attribute masks are {masks.shape[1]}x{masks.shape[2]} "
            f"but the image is {saliency.shape[0]}x{saliency.shape[1]}; attribute masks must "
            "have their image's size."
        )
    return {
        name: {
            "share": float(saliency_fraction_inside(saliency, binary)),
            "area": float(binary.mean()),
        }
        for name, binary in zip(names, masks, strict=True)
    }


def _mean(values: np.ndarray) -> float | None:
    valid = values[~np.isnan(values)]
    return float(valid.mean()) if valid.size else None


def _stats(values: np.ndarray, seed: int, resamples: int) -> dict[str, Any]:
    bounds = bootstrap_mean_interval(values, n_resamples=resamples, seed=seed)
    return {
        "mean": _mean(values),
        "ci95": list(bounds) if bounds else None,
        "n": int((~np.isnan(values)).sum()),
    }


def _value(x: float) -> float | None:
    return None if np.isnan(x) else float(x)


def summarize(
    spec: Any,
    out: Mapping[str, Any],
    *,
    seed: int,
    resamples: int,
    aggregation: str = "class-mean",
) -> dict[str, Any]:
    """The run's numbers: every score aggregated both ways, with seeded bootstrap
    intervals -- over predicted classes (:func:`~hf_bgbench.metrics.classification.class_mean`:
    per class a NaN-skipping mean, then the mean over the classes) and over images --
    ``aggregation`` (:data:`AGGREGATIONS`) naming the headline ``<score>``, the other
    kept as ``<score>_image_mean`` or ``<score>_class_mean``; per predicted class and, when
    the data has attribute masks, per attribute."""
    if aggregation not in AGGREGATIONS:
        raise ValueError(f"aggregation {aggregation!r}: use one of {', '.join(AGGREGATIONS)}.")
    labels = np.asarray(out["labels"], np.int64)
    pred = np.asarray(out["pred"], np.int64)  # -1: a model class outside the benchmark
    values = {key: np.asarray(out[src], float) for key, src in SCORES.items()}
    area = np.asarray(out["mask_area"], float)
    body: dict[str, Any] = {"n_images": len(labels), "aggregation": aggregation}
    by_class: dict[str, np.ndarray] = {}
    withheld: dict[str, str] = {}
    for key, vals in values.items():
        numbers, gaps, by_class[key] = _aggregated(
            key, vals, pred, spec.classes, aggregation=aggregation, seed=seed, resamples=resamples
        )
        body |= numbers
        withheld |= gaps
    body["n_classes"] = {key: int((~np.isnan(means)).sum()) for key, means in by_class.items()}
    if withheld:
        body[WITHHELD] = withheld
    body |= _counts(labels, pred, values, area)
    body["per_predicted_class"] = _per_predicted_class(
        spec.classes, labels, pred, values, area, by_class, seed=seed, resamples=resamples
    )
    if out["attributes"]:
        body["per_attribute"] = _per_attribute(out["attributes"], seed, resamples)
    body["gallery_ids"] = [item["id"] for item in out["gallery"]]
    return body


def _aggregated(
    key: str,
    vals: np.ndarray,
    pred: np.ndarray,
    classes: Sequence[str],
    *,
    aggregation: str,
    seed: int,
    resamples: int,
) -> tuple[dict[str, Any], dict[str, str], np.ndarray]:
    """One score both ways: its values and intervals (headline and secondary), why an
    interval is withheld, and its per-class means."""
    num_classes = len(classes)
    per_class, overall = class_mean(vals, pred, num_classes)
    bounds = class_mean_interval(vals, pred, num_classes, n_resamples=resamples, seed=seed)
    pooled = _stats(vals, seed, resamples)
    both = {
        "class-mean": (_value(overall), list(bounds) if bounds else None),
        "image-pooled": (pooled["mean"], pooled["ci95"]),
    }
    gaps = {
        "class-mean": class_mean_gap(vals, pred, num_classes, classes),
        "image-pooled": resampling_gap(vals[~np.isnan(vals)]),
    }
    numbers: dict[str, Any] = {}
    withheld: dict[str, str] = {}
    for name, (value, ci) in both.items():
        where = key if name == aggregation else f"{key}_{SUFFIX[name]}"
        numbers[where], numbers[f"{where}_ci95"] = value, ci
        if value is not None and gaps[name]:
            withheld[where] = gaps[name]
    return numbers, withheld, per_class


def _counts(
    labels: np.ndarray, pred: np.ndarray, values: Mapping[str, np.ndarray], area: np.ndarray
) -> dict[str, Any]:
    """The images counted (predicted classes, scored, undefined, predicted outside the
    benchmark), the mean mask area and the accuracy."""
    return {
        "n_predicted_classes": int(np.unique(pred[pred >= 0]).size),
        "n_scored": {key: int((~np.isnan(v) & (pred >= 0)).sum()) for key, v in values.items()},
        "n_undefined": {key: int(np.isnan(v).sum()) for key, v in values.items()},
        "n_predicted_outside_benchmark": int((pred < 0).sum()),
        "mask_area": _mean(area),
        "accuracy": float((pred == labels).mean()),
    }


def _per_predicted_class(
    classes: Sequence[str],
    labels: np.ndarray,
    pred: np.ndarray,
    values: Mapping[str, np.ndarray],
    area: np.ndarray,
    by_class: Mapping[str, np.ndarray],
    *,
    seed: int,
    resamples: int,
) -> dict[str, dict[str, Any]]:
    """Per predicted class: its images, how many are right, its mean mask area and each
    score's class mean with a bootstrap interval over the class's images."""
    per_class = {}
    for c, name in enumerate(classes):
        rows = pred == c
        entry: dict[str, Any] = {
            "n": int(rows.sum()),
            "n_correct": int((rows & (labels == c)).sum()),
            "mask_area": _mean(area[rows]),
        }
        for key, vals in values.items():
            entry[key] = _value(by_class[key][c])
            bounds = bootstrap_mean_interval(vals[rows], n_resamples=resamples, seed=seed)
            entry[f"{key}_ci95"] = list(bounds) if bounds else None
        per_class[name] = entry
    return per_class


def _per_attribute(rows: list[dict[str, dict[str, float]]], seed: int, resamples: int) -> dict:
    names = sorted({a for row in rows for a in row})
    result = {}
    for name in names:
        shares = np.array([row[name]["share"] for row in rows if name in row], float)
        areas = np.array([row[name]["area"] for row in rows if name in row], float)
        stats = _stats(shares, seed, resamples)
        result[name] = {
            "n": len(shares),
            "share_inside": stats["mean"],
            "share_inside_ci95": stats["ci95"],
            "mask_area": _mean(areas),
        }
    return result


def write_saliency_files(
    out: Mapping[str, Any], spec: Any, classifier: Any, body: Mapping[str, Any]
) -> dict[str, Callable[[Path], None]]:
    """Writers of saliency_per_image.parquet and saliency_gallery.png."""
    frame = _per_image_frame(out, classifier)
    writers: dict[str, Callable[[Path], None]] = {
        "saliency_per_image.parquet": lambda path: frame.to_parquet(path, index=False)
    }
    if out["gallery"]:
        from hf_bgbench.tasks.saliency.gallery import draw_gallery

        title = f"{body['model']}: lowest delta density ({body['method']}, {body['target']} class)"
        writers["saliency_gallery.png"] = lambda path: draw_gallery(
            out["gallery"], spec.classes, lambda c: _name(classifier, c), title, path
        )
    return writers


def _per_image_frame(out: Mapping[str, Any], classifier: Any) -> pd.DataFrame:
    """The per-image table: ids, labels, targets, predictions, every score and the mask
    area, plus each image's attribute shares when the data has attribute masks."""
    frame = pd.DataFrame(
        {
            "id": out["ids"],
            "label": np.asarray(out["labels"], np.int64),
            "target_class": np.asarray(out["target_class"], np.int64),
            "target_class_name": [_name(classifier, c) for c in out["target_class"]],
            "pred": np.asarray(out["pred"], np.int64),
            "pred_model": np.asarray(out["pred_model"], np.int64),
            "prob_true": np.asarray(out["prob_true"], float),
            **{key: np.asarray(out[src], float) for key, src in SCORES.items()},
            "mask_area": np.asarray(out["mask_area"], float),
        }
    )
    if out["attributes"]:
        frame["attribute_shares"] = [
            [{"attribute": a, **v} for a, v in sorted(row.items())] for row in out["attributes"]
        ]
    return frame


def _name(classifier: Any, index: int) -> str:
    names = getattr(getattr(classifier, "label_space", None), "names", ())
    return str(names[index]) if 0 <= index < len(names) else str(index)
