"""What an attribution run computes and keeps: per (class, attribute) the best feature with
its train and test IoU, their means and the gap, and the gallery of the best features'
Grad-CAMs on their top images; its report section (with the train-vs-test scatter, the
paper's Fig. 10) is built from the numbers by :mod:`hf_bgbench.tasks.attribution.report`."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hf_bgbench.metrics.intervals import bootstrap_intervals, difference_of_means, mean_of
from hf_bgbench.results import WITHHELD
from hf_bgbench.scoring import BOOTSTRAP_RESAMPLES
from hf_bgbench.tasks.attribution.options import GALLERY_FILE

STEM = "attribution"
RESULT_KEYS = [
    "top_k",
    "tau",
    *(
        f"{key}{ci}"
        for key in ("mean_train_iou", "mean_test_iou", "iou_gap")
        for ci in ("", "_ci95")
    ),
    "n_pairs",
    "pairs",
]


def summarize(out: Mapping[str, Any], top_k: int, tau: float, seed: int) -> dict[str, Any]:
    """The numbers: every (class, attribute) pair, the mean train and test IoU of the best
    features (over the pairs with a test value), their difference, and percentile bootstrap
    intervals over those pairs (paired: a pair's two IoUs are resampled together)."""
    pairs = out["pairs"]
    both = [p for p in pairs if p["test_iou"] is not None]
    means, withheld = _mean_ious(both, seed)
    return (
        {"top_k": int(top_k), "tau": float(tau)}
        | means
        | {
            "n_pairs": len(pairs),
            "n_pairs_tested": len(both),
            "pairs": pairs,
            "feature_dim": out["feature_dim"],
            "examined_features": out["examined"],
            "n_train_images": out["n_train"],
            "n_test_images": out["n_test"],
            "bootstrap": {"resamples": BOOTSTRAP_RESAMPLES, "seed": seed, "unit": "pair"},
            **({WITHHELD: withheld} if withheld else {}),
        }
    )


def _mean_ious(
    both: Sequence[Mapping[str, Any]], seed: int
) -> tuple[dict[str, Any], dict[str, str]]:
    """The mean train and test IoU over ``both`` (the pairs with a test value) and their
    difference, each with its paired bootstrap interval (all None without a pair), and why
    an interval is withheld."""
    train = np.array([p["train_iou"] for p in both], float)
    test = np.array([p["test_iou"] for p in both], float)
    numbers: dict[str, Any] = {}
    for key in ("mean_train_iou", "mean_test_iou", "iou_gap"):
        numbers |= {key: None, f"{key}_ci95": None}
    withheld: dict[str, str] = {}
    if not both:
        return numbers, withheld
    intervals = bootstrap_intervals(
        {"train": train, "test": test},
        {
            "mean_train_iou": mean_of("train"),
            "mean_test_iou": mean_of("test"),
            "iou_gap": difference_of_means("train", "test"),
        },
        n_resamples=BOOTSTRAP_RESAMPLES,
        seed=seed,
    )
    values = {
        "mean_train_iou": train.mean(),
        "mean_test_iou": test.mean(),
        "iou_gap": train.mean() - test.mean(),
    }
    for key, (bounds, gap) in intervals.items():
        ci95 = None if bounds is None else list(bounds)
        numbers |= {key: float(values[key]), f"{key}_ci95": ci95}
        withheld |= {key: gap} if gap else {}
    return numbers, withheld


def best_features(scores: Any, classes: Sequence[int]) -> dict[tuple[int, str], int]:
    """Per (class, attribute) seen among some examined feature's top images: the feature
    with the highest mean IoU (ties: the lower feature index)."""
    best: dict[tuple[int, str], tuple[float, int]] = {}
    for c, f, a in sorted(scores.present):
        value = scores.mean(c, f, a)
        if c in classes and ((c, a) not in best or value > best[(c, a)][0]):
            best[(c, a)] = (value, f)
    return {key: f for key, (_, f) in best.items()}


def pair_rows(
    names: Sequence[str], best: Mapping[tuple[int, str], int], train: Any, test: Any
) -> list[dict[str, Any]]:
    """One row per (class, attribute): its best feature, the mean IoU and counts on the
    train and test top images (``test_iou`` None when the class has no test image)."""
    return [
        {
            "class": names[c],
            "attribute": a,
            "feature": f,
            "train_iou": train.mean(c, f, a),
            "train_n": train.present.get((c, f, a), 0),
            "train_k": train.done.get((c, f), 0),
            "test_iou": test.mean(c, f, a) if (c, f) in test.done else None,
            "test_n": test.present.get((c, f, a), 0),
            "test_k": test.done.get((c, f), 0),
        }
        for (c, a), f in sorted(best.items())
    ]


def gallery_rows(pairs: Sequence[Mapping[str, Any]], most: int) -> list[Mapping[str, Any]]:
    """The ``most`` pairs with the highest train IoU (ties: table order)."""
    ranked = sorted(enumerate(pairs), key=lambda ip: (-ip[1]["train_iou"], ip[0]))
    return [p for _, p in ranked[:most] if p["train_iou"] > 0]


def writers(out: Mapping[str, Any], body: Mapping[str, Any]) -> dict[str, Callable[[Path], None]]:
    if not out["panels"]:
        return {}
    title = f"{body['model']}: best feature per attribute, Grad-CAM on its top train images"
    from hf_bgbench.tasks.attribution.gallery import draw_gallery

    return {GALLERY_FILE: lambda path: draw_gallery(out["gallery"], out["panels"], title, path)}
