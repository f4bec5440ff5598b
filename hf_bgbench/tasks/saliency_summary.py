"""What a saliency run reports and keeps: the numbers (overall, per class, per attribute, with
bootstrap intervals), its report section (rendered by :mod:`hf_bgbench.render` like every
task), the per-image Parquet file and the gallery of the images whose saliency sits most on
the background."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from PIL import Image

from hf_bgbench.data.loader import DataError, Geometry
from hf_bgbench.formatting import interval, number, pct
from hf_bgbench.metrics.saliency import bootstrap_mean_interval, saliency_fraction_inside
from hf_bgbench.results import Figure, Report, Score, Table

RESULT_KEYS = [  # what a reader wants first in saliency.json (after the header)
    "target",
    "method",
    "delta_density",
    "delta_density_ci95",
    "saliency_fraction_inside",
    "saliency_fraction_inside_ci95",
    "saliency_iou",
    "saliency_iou_ci95",
    "n_images",
]
SCORES = {  # result key -> per-image key of the run
    "saliency_iou": "iou",
    "saliency_fraction_inside": "inside",
    "delta_density": "delta",
}


def attribute_shares(
    row: Any, saliency: np.ndarray, geometry: Geometry | None, image_id: str
) -> dict[str, dict[str, float]]:
    """{attribute: {"share": share of the saliency on its mask, "area": mask area}} of one
    image, from its ``attribute_masks`` entries (masks resized like the image; empty masks
    are left out)."""
    import datasets

    shares: dict[str, dict[str, float]] = {}
    for entry in row or ():
        mask = entry["mask"]
        if isinstance(mask, dict):  # stored undecoded: {"bytes", "path"}
            mask = datasets.Image().decode_example(mask)
        if not isinstance(mask, Image.Image):
            mask = Image.fromarray(np.asarray(mask, dtype=np.uint8))
        mask = mask.convert("L")
        if geometry is not None:
            mask = geometry(mask, mask=True)
        binary = np.asarray(mask) > 0
        if binary.shape != saliency.shape:
            raise DataError(
                f"image {image_id!r}: the {entry['attribute']!r} attribute mask is "
                f"{binary.shape[0]}x{binary.shape[1]} but the image is "
                f"{saliency.shape[0]}x{saliency.shape[1]}; attribute masks must have their "
                "image's size."
            )
        if binary.any():
            shares[str(entry["attribute"])] = {
                "share": float(saliency_fraction_inside(saliency, binary)),
                "area": float(binary.mean()),
            }
    return shares


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


def summarize(spec: Any, out: Mapping[str, Any], *, seed: int, resamples: int) -> dict[str, Any]:
    """The run's numbers: means over images with seeded bootstrap intervals, overall, per
    class of the true label and (RIVAL10) per attribute."""
    labels = np.asarray(out["labels"], np.int64)
    values = {key: np.asarray(out[src], float) for key, src in SCORES.items()}
    area = np.asarray(out["mask_area"], float)
    body: dict[str, Any] = {"n_images": len(labels)}
    for key, vals in values.items():
        stats = _stats(vals, seed, resamples)
        body[key], body[f"{key}_ci95"] = stats["mean"], stats["ci95"]
    body["n_undefined"] = {key: int(np.isnan(v).sum()) for key, v in values.items()}
    body["mask_area"] = _mean(area)
    body["accuracy"] = float((np.asarray(out["pred"]) == labels).mean())
    per_class = {}
    for c, name in enumerate(spec.classes):
        rows = labels == c
        entry: dict[str, Any] = {"n": int(rows.sum()), "mask_area": _mean(area[rows])}
        for key, vals in values.items():
            stats = _stats(vals[rows], seed, resamples)
            entry[key], entry[f"{key}_ci95"] = stats["mean"], stats["ci95"]
        per_class[name] = entry
    body["per_class"] = per_class
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


def saliency_report_section(body: Mapping[str, Any], deltas: Sequence[float]) -> Report:
    """Scores, tables and the figure of a saliency run; ``deltas``: per-image delta density
    (the histogram panel)."""
    n = body["n_images"]
    config = body["variant"]
    scores = [
        Score(
            "delta_density",
            "Delta density (object − background)",
            body["delta_density"],
            unit="",
            ci95=body["delta_density_ci95"],
            n=n - body["n_undefined"]["delta_density"],
            config=config,
            headline=True,
            short="ΔDensity",
            description="(mean max-normalised Grad-CAM saliency on the object minus on the "
            "background, in [-1, 1]; low or negative: the model looks at the background).",
        ),
        Score(
            "saliency_fraction_inside",
            "Saliency inside the object mask",
            body["saliency_fraction_inside"],
            ci95=body["saliency_fraction_inside_ci95"],
            n=n - body["n_undefined"]["saliency_fraction_inside"],
            config=config,
            headline=True,
            short="Inside (%)",
            description=f"(share of the saliency on the object, which covers "
            f"{pct(body['mask_area'])}% of the image on average).",
        ),
        Score(
            "saliency_iou",
            "IoU of saliency (≥ 0.5 of max) and mask",
            body["saliency_iou"],
            ci95=body["saliency_iou_ci95"],
            n=n - body["n_undefined"]["saliency_iou"],
            config=config,
            short="IoU (%)",
        ),
    ]
    summary = Table(
        "saliency",
        "Saliency alignment:",
        ["Model", "ΔDensity", "95% CI", "Inside (%)", "95% CI", "IoU (%)", "95% CI", "n"],
        [
            [
                str(body["model"]),
                number(body["delta_density"], ""),
                interval(body["delta_density_ci95"], ""),
                pct(body["saliency_fraction_inside"]),
                interval(body["saliency_fraction_inside_ci95"]),
                pct(body["saliency_iou"]),
                interval(body["saliency_iou_ci95"]),
                str(n),
            ]
        ],
        note=(
            f"{body['method']} at {body['target_layer']['name']} on "
            f"{body['settings']['target_rule']}; {config} images, "
            f"accuracy {pct(body['accuracy'])}%"
            + _subset_note(body["subset"])
            + ". Intervals: percentile bootstrap over images "
            f"({body['settings']['bootstrap']['resamples']} resamples, seed {body['seed']})."
        ),
    )
    per_class = body["per_class"]
    classes = Table(
        "per_class",
        "Per class (true label):",
        ["Class", "n", "ΔDensity", "95% CI", "Inside (%)", "IoU (%)", "Mask area (%)"],
        [
            [
                name,
                str(row["n"]),
                number(row["delta_density"], ""),
                interval(row["delta_density_ci95"], ""),
                pct(row["saliency_fraction_inside"]),
                pct(row["saliency_iou"]),
                pct(row["mask_area"]),
            ]
            for name, row in per_class.items()
        ],
    )
    tables = [summary, classes]
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
                note="A share above the attribute's area means the model looks at it more than "
                "a uniform map would.",
            )
        )
    inside = [row["saliency_fraction_inside"] for row in per_class.values()]
    figure = Figure(
        file="saliency.png",
        title=f"{body['model']}: saliency inside the object",
        labels=list(per_class),
        values=[100 * v if v is not None else None for v in inside],
        ylabel="saliency inside the mask (%)",
        intervals=[
            [100 * v for v in row["saliency_fraction_inside_ci95"]]
            if row["saliency_fraction_inside_ci95"]
            else None
            for row in per_class.values()
        ],
        reference=(100 * (body["saliency_fraction_inside"] or 0.0), "overall"),
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


def _subset_note(sub: Mapping[str, Any]) -> str:
    if sub["max_images"] is None:
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
            "saliency_iou": np.asarray(out["iou"], float),
            "saliency_fraction_inside": np.asarray(out["inside"], float),
            "delta_density": np.asarray(out["delta"], float),
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
        from hf_bgbench.tasks.saliency_gallery import draw_gallery

        title = f"{body['model']}: lowest delta density ({body['method']}, {body['target']} class)"
        writers["saliency_gallery.png"] = lambda path: draw_gallery(
            out["gallery"], spec.classes, lambda c: _name(classifier, c), title, path
        )
    return writers


def _name(classifier: Any, index: int) -> str:
    names = getattr(getattr(classifier, "label_space", None), "names", ())
    return str(names[index]) if 0 <= index < len(names) else str(index)
