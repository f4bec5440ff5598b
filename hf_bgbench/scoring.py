"""Benchmark metrics over prediction frames, declared in each benchmark's spec.

A benchmark lists its metrics (``BenchmarkSpec.metrics``) as instances of the kinds below;
the ``evaluate`` task computes every one whose variants were scored, merges its values into
results.json under the metric's own keys and adds its scores and tables to the report. The
numbers come from the pure core in :mod:`hf_bgbench.metrics`; this module only aligns
prediction frames (id, label, pred, ...) by image id and labels the results.

Kinds: :class:`PairedGap` (acc(a) − acc(b) with a paired bootstrap interval),
:class:`PredictionCategories` (the Table 3 buckets of the IN-9 paper) and
:class:`FrameMetric` (any function of the frames, for a benchmark's own metric).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import pandas as pd

from hf_bgbench.metrics import paired_bootstrap_difference, prediction_categories
from hf_bgbench.render import pct
from hf_bgbench.results import Report, Score, Table

BOOTSTRAP_RESAMPLES = 1000
Frames = Mapping[str, pd.DataFrame]  # variant -> predictions (id, label, pred, ...)


@dataclass(frozen=True)
class ScoringContext:
    """What a metric may use besides the frames: the per-variant accuracies the task
    computed, the class names, and the seed and resamples of the bootstrap intervals."""

    accuracies: Mapping[str, float]
    classes: tuple[str, ...]
    seed: int = 0
    bootstrap_resamples: int = BOOTSTRAP_RESAMPLES


@dataclass
class MetricOutput:
    values: dict[str, Any] = field(default_factory=dict)  # merged into results.json
    report: Report = field(default_factory=Report)


class BenchmarkMetric(Protocol):
    name: str
    variants: tuple[str, ...]  # the variants it needs; skipped when one was not scored

    def compute(self, frames: Frames, ctx: ScoringContext) -> MetricOutput: ...

    def missing(self) -> dict[str, Any]:
        """Its result keys when its variants were not scored (documented as null)."""
        ...


@dataclass(frozen=True)
class PairedGap:
    """``name`` = acc(``minuend``) − acc(``subtrahend``); 95% interval by a seeded paired
    bootstrap over the images both variants share (``<name>_ci95``)."""

    name: str
    minuend: str
    subtrahend: str
    label: str
    short: str = ""
    description: str = ""
    headline: bool = False

    @property
    def variants(self) -> tuple[str, ...]:
        return (self.minuend, self.subtrahend)

    def missing(self) -> dict[str, Any]:
        return {self.name: None, f"{self.name}_ci95": None}

    def compute(self, frames: Frames, ctx: ScoringContext) -> MetricOutput:
        value = float(ctx.accuracies[self.minuend]) - float(ctx.accuracies[self.subtrahend])
        interval = paired_gap_interval(
            frames[self.minuend], frames[self.subtrahend], ctx.seed, ctx.bootstrap_resamples
        )
        paired = len(shared_ids(frames[self.minuend], frames[self.subtrahend]))
        score = Score(
            key=self.name,
            label=self.label,
            value=value,
            unit="pts",
            ci95=interval,
            n=paired,
            headline=self.headline,
            description=self.description,
            short=self.short,
            latex=self.headline,
        )
        return MetricOutput({self.name: value, f"{self.name}_ci95": interval}, Report([score]))


def shared_ids(first: pd.DataFrame, second: pd.DataFrame) -> set:
    return set(first["id"]) & set(second["id"])


def paired_gap_interval(
    first: pd.DataFrame, second: pd.DataFrame, seed: int, resamples: int
) -> list[float] | None:
    """95% paired-bootstrap interval of acc(first) − acc(second) over their shared ids."""
    paired = first.merge(second, on="id", suffixes=("_a", "_b"))
    if paired.empty:
        return None
    return list(
        paired_bootstrap_difference(
            (paired["pred_a"] == paired["label_a"]).to_numpy(),
            (paired["pred_b"] == paired["label_b"]).to_numpy(),
            n_resamples=resamples,
            seed=seed,
        )
    )


CATEGORY_LABELS = {
    "bg_required": "BG Required",
    "bg_fg_required": "BG+FG Required",
    "bg_irrelevant": "BG Irrelevant",
    "bg_fools": "BG Fools",
    "other": "Other",
}


@dataclass(frozen=True)
class PredictionCategories:
    """The paper's Table 3 buckets over the images scored in all three ``roles``
    (full image, foreground only, background only): ``categories`` (five fractions),
    ``categories_n`` and ``categories_roles``."""

    roles: Mapping[str, str]  # {"full": variant, "foreground": variant, "background": variant}
    name: str = "categories"

    @property
    def variants(self) -> tuple[str, ...]:
        return tuple(self.roles.values())

    def missing(self) -> dict[str, Any]:
        return {"categories": None, "categories_n": 0, "categories_roles": None}

    def compute(self, frames: Frames, ctx: ScoringContext) -> MetricOutput:
        views = {role: frames[v].set_index("id") for role, v in self.roles.items()}
        common = sorted(set.intersection(*(set(v.index) for v in views.values())))
        if not common:
            return MetricOutput(self.missing())
        labels = {role: v.loc[common, "label"].to_numpy() for role, v in views.items()}
        if any((labels[r] != labels["full"]).any() for r in labels):
            raise ValueError("The labels of one image id differ between variants.")
        cats = prediction_categories(
            views["full"].loc[common, "pred"].to_numpy(),
            views["foreground"].loc[common, "pred"].to_numpy(),
            views["background"].loc[common, "pred"].to_numpy(),
            labels["full"],
        )
        roles = dict(self.roles)
        table = Table(
            key="categories",
            title=(
                f"Prediction categories over {len(common)} images (full = {roles['full']}, "
                f"foreground = {roles['foreground']}, background = {roles['background']}):"
            ),
            columns=["category", "%"],
            rows=[[CATEGORY_LABELS[k], pct(cats[k])] for k in CATEGORY_LABELS],
        )
        values = {"categories": cats, "categories_n": len(common), "categories_roles": roles}
        return MetricOutput(values, Report(tables=[table]))


@dataclass(frozen=True)
class FrameMetric:
    """A benchmark's own metric: ``fn(frames) -> float | None`` over the listed variants,
    stored under ``name`` and shown with ``label`` (``unit`` as in :class:`Score`)."""

    name: str
    label: str
    fn: Callable[[Frames], float | None]
    variants: tuple[str, ...] = ()
    unit: str = "%"
    headline: bool = False
    description: str = ""

    def missing(self) -> dict[str, Any]:
        return {self.name: None}

    def compute(self, frames: Frames, ctx: ScoringContext) -> MetricOutput:
        value = self.fn(frames)
        value = None if value is None else float(value)
        score = Score(
            key=self.name,
            label=self.label,
            value=value,
            unit=self.unit,
            headline=self.headline,
            description=self.description,
        )
        return MetricOutput({self.name: value}, Report([score]))


def compute_metrics(
    metrics: tuple[BenchmarkMetric, ...], frames: Frames, ctx: ScoringContext
) -> MetricOutput:
    """Every metric whose variants are all in ``frames``; the others get their null keys."""
    out = MetricOutput()
    for metric in metrics:
        if all(v in frames for v in metric.variants):
            result = metric.compute(frames, ctx)
        else:
            result = MetricOutput(metric.missing())
        out.values.update(result.values)
        out.report.extend(result.report)
    return out
