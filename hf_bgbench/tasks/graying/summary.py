"""What a graying run reports: clean and grayed accuracy and the drop (class means or
pooled, with bootstrap intervals) and, when a head was re-fitted on grey-background train
images, its accuracy on the grayed images (Fig. 8's second number); per class, its report
section and per-image table."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from hf_bgbench.formatting import interval, pct
from hf_bgbench.metrics.classification import class_mean
from hf_bgbench.metrics.intervals import bootstrap_intervals, difference_of_means, mean_of
from hf_bgbench.results import WITHHELD, Figure, Report, Score, Table
from hf_bgbench.scoring import BOOTSTRAP_RESAMPLES
from hf_bgbench.tasks.graying.options import PER_IMAGE_FILE

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
    columns = {
        key: right[:, c].astype(float)
        for c, key in (
            (CLEAN, "accuracy_clean"),
            (GRAYED, "accuracy_grayed"),
            (REFIT, "accuracy_grayed_refit"),
        )
        if c < right.shape[1]
    }
    # each column's mean and the drop (in the order results list them), from one draw
    statistics = {
        "accuracy_clean": mean_of("accuracy_clean"),
        "accuracy_grayed": mean_of("accuracy_grayed"),
        "drop": difference_of_means("accuracy_clean", "accuracy_grayed"),
    }
    if "accuracy_grayed_refit" in columns:
        statistics["accuracy_grayed_refit"] = mean_of("accuracy_grayed_refit")
    class_means = aggregation == "class-mean"
    intervals = bootstrap_intervals(
        columns,
        statistics,
        groups=labels if class_means else None,
        names=names,
        n_resamples=BOOTSTRAP_RESAMPLES,
        seed=seed,
    )
    acc = {
        key: class_mean(column, labels, num_classes)[1] if class_means else float(column.mean())
        for key, column in columns.items()
    }
    acc["drop"] = acc["accuracy_clean"] - acc["accuracy_grayed"]
    numbers = {}
    for key, (bounds, _) in intervals.items():
        numbers |= {key: acc[key], f"{key}_ci95": None if bounds is None else list(bounds)}
    withheld = {key: interval.withheld for key, interval in intervals.items() if interval.withheld}
    return numbers | ({WITHHELD: withheld} if withheld else {})


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
    """(the numbers, a function body -> report section, the per-image table)."""
    labels = out["labels"]
    right = out["pred"] == labels[:, None]  # (n, 2)
    numbers = {
        "aggregation": aggregation,
        "gray": float(gray),
        **_numbers(right, labels, seed, aggregation, spec.num_classes, list(spec.classes)),
        "n_images": len(labels),
        "per_class": {
            name: {"n": int((labels == c).sum())}
            | _numbers(
                right[labels == c], labels[labels == c], seed, "image-pooled", spec.num_classes
            )
            for c, name in enumerate(spec.classes)
            if (labels == c).any()
        },
        "bootstrap": {"resamples": BOOTSTRAP_RESAMPLES, "seed": seed, "unit": "image"},
        "per_image_file": PER_IMAGE_FILE,
    }
    if out.get("attributes") is not None:
        numbers["per_attribute"] = _per_attribute(out, right[:, CLEAN], seed, spec.num_classes)
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
    refit = "accuracy_grayed_refit" in body
    if refit:
        epochs = body["refit_head"]["probe"]["epochs"]
        scores.append(
            Score(
                "accuracy_grayed_refit",
                "Accuracy, background grey, head re-fitted on grey-background train images",
                body["accuracy_grayed_refit"],
                ci95=body["accuracy_grayed_refit_ci95"],
                n=n,
                config=variant,
                headline=True,
                short="Grayed acc. (re-fitted head)",
                description=f"({how}; a linear head trained {epochs} epochs on the frozen "
                "features of train images with the background grayed: Fig. 8, right).",
            )
        )
    classes = body["per_class"]
    columns = ["Class", "n", "Clean (%)", "Grayed (%)", "Drop (pts)", "95% CI"]
    if refit:
        columns += ["Grayed, re-fitted head (%)", "95% CI"]
    table = Table(
        "per_class",
        "Per class:",
        columns,
        [
            [
                name,
                str(c["n"]),
                pct(c["accuracy_clean"]),
                pct(c["accuracy_grayed"]),
                pct(c["drop"]),
                interval(c["drop_ci95"]),
            ]
            + (
                [pct(c["accuracy_grayed_refit"]), interval(c["accuracy_grayed_refit_ci95"])]
                if refit
                else []
            )
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
        intervals=[
            [100 * v for v in c["accuracy_grayed_ci95"]] if c["accuracy_grayed_ci95"] else None
            for c in classes.values()
        ],
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
    notes = [f"Per image: {body['per_image_file']}."]
    how_refit = body.get("refit_head") or {}
    if refit:
        notes.append(f"Re-fitted head: {how_refit['probe']['note']}")
    elif how_refit.get("reason"):
        notes.append(
            "No head re-fitted on grey-background train images (Fig. 8, right): "
            f"{how_refit['reason']}."
        )
    return Report(scores, tables, [figure], notes)
