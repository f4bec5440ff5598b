"""The watermark benchmark's two metric kinds (the protocol of :class:`hf_bgbench.scoring`:
``name``, ``variants``, ``compute(frames, ctx)``, ``missing()``).

Both read the frames as they are: this benchmark's labels are the ImageNet-1k indices, so a
prediction is an ImageNet-1k class and "predicted carton" is ``pred == 478``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hf_bgbench.formatting import interval as format_interval
from hf_bgbench.formatting import pct
from hf_bgbench.metrics import wilson_interval
from hf_bgbench.results import Report, Score, Table
from hf_bgbench.scoring import Frames, MetricOutput, ScoringContext, paired_gap_interval


@dataclass(frozen=True)
class FlipsToClass:
    """``name``: among the images (paired by id) *not* predicted ``target`` on ``control``,
    the share predicted ``target`` on ``treated``; ``<name>_ci95`` its Wilson interval and
    ``<name>_n`` how many images it is over. Shown as a one-row table (the report's own
    tables list accuracies and gaps)."""

    name: str
    control: str
    treated: str
    target: int
    label: str
    description: str = ""

    @property
    def variants(self) -> tuple[str, ...]:
        return (self.control, self.treated)

    def missing(self) -> dict[str, Any]:
        return {self.name: None, f"{self.name}_ci95": None, f"{self.name}_n": 0}

    def compute(self, frames: Frames, ctx: ScoringContext) -> MetricOutput:
        paired = frames[self.control].merge(frames[self.treated], on="id", suffixes=("_c", "_t"))
        eligible = paired[paired["pred_c"] != self.target]
        n = len(eligible)
        flipped = int((eligible["pred_t"] == self.target).sum())
        value = flipped / n if n else None
        interval = list(wilson_interval(flipped, n)) if n else None
        score = Score(
            key=self.name,
            label=self.label,
            value=value,
            unit="%",
            ci95=interval,
            n=n,
            description=self.description,
        )
        target = ctx.classes[self.target]
        table = Table(
            key=self.name,
            title=f'Predictions flipped to "{target}" ({self.control} → {self.treated}):',
            columns=["images", f"not {target} on {self.control}", "flipped", "%", "95% CI"],
            rows=[
                [
                    str(len(paired)),
                    str(n),
                    str(flipped),
                    pct(value),
                    format_interval(interval),
                ]
            ],
        )
        values = {self.name: value, f"{self.name}_ci95": interval, f"{self.name}_n": n}
        return MetricOutput(values, Report([score], tables=[table]))


@dataclass(frozen=True)
class ClassAccuracyGap:
    """``name`` = accuracy on the images labelled ``target``: ``minuend`` − ``subtrahend``
    (over the ids both hold), with a paired-bootstrap 95% interval; None when no image of
    that class was scored (``<name>_n`` = 0)."""

    name: str
    minuend: str
    subtrahend: str
    target: int
    label: str
    description: str = ""

    @property
    def variants(self) -> tuple[str, ...]:
        return (self.minuend, self.subtrahend)

    def missing(self) -> dict[str, Any]:
        return {self.name: None, f"{self.name}_ci95": None, f"{self.name}_n": 0}

    def compute(self, frames: Frames, ctx: ScoringContext) -> MetricOutput:
        first, second = (frames[v][frames[v]["label"] == self.target] for v in self.variants)
        paired = first.merge(second, on="id", suffixes=("_a", "_b"))
        n = len(paired)
        value = interval = None
        if n:
            value = float((paired["pred_a"] == paired["label_a"]).mean()) - float(
                (paired["pred_b"] == paired["label_b"]).mean()
            )
            interval = paired_gap_interval(first, second, ctx.seed, ctx.bootstrap_resamples)
        score = Score(
            key=self.name,
            label=self.label,
            value=value,
            unit="pts",
            ci95=interval,
            n=n,
            description=self.description,
        )
        values = {self.name: value, f"{self.name}_ci95": interval, f"{self.name}_n": n}
        return MetricOutput(values, Report([score]))
