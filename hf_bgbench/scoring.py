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
the variants present, with an interval and a bars figure), :class:`MeanAccuracy` (the mean
accuracy over a set of variants, the drops' higher-is-better companion), :class:`PerClassDrops` (the
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
    newcombe_interval,
    prediction_categories,
    wilson_interval,
)
from hf_bgbench.metrics.intervals import bootstrap_intervals, resampling_gap
from hf_bgbench.results import WITHHELD, Figure, Report, Score, Series, Table

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
class AccuracyGap:
    """What a gap between two variants' accuracies declares: ``name`` = acc(``minuend``) −
    acc(``subtrahend``), its ``label``, LaTeX column (``short``) and ``description``."""

    name: str
    minuend: str
    subtrahend: str
    label: str
    short: str = ""
    description: str = ""

    @property
    def variants(self) -> tuple[str, ...]:
        return (self.minuend, self.subtrahend)


@dataclass(frozen=True)
class PairedGap(AccuracyGap):
    """An :class:`AccuracyGap` over the images both variants scored (an image skipped in
    one is left out of both; the score's ``n`` is their number); 95% interval by a seeded
    paired bootstrap over the same images (``<name>_ci95``)."""

    headline: bool = False

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
        paired = len(per_image(correct[self.minuend], frames[self.minuend]))  # images
        gap = paired_gap_withheld(frames[self.minuend], frames[self.subtrahend])
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
        values = {self.name: value, f"{self.name}_ci95": interval}
        return MetricOutput(values | ({WITHHELD: {self.name: gap}} if gap else {}), Report([score]))


@dataclass(frozen=True)
class UnpairedGap(AccuracyGap):
    """An :class:`AccuracyGap` where the two variants hold different images (ImageNet-D's
    clean photos against a generated subset). With
    ``same_classes`` the minuend counts only the images of classes the subtrahend holds, so
    a class mix does not pass for a drop. 95% interval: Newcombe's hybrid score interval of
    two independent proportions (``<name>_ci95``); ``<name>_n`` the images on each side."""

    same_classes: bool = True

    def missing(self) -> dict[str, Any]:
        return {self.name: None, f"{self.name}_ci95": None, f"{self.name}_n": None}

    def compute(self, frames: Frames, ctx: ScoringContext) -> MetricOutput:
        first, second = frames[self.minuend], frames[self.subtrahend]
        if self.same_classes:
            first = first[first["label"].isin(set(second["label"]))]
        if first.empty or second.empty:
            return MetricOutput(self.missing())
        right = [int((f["pred"] == f["label"]).sum()) for f in (first, second)]
        value = right[0] / len(first) - right[1] / len(second)
        interval = list(newcombe_interval(right[0], len(first), right[1], len(second)))
        score = Score(
            key=self.name,
            label=self.label,
            value=value,
            unit="pts",
            ci95=interval,
            n=len(second),
            description=f"{self.description} Images: {self.minuend} {len(first)}, "
            f"{self.subtrahend} {len(second)}.".strip(),
            short=self.short,
            latex=False,
        )
        counts = {self.minuend: len(first), self.subtrahend: len(second)}
        values = {self.name: value, f"{self.name}_ci95": interval, f"{self.name}_n": counts}
        return MetricOutput(values, Report([score]))


def shared_ids(first: pd.DataFrame, second: pd.DataFrame) -> set:
    return set(first["id"]) & set(second["id"])


def shared_correct(frames: Frames, variants: Sequence[str]) -> pd.DataFrame:
    """Per image id scored in every one of ``variants``: whether each variant's prediction
    is right (a column per variant, float 0/1). An id missing from one variant (e.g. an
    unreadable image, skipped) is left out of all, so differences compare the same images."""
    return (
        pd.concat([_correct(frames[v]).rename(v) for v in variants], axis=1).dropna().astype(float)
    )


def accuracy_interval(
    frame: pd.DataFrame, seed: int, resamples: int
) -> tuple[list[float], str | None, int]:
    """(95% interval of the accuracy, why it is withheld, the number of images) of a
    variant's predictions: Wilson's over the images (never zero-width at 0% or 100%); over
    pooled runs (:func:`image_of`) Wilson's too when each image is right in all its runs or
    in none, else a bootstrap over images of each image's share of right runs."""
    right = (frame["pred"] == frame["label"]).set_axis(frame["id"])
    units = per_image(right, frame)
    if np.isin(units, (0.0, 1.0)).all():
        return list(wilson_interval(int(units.sum()), len(units))), None, len(units)
    return image_interval(right, frame, seed, resamples)


