"""What a noise-analysis run reports: its numbers (all from :mod:`hf_bgbench.metrics.noise`),
its per-image table and its report section (rendered by :mod:`hf_bgbench.render`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from hf_bgbench.metrics.classification import class_mean
from hf_bgbench.metrics.intervals import (
    bootstrap_intervals,
    difference_of_means,
    resampling_gap,
    wilson_interval,
)
from hf_bgbench.metrics.noise import (
    instance_rfs,
    rfs_bootstrap_intervals,
    rfs_class_mean,
    rfs_class_mean_intervals,
    rfs_report,
)
from hf_bgbench.results import WITHHELD
from hf_bgbench.scoring import BOOTSTRAP_RESAMPLES
from hf_bgbench.tasks.noise.levels import BG, FG
from hf_bgbench.tasks.noise.options import PER_IMAGE_FILE

RESULT_KEYS = [
    "norm",
    "aggregation",
    "rfs",
    "rfs_ci95",
    "a_fg",
    "a_fg_ci95",
    "a_bg",
    "a_bg_ci95",
    "mean_accuracy",
    "rfs_mean_over_levels",
    "irfs_mean",
    "clean_accuracy",
    "clean_accuracy_ci95",
    "n_images",
    "trials",
    "seed",
    "levels",
    "per_class",
]
IRFS_BIN_EDGES = np.linspace(-1.0, 1.0, 21)  # iRFS histograms: 20 bins of width 0.1


def level_key(norm: str) -> str:
    """The name of a level's noise size in results: σ (linf) or ε (l2)."""
    return "sigma" if norm == "linf" else "epsilon"


def level_size(level: float, norm: str) -> float:
    """σ in [0, 1] pixel units (level / 255) for linf, ε (= level) for l2."""
    return level / 255 if norm == "linf" else level


AGGREGATIONS = ("class-mean", "image-pooled")


def _stats(
    out: dict[str, Any],
    irfs: np.ndarray,
    images: np.ndarray,
    levels: list[int],
    num_classes: int,
    seed: int,
    aggregation: str,
    with_ci: bool = True,
    class_names: list[str] | None = None,
) -> dict[str, Any]:
    """a_fg, a_bg, ā, RFS (+ bootstrap intervals over images) and mean iRFS of the rows of
    ``images`` (bool[N]) at the level indices ``levels``, trials pooled within an image.

    ``class-mean`` (the authors'): accuracy per class, then the mean over the classes
    present, and RFS of those two accuracies; ``image-pooled``: every noisy copy weighs
    the same (bgbench-v1). An interval resampling cannot make honest is None, and
    ``intervals_withheld`` says why (:func:`resampling_gap`)."""
    pred = out["pred"][images][:, levels]  # (n, l, 2, T)
    labels = out["labels"][images]
    correct = pred == labels[:, None, None, None]
    per_image = correct.mean(axis=(1, 3))  # (n, 2): share of an image's noisy copies right
    if aggregation == "class-mean":
        report = rfs_class_mean(per_image[:, FG], per_image[:, BG], labels, num_classes)
    else:
        ref = np.broadcast_to(labels[:, None, None], pred[:, :, FG].shape)
        report = rfs_report(
            pred[:, :, FG].ravel(), pred[:, :, BG].ravel(), ref.ravel(), num_classes=num_classes
        )
    a_fg, a_bg = report["accuracy_fg_noise"], report["accuracy_bg_noise"]
    stats: dict[str, Any] = {
        "n_images": int(images.sum()),
        "a_fg": a_fg,
        "a_bg": a_bg,
        "mean_accuracy": (a_fg + a_bg) / 2,
        "rfs": report["rfs"],
        "irfs_mean": float(irfs[images][:, levels].mean()),
    }
    if with_ci:
        if aggregation == "class-mean":
            ci = rfs_class_mean_intervals(
                per_image[:, FG],
                per_image[:, BG],
                labels,
                n_resamples=BOOTSTRAP_RESAMPLES,
                seed=seed,
            )
        else:
            ci = rfs_bootstrap_intervals(
                per_image[:, FG], per_image[:, BG], n_resamples=BOOTSTRAP_RESAMPLES, seed=seed
            )
        groups = labels if aggregation == "class-mean" else None
        inputs = {"a_fg": (per_image[:, FG],), "a_bg": (per_image[:, BG],)}
        inputs["rfs"] = inputs["a_fg"] + inputs["a_bg"]
        withheld = {}
        for key, name in (
            ("a_fg", "accuracy_fg_noise"),
            ("a_bg", "accuracy_bg_noise"),
            ("rfs", "rfs"),
        ):
            stats[f"{key}_ci95"] = None if ci[name] is None else list(ci[name])
            if ci[name] is None:
                withheld[key] = resampling_gap(*inputs[key], groups=groups, names=class_names)
        if withheld:
            stats[WITHHELD] = withheld
    return stats


