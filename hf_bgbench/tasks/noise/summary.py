"""What a noise-analysis run reports: its numbers (all from :mod:`hf_bgbench.metrics.noise`)
and its per-image table; its report is made from them by :mod:`hf_bgbench.tasks.noise.report`."""

from __future__ import annotations

from dataclasses import dataclass
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


@dataclass(frozen=True)
class _NoisyCopies:
    """A run's predictions of its noisy copies, with what every number of them is computed
    with: the iRFS per (image, level), the number of classes, the seed and the aggregation."""

    out: dict[str, Any]
    irfs: np.ndarray
    num_classes: int
    seed: int
    aggregation: str

    def everyone(self) -> np.ndarray:
        """Every image of the run, as a row selection."""
        return np.ones(len(self.out["labels"]), bool)

    def all_levels(self) -> list[int]:
        """The indices of every level."""
        return list(range(self.irfs.shape[1]))

    def stats(
        self,
        images: np.ndarray,
        levels: list[int],
        *,
        with_ci: bool = True,
        class_names: list[str] | None = None,
        aggregation: str | None = None,
    ) -> dict[str, Any]:
        """:func:`_stats` of the rows ``images`` at the level indices ``levels``, in the run's
        aggregation unless ``aggregation`` names another."""
        return _stats(
            self.out,
            self.irfs,
            images,
            levels,
            self.num_classes,
            self.seed,
            aggregation or self.aggregation,
            with_ci,
            class_names,
        )


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
    report = _rfs_numbers(pred, per_image, labels, num_classes, aggregation)
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
        stats |= _rfs_intervals(per_image, labels, seed, aggregation, class_names)
    return stats


def _rfs_numbers(
    pred: np.ndarray,
    per_image: np.ndarray,
    labels: np.ndarray,
    num_classes: int,
    aggregation: str,
) -> dict[str, Any]:
    """a_fg, a_bg and RFS of the predictions ``pred`` (n, l, 2, T): class means of the
    per-image shares right ``per_image`` (n, 2), or pooled over every noisy copy."""
    if aggregation == "class-mean":
        return rfs_class_mean(per_image[:, FG], per_image[:, BG], labels, num_classes)
    ref = np.broadcast_to(labels[:, None, None], pred[:, :, FG].shape)
    return rfs_report(
        pred[:, :, FG].ravel(), pred[:, :, BG].ravel(), ref.ravel(), num_classes=num_classes
    )


def _rfs_intervals(
    per_image: np.ndarray,
    labels: np.ndarray,
    seed: int,
    aggregation: str,
    class_names: list[str] | None,
) -> dict[str, Any]:
    """The bootstrap intervals of a_fg, a_bg and RFS over images (stratified by class for
    class means), and under ``intervals_withheld`` why any of them is None."""
    fg, bg = per_image[:, FG], per_image[:, BG]
    if aggregation == "class-mean":
        ci = rfs_class_mean_intervals(fg, bg, labels, n_resamples=BOOTSTRAP_RESAMPLES, seed=seed)
    else:
        ci = rfs_bootstrap_intervals(fg, bg, n_resamples=BOOTSTRAP_RESAMPLES, seed=seed)
    groups = labels if aggregation == "class-mean" else None
    inputs = {"a_fg": (fg,), "a_bg": (bg,), "rfs": (fg, bg)}
    intervals, withheld = {}, {}
    for key, name in (("a_fg", "accuracy_fg_noise"), ("a_bg", "accuracy_bg_noise"), ("rfs", "rfs")):
        intervals[f"{key}_ci95"] = None if ci[name] is None else list(ci[name])
        if ci[name] is None:
            withheld[key] = resampling_gap(*inputs[key], groups=groups, names=class_names)
    return intervals | ({WITHHELD: withheld} if withheld else {})


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
    p_fg, p_bg, irfs = _trial_means(out, len(levels))
    copies = _NoisyCopies(out, irfs, spec.num_classes, seed, aggregation)
    body = _numbers(spec, copies, levels, norm, trials)
    return body, _per_image_frame(spec, out, levels, norm, p_fg, p_bg, irfs)