def _paired_difference(first: pd.DataFrame, second: pd.DataFrame) -> tuple[pd.Series, pd.DataFrame]:
    """(correct(first) − correct(second) per shared id, the shared rows' ids and runs)."""
    paired = first.merge(second, on="id", suffixes=("_a", "_b"))
    right_a = (paired["pred_a"] == paired["label_a"]).to_numpy(float)
    right_b = (paired["pred_b"] == paired["label_b"]).to_numpy(float)
    rows = paired[["id"]].copy()
    if f"{RUN_COLUMN}_a" in paired:
        rows[RUN_COLUMN] = paired[f"{RUN_COLUMN}_a"]
    return pd.Series(right_a - right_b, index=paired["id"].to_numpy()), rows


def paired_gap_interval(
    first: pd.DataFrame, second: pd.DataFrame, seed: int, resamples: int
) -> list[float] | None:
    """95% paired-bootstrap interval of acc(first) − acc(second) over their shared images
    (over pooled runs: each image's runs resampled together, :func:`image_of`); None when
    there are none, or when resampling cannot vary the gap (:func:`paired_gap_withheld`
    says why)."""
    difference, rows = _paired_difference(first, second)
    if difference.empty:
        return None
    return image_interval(difference, rows, seed, resamples)[0]


def paired_gap_withheld(first: pd.DataFrame, second: pd.DataFrame) -> str | None:
    """Why :func:`paired_gap_interval` is None over shared images, or None."""
    difference, rows = _paired_difference(first, second)
    return None if difference.empty else resampling_gap(per_image(difference, rows))


CATEGORY_LABELS = {
    "bg_required": "BG Required",
    "bg_fg_required": "BG+FG Required",
    "bg_irrelevant": "BG Irrelevant",
    "bg_fools": "BG Fools",
    "other": "Other",
}
CATEGORY_NOTE = (
    "BG Required: right on the full image and on the background alone, wrong on the "
    "foreground; BG+FG Required: right on the full image only; BG Irrelevant: full image and "
    "foreground alike right or alike wrong; BG Fools: wrong on the full image, right on the "
    "foreground, the background alone giving the same wrong class; Other: the rest (Xiao et "
    "al. 2021, Table 3)."
)


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
            note=CATEGORY_NOTE,  # the words define themselves only to those who read the paper
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


# Runs of repeated seeded builds pooled into one frame carry this column, and their ids are
# ``<run>/<id>`` (tasks.evaluate.summary.pool_runs).
RUN_COLUMN = "run"


def image_of(frame: pd.DataFrame) -> pd.Series:
    """The image each row measures, indexed by the row's id: the id itself, or, for runs
    pooled into one frame, the id within its run. Runs are repeated measurements of the same
    images, so a bootstrap resamples images -- each with all its runs -- never image x run
    rows, which would count one image once per run and make the interval too narrow."""
    ids = frame["id"].astype(str)
    if RUN_COLUMN not in frame:
        return pd.Series(ids.to_numpy(), index=frame["id"])
    images = [i[len(r) + 1 :] for i, r in zip(ids, frame[RUN_COLUMN].astype(str), strict=True)]
    return pd.Series(images, index=frame["id"])


def per_image(values: pd.Series, frame: pd.DataFrame) -> np.ndarray:
    """``values`` (indexed by the ids of ``frame``'s rows) as one value per image: as they
    are, or, over pooled runs, each image's mean over its runs (:func:`image_of`)."""
    if RUN_COLUMN not in frame:
        return values.to_numpy(float)
    return (
        values.astype(float)
        .groupby(image_of(frame).reindex(values.index).to_numpy())
        .mean()
        .to_numpy()
    )