def summarize(
    spec: Any,
    out: dict[str, Any],
    levels: list[float],
    norm: str,
    trials: int,
    seed: int,
    aggregation: str = "class-mean",
) -> tuple[dict[str, Any], pd.DataFrame]:
    """(the run's numbers for results.json, the per-image table: one row per image and
    level) from the per-copy predictions and true-class probabilities of ``out``.

    ``aggregation`` (:data:`AGGREGATIONS`) makes the headline: with ``class-mean`` the
    authors' numbers -- a_fg, a_bg per level as class means (Fig. 4) and, over all levels,
    the RFS of the level- and class-averaged accuracies (Fig. 6) -- and the image-pooled
    ones as a labelled secondary ``image_pooled`` entry."""
    if aggregation not in AGGREGATIONS:
        raise ValueError(f"aggregation {aggregation!r}: use one of {', '.join(AGGREGATIONS)}.")
    labels = out["labels"]
    n = len(labels)
    # iRFS per (image, level): true-class probabilities averaged over the trials (core).
    p_fg = out["prob"][:, :, FG].mean(axis=-1)
    p_bg = out["prob"][:, :, BG].mean(axis=-1)
    irfs = instance_rfs(p_fg.ravel(), p_bg.ravel()).reshape(n, len(levels))
    everyone = np.ones(n, bool)
    all_levels = list(range(len(levels)))
    key = level_key(norm)
    names = list(spec.classes)
    overall = _stats(
        out, irfs, everyone, all_levels, spec.num_classes, seed, aggregation, True, names
    )
    per_level = [
        {"level": lv, key: level_size(lv, norm)}
        | _stats(out, irfs, everyone, [i], spec.num_classes, seed, aggregation, True, names)
        | {"n_trials": trials}
        for i, lv in enumerate(levels)
    ]
    clean_right = out["clean_pred"] == labels
    per_class = {}
    for c, name in enumerate(spec.classes):
        mine = labels == c
        if not mine.any():
            continue
        per_class[name] = _stats(
            out, irfs, mine, all_levels, spec.num_classes, seed, aggregation, True, names
        ) | {
            "clean_accuracy": float(clean_right[mine].mean()),
            "irfs_histogram": {  # one value per image and level, as the authors plot it
                "edges": IRFS_BIN_EDGES.tolist(),
                "counts": np.histogram(irfs[mine], bins=IRFS_BIN_EDGES)[0].tolist(),
            },
            "levels": [
                {"level": lv, key: level_size(lv, norm)}
                | _stats(out, irfs, mine, [i], spec.num_classes, seed, aggregation, with_ci=False)
                for i, lv in enumerate(levels)
            ],
        }
    n_right = int(clean_right.sum())
    clean = _clean_accuracy(clean_right, labels, n_right, seed, aggregation, names)
    withheld = overall.get(WITHHELD, {}) | clean.pop(WITHHELD, {})
    secondary = {}
    if aggregation == "class-mean":  # today's image-weighted numbers, labelled as such
        pooled = _stats(out, irfs, everyone, all_levels, spec.num_classes, seed, "image-pooled")
        secondary["image_pooled"] = {
            "note": "every noisy copy weighs the same (not the paper's aggregation)",
            **{k: pooled[k] for k in ("a_fg", "a_fg_ci95", "a_bg", "a_bg_ci95", "rfs", "rfs_ci95")},
            **({WITHHELD: pooled[WITHHELD]} if WITHHELD in pooled else {}),
        }
    if out.get("attributes") is not None:
        secondary["per_attribute"] = _per_attribute(out, clean_right, seed)
    body = {
        "norm": norm,
        "aggregation": aggregation,
        **{k: overall[k] for k in ("rfs", "rfs_ci95", "a_fg", "a_fg_ci95", "a_bg", "a_bg_ci95")},
        "mean_accuracy": overall["mean_accuracy"],
        # not a number the authors report (their Fig. 6 is the RFS of averaged accuracies)
        "rfs_mean_over_levels": float(np.mean([lv["rfs"] for lv in per_level])),
        "irfs_mean": overall["irfs_mean"],
        **clean,
        "n_images": n,
        "trials": trials,
        "seed": seed,
        "levels": per_level,
        "per_class": per_class,
        **secondary,
        "noise": {
            "norm": norm,
            "levels_given_as": "sigma x 255 (sigma = level / 255)"
            if norm == "linf"
            else "epsilon, the l2 norm of each region's noise (pixels in [0, 1])",
            "same_noise_for_fg_and_bg": True,
            "generator": "torch.Generator on the device per (seed, norm, level, image id), "
            "seeded with sha256; all trials of an image drawn in one call",
        },
        "bootstrap": {"resamples": BOOTSTRAP_RESAMPLES, "seed": seed, "unit": "image"},
        "per_image_file": PER_IMAGE_FILE,
    }
    if withheld:
        body[WITHHELD] = withheld
    return body, _per_image_frame(spec, out, levels, norm, p_fg, p_bg, irfs)


