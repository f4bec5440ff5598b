"""What a graying run reports: clean and grayed accuracy and the drop (class means or
pooled, with bootstrap intervals), per class, its report section and per-image table."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from hf_bgbench.formatting import interval, pct
from hf_bgbench.metrics.classification import class_mean
from hf_bgbench.metrics.intervals import (
    bootstrap_means,
    class_bootstrap_means,
    percentile_interval,
)
from hf_bgbench.results import Figure, Report, Score, Table
from hf_bgbench.scoring import BOOTSTRAP_RESAMPLES

RESULT_KEYS = [
    "aggregation",
    "gray",
    "accuracy_clean",
    "accuracy_clean_ci95",
    "accuracy_grayed",
    "accuracy_grayed_ci95",
    "drop",
    "drop_ci95",
    "n_images",
    "per_class",
]
PER_IMAGE_FILE = "graying_images.parquet"
CLEAN, GRAYED = 0, 1


def _numbers(right: np.ndarray, labels: np.ndarray, seed: int, aggregation: str) -> dict:
    """Clean / grayed accuracy and their difference, with percentile intervals from one
    bootstrap over images (paired: an image's two copies are resampled together)."""
    clean, grayed = right[:, CLEAN].astype(float), right[:, GRAYED].astype(float)
    if aggregation == "class-mean":
        a_clean, a_gray = class_mean(clean, labels), class_mean(grayed, labels)
        s_clean, s_gray = class_bootstrap_means(
            clean, grayed, groups=labels, n_resamples=BOOTSTRAP_RESAMPLES, seed=seed
        )
    else:
        a_clean, a_gray = float(clean.mean()), float(grayed.mean())
        s_clean, s_gray = bootstrap_means(clean, grayed, n_resamples=BOOTSTRAP_RESAMPLES, seed=seed)
    return {
        "accuracy_clean": a_clean,
        "accuracy_clean_ci95": list(percentile_interval(s_clean)),
        "accuracy_grayed": a_gray,
        "accuracy_grayed_ci95": list(percentile_interval(s_gray)),
        "drop": a_clean - a_gray,
        "drop_ci95": list(percentile_interval(s_clean - s_gray)),
    }


def _per_attribute(out: dict[str, Any], clean_right: np.ndarray, seed: int) -> dict:
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
            np.stack([clean_right[have], ablated], axis=1), labels[have], seed, "image-pooled"
        )
    return result


def summarize(
    spec: Any, out: dict[str, Any], seed: int, aggregation: str, gray: float
) -> tuple[dict[str, Any], Callable[[dict[str, Any]], Report], pd.DataFrame]:
    """(the numbers, a function body -> report section, the per-image table)."""
    labels = out["labels"]
    right = out["pred"] == labels[:, None]  # (n, 2)
    numbers = {
        "aggregation": aggregation,
        "gray": float(gray),
        **_numbers(right, labels, seed, aggregation),
        "n_images": len(labels),
        "per_class": {
            name: {"n": int((labels == c).sum())}
            | _numbers(right[labels == c], labels[labels == c], seed, "image-pooled")
            for c, name in enumerate(spec.classes)
            if (labels == c).any()
        },
        "bootstrap": {"resamples": BOOTSTRAP_RESAMPLES, "seed": seed, "unit": "image"},
        "per_image_file": PER_IMAGE_FILE,
    }
    if out.get("attributes") is not None:
        numbers["per_attribute"] = _per_attribute(out, right[:, CLEAN], seed)
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
    return numbers, report_section, frame


def report_section(body: dict[str, Any]) -> Report:
    variant, n = body["variant"], body["n_images"]
    how = (
        "accuracy per class, averaged over the classes"
        if body["aggregation"] == "class-mean"
        else "accuracy pooled over images"
    )
    scores = [
        Score(
            "accuracy_grayed",
            f"Accuracy, background set to grey {body['gray']:g}",
            body["accuracy_grayed"],
            ci95=body["accuracy_grayed_ci95"],
            n=n,
            config=variant,
            headline=True,
            short="Grayed acc.",
            description=f"({how}; the object kept, every background pixel grey).",
        ),
        Score(
            "accuracy",
            f"Clean accuracy ({variant})",
            body["accuracy_clean"],
            ci95=body["accuracy_clean_ci95"],
            n=n,
            config=variant,
            short="Clean acc.",
        ),
        Score(
            "graying_drop",
            "Drop from graying the background",
            body["drop"],
            unit="pts",
            ci95=body["drop_ci95"],
            n=n,
            config=variant,
            headline=True,
            short="Drop",
            description="(clean − grayed; large: the background carried accuracy).",
        ),
    ]
    classes = body["per_class"]
    table = Table(
        "per_class",
        "Per class:",
        ["Class", "n", "Clean (%)", "Grayed (%)", "Drop (pts)", "95% CI"],
        [
            [
                name,
                str(c["n"]),
                pct(c["accuracy_clean"]),
                pct(c["accuracy_grayed"]),
                pct(c["drop"]),
                interval(c["drop_ci95"]),
            ]
            for name, c in classes.items()
        ],
        note=f"{n} images of {variant}; 95% intervals: percentile bootstrap over images "
        f"({body['bootstrap']['resamples']} resamples, seed {body['bootstrap']['seed']}).",
    )
    figure = Figure(
        file="graying.png",
        title=f"{body['model']}: accuracy with the background grayed",
        labels=list(classes),
        values=[100 * c["accuracy_grayed"] for c in classes.values()],
        ylabel="accuracy, background grayed (%)",
        intervals=[[100 * v for v in c["accuracy_grayed_ci95"]] for c in classes.values()],
        reference=(100 * body["accuracy_clean"], "clean"),
        counts=[c["n"] for c in classes.values()],
        ylim=(0.0, 105.0),
    )
    tables = [table]
    if body.get("per_attribute"):
        tables.append(
            Table(
                "per_attribute",
                "Per attribute, grayed alone (images where it has a mask):",
                ["Attribute", "n", "Clean (%)", "Attribute grayed (%)", "Drop (pts)", "95% CI"],
                [
                    [
                        name,
                        str(a["n"]),
                        pct(a["accuracy_clean"]),
                        pct(a["accuracy_grayed"]),
                        pct(a["drop"]),
                        interval(a["drop_ci95"]),
                    ]
                    for name, a in body["per_attribute"].items()
                ],
                note="Accuracy pooled over the images that have the attribute (the authors' "
                "attr_importance.py); a large drop: the model uses that part.",
            )
        )
    return Report(scores, tables, [figure], [f"Per image: {body['per_image_file']}."])
