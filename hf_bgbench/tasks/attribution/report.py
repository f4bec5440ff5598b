"""The attribution run's report section (rendered by :mod:`hf_bgbench.render` like every
task): the mean train and test IoU of the best features and their gap, the table of the best
feature per (class, attribute) and the train-vs-test scatter (the paper's Fig. 10); the
numbers come from :func:`hf_bgbench.tasks.attribution.summary.summarize`."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from hf_bgbench.results import Figure, Report, Score, Table


def build_report(body: Mapping[str, Any]) -> Report:
    """Scores, the pairs table and the scatter of an attribution run."""
    return Report(_scores(body), [_pairs_table(body)], _scatter(body), [])


def _scores(body: Mapping[str, Any]) -> list[Score]:
    """The mean train and test IoU of the best features (headline) and their gap."""
    how = (
        f"(top {body['top_k']} images per class and feature; Grad-CAM binarised at "
        f"{body['tau']:g} x max)"
    )
    unseen = "(does the attribution generalise to unseen images?)"
    train = "Mean IoU of the best feature per attribute, train"
    test = "Mean IoU of the same features, test"
    return [
        _score(body, "mean_train_iou", train, headline=True, short="Train IoU", description=how),
        _score(body, "mean_test_iou", test, headline=True, short="Test IoU", description=unseen),
        _score(body, "iou_gap", "Train − test IoU", unit="pts", short="Gap"),
    ]


def _score(body: Mapping[str, Any], key: str, label: str, **shown: Any) -> Score:
    """The score ``key`` with its interval, over the pairs with a test value."""
    return Score(key, label, body[key], ci95=body[f"{key}_ci95"], n=body["n_pairs_tested"], **shown)


def _pairs_table(body: Mapping[str, Any]) -> Table:
    """The best feature per (class, attribute), its train and test IoU and counts."""
    return Table(
        "pairs",
        "Best feature per class and attribute:",
        ["Class", "Attribute", "Feature", "Train IoU", "n", "Test IoU", "n"],
        [_pair_cells(p) for p in body["pairs"]],
        note="IoU averaged over the top images (an image without the attribute counts 0); "
        "n = top images with the attribute / top images. 95% intervals of the means: "
        f"percentile bootstrap over the pairs ({body['bootstrap']['resamples']} resamples, "
        f"seed {body['bootstrap']['seed']}).",
    )


def _pair_cells(pair: Mapping[str, Any]) -> list[str]:
    """One pair's row of the pairs table."""
    return [
        pair["class"],
        pair["attribute"],
        str(pair["feature"]),
        _iou(pair["train_iou"]),
        f"{pair['train_n']}/{pair['train_k']}",
        _iou(pair["test_iou"]),
        f"{pair['test_n']}/{pair['test_k']}",
    ]


def _iou(value: float | None) -> str:
    """An IoU cell: three decimals, or a dash where there is none."""
    return "—" if value is None or math.isnan(value) else f"{value:.3f}"


def _scatter(body: Mapping[str, Any]) -> list[Figure]:
    """The train-vs-test IoU scatter of the pairs with a test value (none without one)."""
    both = [p for p in body["pairs"] if p["test_iou"] is not None]
    if not both:
        return []
    return [
        Figure(
            file="attribution.png",
            title=f"{body['model']}: best feature per attribute, train vs test IoU",
            labels=[f"{p['class']}/{p['attribute']}" for p in both],
            values=[100 * p["test_iou"] for p in both],
            x=[100 * p["train_iou"] for p in both],
            ylabel="test IoU (%)",
            xlabel="train IoU (%)",
            kind="scatter",
            diagonal=True,
            xlim=(0.0, 105.0),
        )
    ]
