"""The saliency run's report section (rendered by :mod:`hf_bgbench.render` like every task):
its scores, the headline table, both aggregations of every score, the per predicted class and
per attribute tables, the per-class figure with the delta-density histogram, and the notes;
the numbers come from :func:`hf_bgbench.tasks.saliency.summary.summarize`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from hf_bgbench.formatting import interval, named_rows, number, pct
from hf_bgbench.results import Figure, Report, Score, Table
from hf_bgbench.tasks.saliency.summary import MAIN_SCORES, SCORES, SUFFIX
from hf_bgbench.tasks.subsets import left_images_out

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
HEADINGS = {  # aggregation -> what the headline numbers are
    "class-mean": "mean over predicted classes of the per-class means",
    "image-pooled": "mean over images",
}


def build_report(body: Mapping[str, Any], deltas: Sequence[float]) -> Report:
    """Scores, tables and the figure of a saliency run; ``deltas``: per-image delta density
    (the histogram panel)."""
    tables = [_headline_table(body), _aggregations_table(body), _per_class_table(body)]
    if body.get("per_attribute"):
        tables.append(_per_attribute_table(body))
    return Report(_scores(body), tables, [_per_class_figure(body, deltas)], _notes(body))


def _class_mean(body: Mapping[str, Any]) -> bool:
    """Whether the headline numbers are means over predicted classes."""
    return body["aggregation"] == "class-mean"


def _scores(body: Mapping[str, Any]) -> list[Score]:
    """The five main scores, the two with a description shown first."""
    n, class_mean = body["n_images"], _class_mean(body)
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
                config=body["variant"],
                headline=bool(description),
                short=short,
                description=description,
                left_out=left_out,
            )
        )
    return scores


def _headline_table(body: Mapping[str, Any]) -> Table:
    """The model's row: each main score with its interval, the classes and images counted."""
    header, cells = ["Model"], [str(body["model"])]
    for key in MAIN_SCORES:
        _, short, unit = LABELS[key]
        header += [short, "95% CI"]
        cells += [number(body[key], unit), interval(body[f"{key}_ci95"], unit)]
    header += ["classes", "n"]
    cells += [str(body["n_predicted_classes"]), str(body["n_images"])]
    return Table(
        "saliency",
        f"Saliency alignment ({HEADINGS[body['aggregation']]}):",
        header,
        [cells],
        note=_headline_note(body),
    )


def _headline_note(body: Mapping[str, Any]) -> str:
    """The headline table's note: what was explained, on what, and how it was averaged."""
    return (
        f"{body['method']} at {body['target_layer']['name']} on "
        f"{body['settings']['target_rule']}; {body['variant']} images, "
        f"accuracy {pct(body['accuracy'])}%"
        + _subset_note(body["subset"], body.get("skipped") or [])
        + _averaging_note(body)
        + f" ({body['settings']['bootstrap']['resamples']} resamples, seed {body['seed']})."
    )


def _averaging_note(body: Mapping[str, Any]) -> str:
    """How the headline numbers and their intervals were computed."""
    if not _class_mean(body):
        return (
            ". Each score is averaged over the images. Intervals: percentile bootstrap over images"
        )
    outside = body["n_predicted_outside_benchmark"]
    return (
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
    )


def _subset_note(sub: Mapping[str, Any], skipped: list[Any]) -> str:
    """The subset, said only when the cap left images out (a cap above the data's size
    scores them all)."""
    if not left_images_out(sub["max_images"], sub.get("ids"), len(skipped)):
        return ""
    return f"; random subset (max_images={sub['max_images']}, seed {sub['seed']})"


def _aggregations_table(body: Mapping[str, Any]) -> Table:
    """Every score, over classes and over images, the secondary aggregation included."""
    n = body["n_images"]
    return Table(
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


def _both(body: Mapping[str, Any], key: str, *, images: bool = False) -> list[str]:
    """[value, interval] of ``key`` over classes (or ``images``), whichever is headline."""
    name = "image-pooled" if images else "class-mean"
    where = key if body["aggregation"] == name else f"{key}_{SUFFIX[name]}"
    unit = LABELS[key][2]
    return [number(body[where], unit), interval(body[f"{where}_ci95"], unit)]


def _per_class_table(body: Mapping[str, Any]) -> Table:
    """Per predicted class: its images, how many are right, its scores and mask area."""
    return Table(
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
            for name, row in body["per_predicted_class"].items()
        ],
    )


ATTRIBUTE_CELLS = (
    ("n", str),
    ("share_inside", pct),
    ("share_inside_ci95", interval),
    ("mask_area", pct),
)


def _per_attribute_table(body: Mapping[str, Any]) -> Table:
    """Per attribute: the share of the saliency on its mask, against the mask's area."""
    return Table(
        "per_attribute",
        "Per attribute (images where it is present):",
        ["Attribute", "n", "Saliency on it (%)", "95% CI", "Mask area (%)"],
        named_rows(body["per_attribute"], ATTRIBUTE_CELLS),
        note="Means over images. A share above the attribute's area means the model "
        "looks at it more than a uniform map would.",
    )


def _per_class_figure(body: Mapping[str, Any], deltas: Sequence[float]) -> Figure:
    """The saliency inside the object per predicted class, with the delta-density histogram."""
    per_class = body["per_predicted_class"]
    inside = [row["saliency_fraction_inside"] for row in per_class.values()]
    return Figure(
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
            "mean over classes" if _class_mean(body) else "mean over images",
        ),
        counts=[row["n"] for row in per_class.values()],
        ylim=(0.0, 105.0),
        histogram=_delta_histogram(deltas),
    )


def _delta_histogram(deltas: Sequence[float]) -> dict[str, Any]:
    """The figure's histogram panel: the delta density of each image with one."""
    return {
        "values": [float(v) for v in deltas if not np.isnan(v)],
        "xlabel": "delta density of an image",
        "ylabel": "images",
        "title": "Delta density",
    }


def _notes(body: Mapping[str, Any]) -> list[str]:
    """The notes under the report: what the gallery shows, and the seed."""
    return [
        "Gallery (saliency_gallery.png): the images with the lowest delta density, Grad-CAM "
        "overlaid and the object mask outlined.",
        f"Seed {body['seed']}.",
    ]
