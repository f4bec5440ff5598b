"""What an ``evaluate`` run reports: per-variant accuracy with Wilson intervals, the
benchmark's metrics (:mod:`hf_bgbench.scoring`) and the report section the renderer draws."""

from __future__ import annotations

from typing import Any

import pandas as pd

from hf_bgbench.benchmarks import BenchmarkSpec
from hf_bgbench.formatting import interval, pct
from hf_bgbench.metrics import accuracy, per_class_accuracy, wilson_interval
from hf_bgbench.results import Figure, Report, Score, Table
from hf_bgbench.scoring import BOOTSTRAP_RESAMPLES, ScoringContext, compute_metrics


def summarize(
    spec: BenchmarkSpec,
    predictions: dict[str, pd.DataFrame],
    skipped: dict[str, list[dict[str, Any]]] | None = None,
    *,
    seed: int = 0,
    bootstrap_resamples: int = BOOTSTRAP_RESAMPLES,
) -> tuple[dict[str, Any], Report]:
    """(results keys, report) of a benchmark from per-variant prediction frames.

    Accuracies carry a 95% Wilson interval; the spec's metrics add theirs (IN-9's gaps: a
    95% paired-bootstrap interval over the images both variants share, seeded by ``seed``).
    """
    skipped = skipped or {}
    per_variant: dict[str, Any] = {}
    for variant, frame in predictions.items():
        if frame.empty:
            raise ValueError(f"{spec.name}/{variant}: no image could be scored.")
        per_class = per_class_accuracy(frame["pred"], frame["label"], spec.num_classes)
        correct = int((frame["pred"] == frame["label"]).sum())
        per_variant[variant] = {
            "accuracy": accuracy(frame["pred"], frame["label"]),
            "accuracy_ci95": list(wilson_interval(correct, len(frame))),
            "n": int(len(frame)),
            "per_class": {
                name: (None if pd.isna(acc) else float(acc))
                for name, acc in zip(spec.classes, per_class, strict=True)
            },
            "skipped": len(skipped.get(variant, [])),
            "skipped_ids": [s["id"] for s in skipped.get(variant, [])],
        }
    ctx = ScoringContext(
        {v: r["accuracy"] for v, r in per_variant.items()}, spec.classes, seed, bootstrap_resamples
    )
    metrics = compute_metrics(spec.metrics, predictions, ctx)
    body: dict[str, Any] = {"benchmark": spec.name, "variants": per_variant, **metrics.values}
    body["bootstrap"] = {"seed": seed, "resamples": bootstrap_resamples, "confidence": 0.95}
    return body, _report(spec, per_variant, metrics.report)


def _report(spec: BenchmarkSpec, per_variant: dict[str, Any], metrics: Report) -> Report:
    headline = [s for s in metrics.scores if s.headline]
    accuracy_scores = [
        Score(f"accuracy/{v}", v, r["accuracy"], ci95=r["accuracy_ci95"], n=r["n"], config=v)
        for v, r in per_variant.items()
    ]
    variants_table = Table(
        "variants",
        "Accuracy per variant:",
        ["variant", "accuracy (%)", "95% CI", "n", "skipped"],
        [
            [v, pct(r["accuracy"]), interval(r["accuracy_ci95"]), str(r["n"]), str(r["skipped"])]
            for v, r in per_variant.items()
        ],
    )
    gaps = [s for s in metrics.scores if s.unit == "pts"]
    tables = [variants_table]
    if gaps:
        tables.append(
            Table(
                "gaps",
                "Gaps (percentage points):",
                ["gap", "points", "95% CI (paired bootstrap)"],
                [[s.label, pct(s.value), interval(s.ci95)] for s in gaps],
            )
        )
    tables += metrics.tables
    # the classes with images (a 1000-class benchmark's table would be mostly empty columns)
    shown = [
        c for c in spec.classes if any(r["per_class"][c] is not None for r in per_variant.values())
    ] or list(spec.classes)
    tables.append(
        Table(
            "per_class",
            "Per-class accuracy (%):",
            ["variant", *shown],
            [[v, *(pct(r["per_class"][c]) for c in shown)] for v, r in per_variant.items()],
        )
    )
    title = ""
    if headline:
        title = f" — {headline[0].short or headline[0].label} {pct(headline[0].value)} pts"
    figure = Figure(
        file="accuracy.png",
        title=f"accuracy per variant{title}",
        labels=list(per_variant),
        values=[100 * r["accuracy"] for r in per_variant.values()],
        ylabel="accuracy (%) with 95% CI",
        intervals=[[100 * x for x in r["accuracy_ci95"]] for r in per_variant.values()],
        reference=(100 / spec.num_classes, "chance"),
    )
    others = [s for s in metrics.scores if s not in headline]
    return Report(
        scores=[*headline, *accuracy_scores, *others],
        tables=tables,
        figures=[figure, *metrics.figures],  # a benchmark metric may add its own plots
    )


def protocol_note(body: dict[str, Any]) -> str:
    """The report's note on how the numbers were made (label protocol, preprocessing,
    intervals), from the results ``body``."""
    pre = ", ".join(f"{k}={v}" for k, v in body["preprocessing"].items())
    boot = body["bootstrap"]
    return (
        f"Protocol: {body['label_protocol']}. Preprocessing: {pre}. Intervals: Wilson "
        f"(accuracies), paired bootstrap over shared images (gaps; {boot['resamples']} "
        f"resamples, seed {boot['seed']})."
    )