def image_interval(
    values: pd.Series,
    frame: pd.DataFrame,
    seed: int,
    resamples: int,
    quantiles: tuple[float, float] | None = None,
) -> tuple[list[float] | None, str | None, int]:
    """(95% percentile interval of the mean over images, why it is withheld, the number of
    images) of per-row ``values``: a bootstrap over :func:`per_image` values, withheld when
    resampling cannot vary them (:func:`~hf_bgbench.metrics.intervals.resampling_gap`)."""
    units = per_image(values, frame)
    (interval,) = bootstrap_intervals(
        {"images": units}, n_resamples=resamples, seed=seed, quantiles=quantiles
    ).values()
    bounds = None if interval.bounds is None else list(interval.bounds)
    return bounds, interval.withheld, len(units)


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
        per_id = correct[self.reference] - correct[present].mean(axis=1)
        # Literal levels, as this interval has always used (see percentile_interval).
        interval, gap, n_images = image_interval(
            per_id,
            frames[self.reference],
            ctx.seed,
            ctx.bootstrap_resamples,
            quantiles=(0.025, 0.975),
        )
        score = Score(
            key=self.name,
            label=self.label,
            value=value,
            unit="pts",
            ci95=interval,
            n=n_images,
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
        return MetricOutput(values | ({WITHHELD: {self.name: gap}} if gap else {}), report)


@dataclass(frozen=True)
class MeanAccuracy:
    """``name`` = mean over the ``variants`` present of their accuracy, over the ids every
    one of them scored, with a seeded bootstrap interval over those images (``<name>_ci95``)
    and what was averaged (``<name>_variants``): e.g. ImageNet-E's accuracy on the edited
    images, the higher-is-better companion of its mean dropped accuracy."""

    name: str
    others: tuple[str, ...]
    label: str
    description: str = ""

    @property
    def variants(self) -> tuple[str, ...]:
        return ()  # computed from whichever of ``others`` were scored

    def missing(self) -> dict[str, Any]:
        return {self.name: None, f"{self.name}_ci95": None, f"{self.name}_variants": []}

    def compute(self, frames: Frames, ctx: ScoringContext) -> MetricOutput:
        present = [v for v in self.others if v in frames]
        correct = shared_correct(frames, tuple(present)) if present else None
        if correct is None or not len(correct):
            return MetricOutput(self.missing())
        per_id = correct[present].mean(axis=1)  # each image's accuracy over the variants
        # over images (an image's runs pooled), withheld when resampling cannot vary them
        interval, gap, n_images = image_interval(
            per_id,
            frames[present[0]],
            ctx.seed,
            ctx.bootstrap_resamples,
            quantiles=(0.025, 0.975),
        )
        value = float(per_id.mean())
        score = Score(
            key=self.name,
            label=self.label,
            value=value,
            unit="%",
            ci95=interval,
            n=n_images,
            description=f"{self.description} Averaged: {', '.join(present)}.".strip(),
            latex=False,
        )
        values = {self.name: value, f"{self.name}_ci95": interval, f"{self.name}_variants": present}
        return MetricOutput(values | ({WITHHELD: {self.name: gap}} if gap else {}), Report([score]))


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
        for v, _ in present:  # over images (each with all its runs, when runs are pooled)
            bounds = accuracy_interval(frames[v], ctx.seed, ctx.bootstrap_resamples)[0]
            intervals.append(None if bounds is None else [100 * x for x in bounds])
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


def partial_average_deviations(metrics: Sequence[Any], frames: Frames) -> list[str]:
    """A sentence per :class:`MeanDrop` that averaged only some of its variants, generated
    from the variants actually scored (``--variants`` or the data may leave some out): the
    headline then is not the protocol's average, and says which it is."""
    out = []
    for metric in metrics:
        if not isinstance(metric, MeanDrop) or metric.reference not in frames:
            continue
        wanted = [v for v in metric.others if v != metric.reference]
        present = [v for v in wanted if v in frames]
        if present and len(present) < len(wanted):
            left = [v for v in wanted if v not in frames]
            out.append(
                f"{metric.short or metric.name} averages the {len(present)} of its "
                f"{len(wanted)} variants scored ({', '.join(present)}); not scored: "
                f"{', '.join(left)}"
            )
    return out


def not_computed(metric: BenchmarkMetric, frames: Frames) -> str:
    """The sentence that says why ``metric`` has no value: the variants it needs that were
    not scored (left out by ``--variants``, or not in the data)."""
    left = [v for v in metric.variants if v not in frames]
    label = getattr(metric, "label", "") or metric.name
    return (
        f"{label} not computed (null in results.json): it needs {', '.join(left)}, which "
        "this run did not score (not in --variants, or not in the data)."
    )


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
            if frames:  # its null is said, never left to be read as a number
                result.report.notes.append(not_computed(metric, frames))
        # each metric's withheld intervals add to, not replace, those before it
        withheld = out.values.get(WITHHELD, {}) | result.values.get(WITHHELD, {})
        out.values.update(result.values)
        if withheld:
            out.values[WITHHELD] = withheld
        out.report.extend(result.report)
    return out