def _per_attribute(out: dict[str, Any], clean_right: np.ndarray, seed: int) -> dict:
    """Per attribute, over the images that have its mask: accuracy with the noise on that
    mask alone (all levels and trials), the same images' clean accuracy and accuracy with
    the noise on the whole object (a_fg), and the drop clean − attribute noise; pooled over
    the images, with a paired bootstrap interval of the drop."""
    rows, labels = out["attributes"], out["labels"]
    fg_right = (out["pred"][:, :, FG] == labels[:, None, None]).mean(axis=(1, 2))
    result = {}
    for name in sorted({a for row in rows for a in row}):
        have = np.array([name in row for row in rows])
        attr = np.array([row[name].mean() for row in rows if name in row])
        clean = clean_right[have].astype(float)
        drop = bootstrap_intervals(
            {"clean": clean, "attribute": attr},
            {"drop": difference_of_means("clean", "attribute")},
            n_resamples=BOOTSTRAP_RESAMPLES,
            seed=seed,
        )["drop"]
        result[name] = {
            "n": int(have.sum()),
            "accuracy_attribute_noise": float(attr.mean()),
            "accuracy_clean": float(clean.mean()),
            "a_fg": float(fg_right[have].mean()),
            "drop": float(clean.mean() - attr.mean()),
            "drop_ci95": None if drop.bounds is None else list(drop.bounds),
        }
    return result


def _clean_accuracy(
    right: np.ndarray,
    labels: np.ndarray,
    n_right: int,
    seed: int,
    aggregation: str,
    names: list[str],
) -> dict[str, Any]:
    """Clean accuracy aggregated like the noisy ones: a class mean with a stratified
    bootstrap interval (withheld, with the reason under ``intervals_withheld``, where a class
    cannot vary: :func:`resampling_gap`), or pooled over images with a Wilson interval
    (which covers an all-right or all-wrong sample: it is never zero-width)."""
    n = len(labels)
    if aggregation != "class-mean":
        return {
            "clean_accuracy": n_right / n,
            "clean_accuracy_ci95": list(wilson_interval(n_right, n)),
        }
    bounds, gap = bootstrap_intervals(
        {"clean_accuracy": right.astype(float)},
        groups=labels,
        names=names,
        n_resamples=BOOTSTRAP_RESAMPLES,
        seed=seed,
    )["clean_accuracy"]
    return {
        "clean_accuracy": class_mean(right.astype(float), labels, len(names))[1],
        "clean_accuracy_ci95": None if bounds is None else list(bounds),
        "clean_accuracy_image_pooled": n_right / n,
    } | ({WITHHELD: {"clean_accuracy": gap}} if gap else {})


def _per_image_frame(
    spec: Any,
    out: dict[str, Any],
    levels: list[float],
    norm: str,
    p_fg: np.ndarray,
    p_bg: np.ndarray,
    irfs: np.ndarray,
) -> pd.DataFrame:
    n, n_levels = p_fg.shape
    labels = out["labels"]
    correct = out["pred"] == labels[:, None, None, None]
    return pd.DataFrame(
        {
            "id": np.repeat(np.asarray(out["ids"], dtype=object), n_levels),
            "label": np.repeat(labels, n_levels),
            "class": np.repeat(np.asarray(spec.classes, dtype=object)[labels], n_levels),
            "level": np.tile(np.asarray(levels, float), n),
            level_key(norm): np.tile([level_size(lv, norm) for lv in levels], n),
            "accuracy_fg": correct[:, :, FG].mean(axis=-1).ravel(),
            "accuracy_bg": correct[:, :, BG].mean(axis=-1).ravel(),
            "p_fg": p_fg.ravel(),
            "p_bg": p_bg.ravel(),
            "irfs": irfs.ravel(),
            "clean_correct": np.repeat(out["clean_pred"] == labels, n_levels),
            "clean_p": np.repeat(out["clean_prob"], n_levels),
        }
    )