def _numbers(
    spec: Any, copies: _NoisyCopies, levels: list[float], norm: str, trials: int
) -> dict[str, Any]:
    """The run's numbers for results.json (see :func:`summarize`)."""
    labels, names = copies.out["labels"], list(spec.classes)
    seed, aggregation = copies.seed, copies.aggregation
    everyone, all_levels = copies.everyone(), copies.all_levels()
    overall = copies.stats(everyone, all_levels, class_names=names)
    per_level = [
        _level_entry(lv, norm)
        | copies.stats(everyone, [i], class_names=names)
        | {"n_trials": trials}
        for i, lv in enumerate(levels)
    ]
    per_class = _per_class(spec, copies, levels, norm)
    clean_right = copies.out["clean_pred"] == labels
    clean = _clean_accuracy(clean_right, labels, int(clean_right.sum()), seed, aggregation, names)
    withheld = overall.get(WITHHELD, {}) | clean.pop(WITHHELD, {})
    return {
        "norm": norm,
        "aggregation": aggregation,
        **_headline(overall, per_level),
        **clean,
        "n_images": len(labels),
        "trials": trials,
        "seed": seed,
        "levels": per_level,
        "per_class": per_class,
        **_secondary(copies, clean_right),
        "noise": _noise_record(norm),
        "bootstrap": {"resamples": BOOTSTRAP_RESAMPLES, "seed": seed, "unit": "image"},
        "per_image_file": PER_IMAGE_FILE,
        **({WITHHELD: withheld} if withheld else {}),
    }


def _trial_means(out: dict[str, Any], n_levels: int) -> tuple[np.ndarray, ...]:
    """(p_fg, p_bg, iRFS), each (image, level): the true-class probabilities averaged over
    the trials (the authors' core), and the iRFS of those two."""
    p_fg = out["prob"][:, :, FG].mean(axis=-1)
    p_bg = out["prob"][:, :, BG].mean(axis=-1)
    irfs = instance_rfs(p_fg.ravel(), p_bg.ravel()).reshape(len(out["labels"]), n_levels)
    return p_fg, p_bg, irfs


def _level_entry(level: float, norm: str) -> dict[str, float]:
    """A level as results name it: as given, and as σ or ε."""
    return {"level": level, level_key(norm): level_size(level, norm)}


def _headline(overall: dict[str, Any], per_level: list[dict[str, Any]]) -> dict[str, Any]:
    """RFS, a_fg and a_bg with their intervals, ā, the mean per-level RFS and the mean
    iRFS, over all levels and images."""
    return {
        **{k: overall[k] for k in ("rfs", "rfs_ci95", "a_fg", "a_fg_ci95", "a_bg", "a_bg_ci95")},
        "mean_accuracy": overall["mean_accuracy"],
        # not a number the authors report (their Fig. 6 is the RFS of averaged accuracies)
        "rfs_mean_over_levels": float(np.mean([lv["rfs"] for lv in per_level])),
        "irfs_mean": overall["irfs_mean"],
    }


def _per_class(spec: Any, copies: _NoisyCopies, levels: list[float], norm: str) -> dict[str, Any]:
    """Per class present: its numbers over all levels (with intervals), its clean accuracy,
    its iRFS histogram and its numbers per level (without intervals)."""
    labels, names, irfs = copies.out["labels"], list(spec.classes), copies.irfs
    clean_right = copies.out["clean_pred"] == labels
    all_levels = copies.all_levels()
    per_class = {}
    for c, name in enumerate(spec.classes):
        mine = labels == c
        if not mine.any():
            continue
        per_class[name] = copies.stats(mine, all_levels, class_names=names) | {
            "clean_accuracy": float(clean_right[mine].mean()),
            "irfs_histogram": {  # one value per image and level, as the authors plot it
                "edges": IRFS_BIN_EDGES.tolist(),
                "counts": np.histogram(irfs[mine], bins=IRFS_BIN_EDGES)[0].tolist(),
            },
            "levels": [
                _level_entry(lv, norm) | copies.stats(mine, [i], with_ci=False)
                for i, lv in enumerate(levels)
            ],
        }
    return per_class


def _secondary(copies: _NoisyCopies, clean_right: np.ndarray) -> dict[str, Any]:
    """The numbers beside the headline: the image-pooled ones when the headline is class
    means, and the per-attribute ones when the data has attribute masks."""
    secondary = {}
    if copies.aggregation == "class-mean":  # today's image-weighted numbers, labelled as such
        pooled = copies.stats(copies.everyone(), copies.all_levels(), aggregation="image-pooled")
        secondary["image_pooled"] = {
            "note": "every noisy copy weighs the same (not the paper's aggregation)",
            **{k: pooled[k] for k in ("a_fg", "a_fg_ci95", "a_bg", "a_bg_ci95", "rfs", "rfs_ci95")},
            **({WITHHELD: pooled[WITHHELD]} if WITHHELD in pooled else {}),
        }
    if copies.out.get("attributes") is not None:
        secondary["per_attribute"] = _per_attribute(copies.out, clean_right, copies.seed)
    return secondary


def _noise_record(norm: str) -> dict[str, Any]:
    """How the noise was made, for results.json."""
    return {
        "norm": norm,
        "levels_given_as": "sigma x 255 (sigma = level / 255)"
        if norm == "linf"
        else "epsilon, the l2 norm of each region's noise (pixels in [0, 1])",
        "same_noise_for_fg_and_bg": True,
        "generator": "torch.Generator on the device per (seed, norm, level, image id), "
        "seeded with sha256; all trials of an image drawn in one call",
    }


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
