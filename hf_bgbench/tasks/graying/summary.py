"""What a graying run reports: clean and grayed accuracy and the drop (class means or
pooled, with bootstrap intervals) and, when a head was re-fitted on grey-background train
images, its accuracy on the grayed images (Fig. 8's second number); per class, and its
per-image table. Its report is made by :mod:`hf_bgbench.tasks.graying.report`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from hf_bgbench.metrics.classification import class_mean
from hf_bgbench.metrics.intervals import bootstrap_intervals, difference_of_means, mean_of
from hf_bgbench.results import WITHHELD, Report
from hf_bgbench.scoring import BOOTSTRAP_RESAMPLES
from hf_bgbench.tasks.graying.options import PER_IMAGE_FILE
from hf_bgbench.tasks.graying.report import build_report

RESULT_KEYS = [
    "aggregation",
    "gray",
    "accuracy_clean",
    "accuracy_clean_ci95",
    "accuracy_grayed",
    "accuracy_grayed_ci95",
    "drop",
    "drop_ci95",
    "accuracy_grayed_refit",
    "accuracy_grayed_refit_ci95",
    "n_images",
    "per_class",
]
CLEAN, GRAYED, REFIT = 0, 1, 2  # REFIT: grayed, through the head re-fitted on grayed train


def _numbers(
    right: np.ndarray,
    labels: np.ndarray,
    seed: int,
    aggregation: str,
    num_classes: int,
    names: list[str] | None = None,
) -> dict:
    """Clean / grayed accuracy and their difference (and, with a third column, the grayed
    accuracy of the re-fitted head), with percentile intervals from one bootstrap over
    images (paired: an image's copies are resampled together; the draws do not depend on
    the number of columns). An interval resampling cannot vary (a class of one image, or
    all alike: :func:`hf_bgbench.metrics.intervals.resampling_gap`) is None, and
    ``intervals_withheld`` says why."""
    columns = _columns(right)
    class_means = aggregation == "class-mean"
    intervals = bootstrap_intervals(
        columns,
        _statistics(columns),
        groups=labels if class_means else None,
        names=names,
        n_resamples=BOOTSTRAP_RESAMPLES,
        seed=seed,
    )
    acc = _accuracies(columns, labels, num_classes if class_means else None)
    numbers = {}
    for key, (bounds, _) in intervals.items():
        numbers |= {key: acc[key], f"{key}_ci95": None if bounds is None else list(bounds)}
    withheld = {key: interval.withheld for key, interval in intervals.items() if interval.withheld}
    return numbers | ({WITHHELD: withheld} if withheld else {})


def _columns(right: np.ndarray) -> dict[str, np.ndarray]:
    """Each column of ``right`` (n, 2 or 3) as 0/1 floats, under its result key."""
    return {
        key: right[:, c].astype(float)
        for c, key in (
            (CLEAN, "accuracy_clean"),
            (GRAYED, "accuracy_grayed"),
            (REFIT, "accuracy_grayed_refit"),
        )
        if c < right.shape[1]
    }


def _statistics(columns: dict[str, np.ndarray]) -> dict[str, Any]:
    """Each column's mean and the drop (in the order results list them), for one draw."""
    statistics = {
        "accuracy_clean": mean_of("accuracy_clean"),
        "accuracy_grayed": mean_of("accuracy_grayed"),
        "drop": difference_of_means("accuracy_clean", "accuracy_grayed"),
    }
    if "accuracy_grayed_refit" in columns:
        statistics["accuracy_grayed_refit"] = mean_of("accuracy_grayed_refit")
    return statistics


def _accuracies(
    columns: dict[str, np.ndarray], labels: np.ndarray, num_classes: int | None
) -> dict[str, float]:
    """Each column's accuracy -- the mean over the ``num_classes`` classes of the per-class
    accuracy, or pooled over images where ``num_classes`` is None -- and the drop."""
    acc = {
        key: class_mean(column, labels, num_classes)[1]
        if num_classes is not None
        else float(column.mean())
        for key, column in columns.items()
    }
    acc["drop"] = acc["accuracy_clean"] - acc["accuracy_grayed"]
    return acc


def _per_attribute(
    out: dict[str, Any], clean_right: np.ndarray, seed: int, num_classes: int
) -> dict:
    """Per attribute, over the images where it has a mask: accuracy clean and with only that
    attribute grayed, and the drop -- pooled over those images, as the authors'
    attr_importance.py sums correct counts over the classes."""
    rows = out["attributes"]
    labels = out["labels"]
    result = {}
    for name in sorted({a for row in rows for a in row}):
        have = np.array([name in row for row in rows])
        pairs = zip(rows, labels, strict=True)
        ablated = np.array([row[name][0] == y for row, y in pairs if name in row])
        result[name] = {"n": int(have.sum())} | _numbers(
            np.stack([clean_right[have], ablated], axis=1),
            labels[have],
            seed,
            "image-pooled",
            num_classes,
        )
    return result


def summarize(
    spec: Any, out: dict[str, Any], seed: int, aggregation: str, gray: float
) -> tuple[dict[str, Any], Callable[[dict[str, Any]], Report], pd.DataFrame]:
    """(the numbers, the report builder :func:`hf_bgbench.tasks.graying.report.build_report`,
    the per-image table)."""
    labels = out["labels"]
    right = out["pred"] == labels[:, None]  # (n, 2)
    numbers = {
        "aggregation": aggregation,
        "gray": float(gray),
        **_numbers(right, labels, seed, aggregation, spec.num_classes, list(spec.classes)),
        "n_images": len(labels),
        "per_class": _per_class(spec, right, labels, seed),
        "bootstrap": {"resamples": BOOTSTRAP_RESAMPLES, "seed": seed, "unit": "image"},
        "per_image_file": PER_IMAGE_FILE,
    }
    if out.get("attributes") is not None:
        numbers["per_attribute"] = _per_attribute(out, right[:, CLEAN], seed, spec.num_classes)
    return numbers, build_report, _per_image_frame(spec, out)


def _per_class(spec: Any, right: np.ndarray, labels: np.ndarray, seed: int) -> dict[str, Any]:
    """Per class present: its images' numbers, pooled over them."""
    return {
        name: {"n": int((labels == c).sum())}
        | _numbers(right[labels == c], labels[labels == c], seed, "image-pooled", spec.num_classes)
        for c, name in enumerate(spec.classes)
        if (labels == c).any()
    }


def _per_image_frame(spec: Any, out: dict[str, Any]) -> pd.DataFrame:
    """One row per image: its id, label, class, and prediction and true-class probability
    clean, grayed (and grayed through the re-fitted head)."""
    labels = out["labels"]
    frame = pd.DataFrame(
        {
            "id": out["ids"],
            "label": labels,
            "class": np.asarray(spec.classes, dtype=object)[labels],
            "pred_clean": out["pred"][:, CLEAN],
            "pred_grayed": out["pred"][:, GRAYED],
            "p_clean": out["prob"][:, CLEAN],
            "p_grayed": out["prob"][:, GRAYED],
        }
    )
    if out["pred"].shape[1] > REFIT:
        frame["pred_grayed_refit"] = out["pred"][:, REFIT]
        frame["p_grayed_refit"] = out["prob"][:, REFIT]
    return frame
