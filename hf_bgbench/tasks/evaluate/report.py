"""The report section of an ``evaluate`` run: the headline and accuracy scores, the tables
(accuracy per variant, gaps, per-class accuracy), the accuracy figure, and for repeated
builds of the data the runs table and note (rendered by :mod:`hf_bgbench.render` like every
task's). The numbers come from :mod:`hf_bgbench.tasks.evaluate.summary`."""

from __future__ import annotations

from typing import Any

from hf_bgbench.benchmarks import BenchmarkSpec
from hf_bgbench.formatting import interval, number, pct
from hf_bgbench.results import Figure, Report, Score, Table, percent_bars


def build_report(spec: BenchmarkSpec, per_variant: dict[str, Any], metrics: Report) -> Report:
    """The report section from the numbers per variant and the benchmark metrics' report."""
    headline = [s for s in metrics.scores if s.headline]
    others = [s for s in metrics.scores if s not in headline]
    return Report(
        scores=[*headline, *_accuracy_scores(per_variant), *others],
        tables=_tables(spec, per_variant, metrics),
        figures=[_accuracy_figure(spec, per_variant, headline), *metrics.figures],
        notes=list(metrics.notes),  # e.g. a headline not computed, and why
    )


def _accuracy_scores(per_variant: dict[str, Any]) -> list[Score]:
    """One accuracy score per variant, with its interval and n."""
    return [
        Score(f"accuracy/{v}", v, r["accuracy"], ci95=r["accuracy_ci95"], n=r["n"], config=v)
        for v, r in per_variant.items()
    ]


def _tables(spec: BenchmarkSpec, per_variant: dict[str, Any], metrics: Report) -> list[Table]:
    """The tables in order: per variant, the gaps (if any), the metrics' own, per class."""
    gaps = _gaps_table([s for s in metrics.scores if s.unit == "pts"])
    return [
        _variants_table(spec, per_variant),
        *([gaps] if gaps else []),
        *metrics.tables,
        _per_class_table(spec, per_variant),
    ]


def _variants_table(spec: BenchmarkSpec, per_variant: dict[str, Any]) -> Table:
    """Accuracy per variant, the variants it shows defined beneath it."""
    defined = [f"{v} = {spec.variant_text[v]}" for v in per_variant if v in spec.variant_text]
    return Table(
        "variants",
        "Accuracy per variant:",
        ["variant", "accuracy (%)", "95% CI", "n", "skipped"],
        [
            [v, pct(r["accuracy"]), interval(r["accuracy_ci95"]), str(r["n"]), str(r["skipped"])]
            for v, r in per_variant.items()
        ],
        note=("Variants: " + "; ".join(defined) + ".") if defined else "",
    )


def _gaps_table(gaps: list[Score]) -> Table | None:
    """The gap scores (percentage points) with their paired-bootstrap intervals; None
    when the benchmark has no gap."""
    if not gaps:
        return None
    return Table(
        "gaps",
        "Gaps (percentage points):",
        ["gap", "points", "95% CI (paired bootstrap)"],
        [[s.label, pct(s.value), interval(s.ci95)] for s in gaps],
    )


def _per_class_table(spec: BenchmarkSpec, per_variant: dict[str, Any]) -> Table:
    """Accuracy per class and variant, over the classes that have images."""
    # the classes with images (a 1000-class benchmark's table would be mostly empty columns)
    shown = [
        c for c in spec.classes if any(r["per_class"][c] is not None for r in per_variant.values())
    ] or list(spec.classes)
    return Table(
        "per_class",
        "Per-class accuracy (%):",
        ["variant", *shown],
        [[v, *(pct(r["per_class"][c]) for c in shown)] for v, r in per_variant.items()],
    )


def _accuracy_figure(
    spec: BenchmarkSpec, per_variant: dict[str, Any], headline: list[Score]
) -> Figure:
    """The bar chart of accuracy per variant with its intervals, the headline in its title."""
    title = ""
    if headline:
        title = f" — {headline[0].short or headline[0].label} {pct(headline[0].value)} pts"
    return percent_bars(
        per_variant,
        "accuracy",
        file="accuracy.png",
        title=f"accuracy per variant{title}",
        ylabel="accuracy (%) with 95% CI",
        reference=(100 / spec.num_classes, "chance"),
    )


def runs_table(spread: dict[str, Any], units: dict[str, str]) -> Table:
    """The runs table: each number's mean, spread and value per run (``spread``: the
    results' ``runs``; ``units``: each number's unit)."""
    names = spread["names"]
    return Table(
        "runs",
        f"Mean and spread over {len(names)} runs (std: sample standard deviation):",
        ["number", "mean", "std", "min", "max", *names],
        [
            [
                key,
                *(number(spread[part][key], units[key]) for part in ("mean", "std", "min", "max")),
                *(number(spread["per_run"][name][key], units[key]) for name in names),
            ]
            for key in spread["mean"]
        ],
    )


def runs_note(names: list[str], n_images: int, uneven: list[str]) -> str:
    """The note on numbers pooled over runs of the data: what n and the intervals count,
    and how the runs are weighted (``uneven``: the variants whose size differs by run)."""
    return (
        f"Scored over {len(names)} runs of the data ({', '.join(names)}), repeated "
        f"measurements of the same {n_images} images: the numbers above pool the runs "
        "(paired differences pair an image with itself within a run); n counts images, and "
        "the 95% intervals resample images, each with all its runs, so they reflect the "
        "images' uncertainty, not the runs' (the runs table gives each run's numbers and "
        "their spread); "
        + (
            f"which weights the runs by their images: {', '.join(uneven)} differ in size "
            "between runs; the runs table gives the plain mean over runs."
            if uneven
            else "which with runs of equal size is the mean over the runs; the runs table "
            "gives each run's numbers and their spread."
        )
    )
