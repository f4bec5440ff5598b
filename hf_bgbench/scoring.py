"""Benchmark metrics over prediction frames, declared in each benchmark's spec.

A benchmark lists its metrics (``BenchmarkSpec.metrics``) as instances of the kinds below;
the ``evaluate`` task computes every one whose variants were scored, merges its values into
results.json under the metric's own keys and adds its scores and tables to the report. The
numbers come from the pure core in :mod:`hf_bgbench.metrics`; this module only aligns
prediction frames (id, label, pred, ...) by image id and labels the results.

Kinds: :class:`PairedGap` (acc(a) − acc(b) with a paired bootstrap interval),
:class:`PredictionCategories` (the Table 3 buckets of the IN-9 paper),
:class:`FrameMetric` (any function of the frames, for a benchmark's own metric), and the
drops against one reference variant (ImageNet-E): :class:`MeanDrop` (mean of the drops over
the variants present, with an interval and a bars figure), :class:`PerClassDrops` (the
classes that drop most) and :class:`AccuracyCurve` (accuracy along an ordered set of
variants, e.g. object size).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import pandas as pd

from hf_bgbench.formatting import pct
from hf_bgbench.metrics import (
    paired_bootstrap_difference,
    prediction_categories,
    wilson_interval,
)
from hf_bgbench.metrics.intervals import bootstrap_means, percentile_interval
from hf_bgbench.results import Figure, Report, Score, Series, Table

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
    """``name`` = acc(``minuend``) − acc(``subtrahend``) over the images both variants
    scored (an image skipped in one is left out of both; the score's ``n`` is their number);
    95% interval by a seeded paired bootstrap over the same images (``<name>_ci95``)."""

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
        # over the images both variants scored (an image skipped in one is left out of both),
        # so the gap, its interval and its n are of the same images
        correct = shared_correct(frames, (self.minuend, self.subtrahend))
        value = None
        if len(correct):
            value = float(correct[self.minuend].mean() - correct[self.subtrahend].mean())
        interval = paired_gap_interval(
            frames[self.minuend], frames[self.subtrahend], ctx.seed, ctx.bootstrap_resamples
        )
        paired = len(correct)
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


def shared_correct(frames: Frames, variants: Sequence[str]) -> pd.DataFrame:
    """Per image id scored in every one of ``variants``: whether each variant's prediction
    is right (a column per variant, float 0/1). An id missing from one variant (e.g. an
    unreadable image, skipped) is left out of all, so differences compare the same images."""
    return (
        pd.concat([_correct(frames[v]).rename(v) for v in variants], axis=1).dropna().astype(float)
    )


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


def _correct(frame: pd.DataFrame) -> pd.Series:
    return (frame["pred"] == frame["label"]).set_axis(frame["id"])


@dataclass(frozen=True)
class MeanDrop:
    """``name`` = mean over the ``others`` present of acc(``reference``) − acc(other), over
    the ids every one of them scored; ``<name>_ci95``: a seeded bootstrap over the same ids
    (so the number lies in its interval); ``<name>_variants``: what was averaged;
    ``<name>_reference``: the base the drops are taken from. Variants left out of ``others``
    (e.g. a control) are not averaged. Also a bars figure of each drop with its
    paired-bootstrap interval (``figure`` names the file)."""

    name: str
    reference: str
    others: tuple[str, ...]
    label: str
    figure: str = ""
    figure_title: str = "drop per variant"
    headline: bool = False
    short: str = ""
    description: str = ""

    @property
    def variants(self) -> tuple[str, ...]:
        return (self.reference,)

    def missing(self) -> dict[str, Any]:
        return {
            self.name: None,
            f"{self.name}_ci95": None,
            f"{self.name}_variants": [],
            f"{self.name}_reference": self.reference,
        }

    def compute(self, frames: Frames, ctx: ScoringContext) -> MetricOutput:
        present = [v for v in self.others if v in frames and v != self.reference]
        if not present:
            return MetricOutput(self.missing())
        # over the ids every one of them scored: the mean, its interval and n are of the
        # same images (an image skipped in one variant would otherwise count on one side only)
        correct = shared_correct(frames, (self.reference, *present))
        if not len(correct):
            return MetricOutput(self.missing())
        drops = [float(correct[self.reference].mean() - correct[v].mean()) for v in present]
        value = float(np.mean(drops))
        interval = None
        if len(correct):
            per_id = correct[self.reference] - correct[present].mean(axis=1)
            (means,) = bootstrap_means(
                per_id.to_numpy(), n_resamples=ctx.bootstrap_resamples, seed=ctx.seed
            )
            # Literal levels, as this interval has always used (see percentile_interval).
            interval = list(percentile_interval(means, quantiles=(0.025, 0.975)))
        score = Score(
            key=self.name,
            label=self.label,
            value=value,
            unit="pts",
            ci95=interval,
            n=len(correct),
            headline=self.headline,
            description=f"{self.description} Base: {self.reference}; averaged: "
            f"{', '.join(present)}.".strip(),
            short=self.short,
            latex=self.headline,
        )
        report = Report([score])
        if self.figure:
            # each bar over the images its edit shares with the reference, like its interval
            bars = []
            for v in present:
                pair = shared_correct(frames, (self.reference, v))
                bars.append(float(pair[self.reference].mean() - pair[v].mean()))
            intervals = [
                paired_gap_interval(
                    frames[self.reference], frames[v], ctx.seed, ctx.bootstrap_resamples
                )
                for v in present
            ]
            report.figures.append(
                Figure(
                    file=self.figure,
                    title=f"{self.figure_title} (mean {pct(value)} pts)",
                    labels=present,
                    values=[100 * d for d in bars],
                    ylabel=f"acc({self.reference}) − acc(variant), pts, 95% CI",
                    intervals=[None if iv is None else [100 * x for x in iv] for iv in intervals],
                    reference=(100 * value, "mean"),
                    ylim=None,
                )
            )
        values = {
            self.name: value,
            f"{self.name}_ci95": interval,
            f"{self.name}_variants": present,
            f"{self.name}_reference": self.reference,
        }
        return MetricOutput(values, report)


@dataclass(frozen=True)
class PerClassDrops:
    """Per class: accuracy on ``reference`` minus the mean accuracy over the ``others``
    present (``<name>``: class -> drop, for the classes with images), and a table of the
    ``top`` classes that drop most, with each one's worst variant."""

    name: str
    reference: str
    others: tuple[str, ...]
    top: int = 10

    @property
    def variants(self) -> tuple[str, ...]:
        return (self.reference,)

    def missing(self) -> dict[str, Any]:
        return {self.name: None}

    def compute(self, frames: Frames, ctx: ScoringContext) -> MetricOutput:
        present = [v for v in self.others if v in frames and v != self.reference]
        if not present:
            return MetricOutput(self.missing())

        # over the ids every variant scored, like the mean drop
        shared = shared_correct(frames, (self.reference, *present)).index
        frames = {v: frames[v][frames[v]["id"].isin(shared)] for v in (self.reference, *present)}

        def per_class(frame: pd.DataFrame) -> pd.Series:
            return (frame["pred"] == frame["label"]).groupby(frame["label"]).mean()

        ref = per_class(frames[self.reference])
        edited = pd.concat([per_class(frames[v]).rename(v) for v in present], axis=1)
        edited = edited.reindex(ref.index)
        drops = (ref - edited.mean(axis=1)).dropna().sort_values(ascending=False, kind="stable")
        counts = frames[self.reference].groupby("label").size()
        rows = []
        for label, drop in drops.head(self.top).items():
            worst = (ref[label] - edited.loc[label]).idxmax()
            rows.append(
                [
                    ctx.classes[int(label)],
                    str(int(counts[label])),
                    pct(ref[label]),
                    pct(edited.loc[label].mean()),
                    pct(drop),
                    f"{worst} ({pct(ref[label] - edited.loc[label, worst])})",
                ]
            )
        table = Table(
            key=self.name,
            title=f"Classes that drop most ({self.reference} − mean over {len(present)} "
            "variants, points):",
            columns=["class", "n", f"{self.reference} (%)", "variants (%)", "drop", "worst"],
            rows=rows,
        )
        values = {self.name: {ctx.classes[int(k)]: float(v) for k, v in drops.items()}}
        return MetricOutput(values, Report(tables=[table]))


@dataclass(frozen=True)
class AccuracyCurve:
    """Accuracy (with its Wilson interval, recomputed here) along ``points`` -- (variant,
    tick label) in order -- as a lines figure; ``reference`` is drawn as a dashed line.
    ``<name>``: {"variants", "ticks", "accuracy"} for the variants present."""

    name: str
    points: tuple[tuple[str, str], ...]
    reference: str
    title: str
    xlabel: str
    figure: str

    @property
    def variants(self) -> tuple[str, ...]:
        return (self.reference,)

    def missing(self) -> dict[str, Any]:
        return {self.name: None}

    def compute(self, frames: Frames, ctx: ScoringContext) -> MetricOutput:
        present = [(v, tick) for v, tick in self.points if v in frames]
        if not present:
            return MetricOutput(self.missing())
        accs = [float(ctx.accuracies[v]) for v, _ in present]
        intervals = []
        for v, _ in present:
            correct = _correct(frames[v])
            lo, hi = wilson_interval(int(correct.sum()), len(correct))
            intervals.append([100 * lo, 100 * hi])
        figure = Figure(
            file=self.figure,
            title=self.title,
            labels=[tick for _, tick in present],
            values=[100 * a for a in accs],
            ylabel="top-1 accuracy (%) with 95% CI",
            kind="lines",
            x=[float(i) for i in range(len(present))],
            xlabel=self.xlabel,
            series=[Series("accuracy", [100 * a for a in accs], intervals)],
            reference=(100 * float(ctx.accuracies[self.reference]), self.reference),
        )
        values = {
            self.name: {
                "variants": [v for v, _ in present],
                "ticks": [t for _, t in present],
                "accuracy": accs,
            }
        }
        return MetricOutput(values, Report(figures=[figure]))


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
