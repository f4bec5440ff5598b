"""What a saliency run reports and keeps: the numbers (overall, per predicted class, per
attribute, with bootstrap intervals), its report section (rendered by :mod:`hf_bgbench.render`
like every task), the per-image Parquet file and the gallery of the images whose saliency
sits most on the background.

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
from hf_bgbench.formatting import interval, number, pct
from hf_bgbench.metrics.classification import class_mean
from hf_bgbench.metrics.intervals import resampling_gap
from hf_bgbench.metrics.saliency import (
    bootstrap_mean_interval,
    class_mean_gap,
    class_mean_interval,
    saliency_fraction_inside,
)
from hf_bgbench.results import WITHHELD, Figure, Report, Score, Table

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
HEADINGS = {
    "class-mean": "mean over predicted classes of the per-class means",
    "image-pooled": "mean over images",
}


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
    num_classes = len(spec.classes)
    values = {key: np.asarray(out[src], float) for key, src in SCORES.items()}
    area = np.asarray(out["mask_area"], float)
    body: dict[str, Any] = {"n_images": len(labels), "aggregation": aggregation}
    by_class: dict[str, np.ndarray] = {}
    n_classes: dict[str, int] = {}
    withheld: dict[str, str] = {}
    for key, vals in values.items():
        by_class[key], overall = class_mean(vals, pred, num_classes)
        bounds = class_mean_interval(vals, pred, num_classes, n_resamples=resamples, seed=seed)
        pooled = _stats(vals, seed, resamples)
        both = {
            "class-mean": (_value(overall), list(bounds) if bounds else None),
            "image-pooled": (pooled["mean"], pooled["ci95"]),
        }
        gaps = {
            "class-mean": class_mean_gap(vals, pred, num_classes, spec.classes),
            "image-pooled": resampling_gap(vals[~np.isnan(vals)]),
        }
        for name, (value, ci) in both.items():
            where = key if name == aggregation else f"{key}_{SUFFIX[name]}"
            body[where], body[f"{where}_ci95"] = value, ci
            if value is not None and gaps[name]:
                withheld[where] = gaps[name]
        n_classes[key] = int((~np.isnan(by_class[key])).sum())
    body["n_classes"] = n_classes
    if withheld:
        body[WITHHELD] = withheld
    body["n_predicted_classes"] = int(np.unique(pred[pred >= 0]).size)
    body["n_scored"] = {key: int((~np.isnan(v) & (pred >= 0)).sum()) for key, v in values.items()}
    body["n_undefined"] = {key: int(np.isnan(v).sum()) for key, v in values.items()}
    body["n_predicted_outside_benchmark"] = int((pred < 0).sum())
    body["mask_area"] = _mean(area)
    body["accuracy"] = float((pred == labels).mean())
    per_class = {}
    for c, name in enumerate(spec.classes):
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
    body["per_predicted_class"] = per_class
    if out["attributes"]:
        body["per_attribute"] = _per_attribute(out["attributes"], seed, resamples)
    body["gallery_ids"] = [item["id"] for item in out["gallery"]]
    return body


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


LABELS = {  # result key -> (label, short column name, unit)
    "delta_density": ("Delta density (object − background)", "ΔDensity", ""),
    "saliency_fraction_inside": ("Saliency inside the object mask", "Inside (%)", "%"),
    "saliency_iou": ("IoU of saliency (≥ 0.5 of max) and mask", "IoU (%)", "%"),
    "saliency_average_precision": ("Average precision of saliency for the mask", "AP (%)", "%"),
    "saliency_recall_25": (
        "Saliency recall (mask coverage at 25% of saliency)",
        "Recall@25 (%)",
        "%",
    ),
    "saliency_recall_50": ("Mask coverage at 50% of saliency", "Recall@50 (%)", "%"),
    "saliency_recall_75": ("Mask coverage at 75% of saliency", "Recall@75 (%)", "%"),
}
DESCRIPTIONS = {
    "delta_density": "(mean max-normalised Grad-CAM saliency on the object minus on the "
    "background, in [-1, 1]; low or negative: the model looks at the background).",
    "saliency_fraction_inside": "(share of the saliency on the object, which covers "
    "{area}% of the image on average).",
}


def saliency_report_section(body: Mapping[str, Any], deltas: Sequence[float]) -> Report:
    """Scores, tables and the figure of a saliency run; ``deltas``: per-image delta density
    (the histogram panel)."""
    n = body["n_images"]
    config = body["variant"]
    class_mean = body["aggregation"] == "class-mean"
    outside = body["n_predicted_outside_benchmark"]
    left_out = (
        f"{outside} of {n} images left out: predicted outside the benchmark's classes"
        if class_mean and outside
        else ""
    )
    scores = []
    for key in MAIN_SCORES:
        label, short, unit = LABELS[key]
        description = DESCRIPTIONS.get(key, "").format(area=pct(body["mask_area"]))
        scores.append(
            Score(
                key,
                label,
                body[key],
                unit=unit,
                ci95=body[f"{key}_ci95"],
                n=body["n_scored"][key] if class_mean else n - body["n_undefined"][key],
                config=config,
                headline=bool(description),
                short=short,
                description=description,
                left_out=left_out,
            )
        )
    header, cells = ["Model"], [str(body["model"])]
    for key in MAIN_SCORES:
        _, short, unit = LABELS[key]
        header += [short, "95% CI"]
        cells += [number(body[key], unit), interval(body[f"{key}_ci95"], unit)]
    header += ["classes", "n"]
    cells += [str(body["n_predicted_classes"]), str(n)]
    summary = Table(
        "saliency",
        f"Saliency alignment ({HEADINGS[body['aggregation']]}):",
        header,
        [cells],
        note=(
            f"{body['method']} at {body['target_layer']['name']} on "
            f"{body['settings']['target_rule']}; {config} images, "
            f"accuracy {pct(body['accuracy'])}%"
            + _subset_note(body["subset"], body.get("skipped") or [])
            + (
                ". Each score is averaged over the images of each predicted class, then over "
                "the classes (each class weighs the same)"
                + (
                    f"; {outside} image(s) predicted outside the benchmark's classes are left "
                    "out (--restrict-to-benchmark-classes gives every image a benchmark class)"
                    if outside
                    else ""
                )
                + ". Intervals: percentile bootstrap, images resampled within their predicted "
                "class and the class means recomputed on each resample"
                if class_mean
                else ". Each score is averaged over the images. Intervals: percentile "
                "bootstrap over images"
            )
            + f" ({body['settings']['bootstrap']['resamples']} resamples, seed {body['seed']})."
        ),
    )
    secondary = Table(
        "saliency_image_mean",
        "Every score, over classes and over images (secondary):",
        ["Score", "Mean over classes", "95% CI", "classes", "Mean over images", "95% CI", "n"],
        [
            [
                LABELS[key][0],
                *_both(body, key),
                str(body["n_classes"][key]),
                *_both(body, key, images=True),
                str(n - body["n_undefined"][key]),
            ]
            for key in SCORES
        ],
        note="Mean over images: every image weighs the same, whatever its predicted class.",
    )
    per_class = body["per_predicted_class"]
    classes = Table(
        "per_class",
        "Per predicted class (the images the model assigns to it):",
        ["Class", "n", "correct", "ΔDensity", "95% CI", "Inside (%)", "IoU (%)", "AP (%)"]
        + ["Recall@25 (%)", "Mask area (%)"],
        [
            [
                name,
                str(row["n"]),
                str(row["n_correct"]),
                number(row["delta_density"], ""),
                interval(row["delta_density_ci95"], ""),
                pct(row["saliency_fraction_inside"]),
                pct(row["saliency_iou"]),
                pct(row["saliency_average_precision"]),
                pct(row["saliency_recall_25"]),
                pct(row["mask_area"]),
            ]
            for name, row in per_class.items()
        ],
    )
    tables = [summary, secondary, classes]
    if body.get("per_attribute"):
        tables.append(
            Table(
                "per_attribute",
                "Per attribute (images where it is present):",
                ["Attribute", "n", "Saliency on it (%)", "95% CI", "Mask area (%)"],
                [
                    [
                        name,
                        str(row["n"]),
                        pct(row["share_inside"]),
                        interval(row["share_inside_ci95"]),
                        pct(row["mask_area"]),
                    ]
                    for name, row in body["per_attribute"].items()
                ],
                note="Means over images. A share above the attribute's area means the model "
                "looks at it more than a uniform map would.",
            )
        )
    inside = [row["saliency_fraction_inside"] for row in per_class.values()]
    figure = Figure(
        file="saliency.png",
        title=f"{body['model']}: saliency inside the object, per predicted class",
        labels=list(per_class),
        values=[100 * v if v is not None else None for v in inside],
        ylabel="saliency inside the mask (%)",
        intervals=[
            [100 * v for v in row["saliency_fraction_inside_ci95"]]
            if row["saliency_fraction_inside_ci95"]
            else None
            for row in per_class.values()
        ],
        reference=(
            100 * (body["saliency_fraction_inside"] or 0.0),
            "mean over classes" if class_mean else "mean over images",
        ),
        counts=[row["n"] for row in per_class.values()],
        ylim=(0.0, 105.0),
        histogram={
            "values": [float(v) for v in deltas if not np.isnan(v)],
            "xlabel": "delta density of an image",
            "ylabel": "images",
            "title": "Delta density",
        },
    )
    notes = [
        "Gallery (saliency_gallery.png): the images with the lowest delta density, Grad-CAM "
        "overlaid and the object mask outlined.",
        f"Seed {body['seed']}.",
    ]
    return Report(scores, tables, [figure], notes)


def _both(body: Mapping[str, Any], key: str, *, images: bool = False) -> list[str]:
    """[value, interval] of ``key`` over classes (or ``images``), whichever is headline."""
    name = "image-pooled" if images else "class-mean"
    where = key if body["aggregation"] == name else f"{key}_{SUFFIX[name]}"
    unit = LABELS[key][2]
    return [number(body[where], unit), interval(body[f"{where}_ci95"], unit)]


def _subset_note(sub: Mapping[str, Any], skipped: list[Any]) -> str:
    """The subset, said only when the cap left images out (a cap above the data's size
    scores them all)."""
    from hf_bgbench.tasks.common import left_images_out

    if not left_images_out(sub["max_images"], sub.get("ids"), len(skipped)):
        return ""
    return f"; random subset (max_images={sub['max_images']}, seed {sub['seed']})"


def write_saliency_files(
    out: Mapping[str, Any], spec: Any, classifier: Any, body: Mapping[str, Any]
) -> dict[str, Callable[[Path], None]]:
    """Writers of saliency_per_image.parquet and saliency_gallery.png."""
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


def _name(classifier: Any, index: int) -> str:
    names = getattr(getattr(classifier, "label_space", None), "names", ())
    return str(names[index]) if 0 <= index < len(names) else str(index)
