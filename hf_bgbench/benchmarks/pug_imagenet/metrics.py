"""PUG: ImageNet's metric kinds (the protocol of :class:`hf_bgbench.scoring`: ``name``,
``variants``, ``compute(frames, ctx)``, ``missing()``).

:class:`LevelSpread` reads one variant whose ids are ``<variant>/<level>/<asset>``
(:mod:`.rows`): the same assets rendered at every level of one factor (the 64 worlds), so
what changes between levels is that factor alone. :class:`SharedIndexNote` says what the
authors' class map does to the one class it can never count right.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from hf_bgbench.benchmarks.pug_imagenet.facts import LEVEL_SEPARATOR
from hf_bgbench.formatting import interval as format_interval
from hf_bgbench.formatting import pct
from hf_bgbench.metrics import wilson_interval
from hf_bgbench.metrics.intervals import bootstrap_means, percentile_interval
from hf_bgbench.results import WITHHELD, Figure, Report, Score, Table
from hf_bgbench.scoring import Frames, MetricOutput, ScoringContext


def by_level(frame: pd.DataFrame) -> pd.DataFrame:
    """level, asset, correct and pred of every row, read from its id."""
    parts = frame["id"].astype(str).str.split(LEVEL_SEPARATOR, n=2, expand=True)
    return pd.DataFrame(
        {
            "level": parts[1].to_numpy(),
            "asset": parts[2].to_numpy(),
            "correct": (frame["pred"] == frame["label"]).to_numpy(int),
            "pred": frame["pred"].to_numpy(),
        }
    )


def level_accuracy(rows: pd.DataFrame) -> pd.DataFrame:
    """Per level: images, right, accuracy and its Wilson interval, worst first."""
    table = rows.groupby("level")["correct"].agg(n="count", right="sum")
    table["accuracy"] = table["right"] / table["n"]
    bounds = [
        wilson_interval(int(r), int(n)) for r, n in zip(table["right"], table["n"], strict=True)
    ]
    table["low"], table["high"] = [b[0] for b in bounds], [b[1] for b in bounds]
    return table.sort_values(["accuracy", "n"], kind="stable")


def levels_record(table: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """:func:`level_accuracy`'s rows as results.json keeps them: level -> n, accuracy, CI."""
    return {
        str(level): {"n": int(r.n), "accuracy": float(r.accuracy), "ci95": [r.low, r.high]}
        for level, r in table.iterrows()
    }


def spread_interval(
    rows: pd.DataFrame, seed: int, resamples: int
) -> tuple[list[float] | None, str | None]:
    """95% percentile interval of best − worst level accuracy by a paired bootstrap over
    assets: an asset is drawn with all its images at every level, so levels stay compared
    over the same objects. Withheld (with the reason) under two assets."""
    right = rows.pivot_table(index="asset", columns="level", values="correct", aggfunc="sum")
    count = rows.pivot_table(index="asset", columns="level", values="correct", aggfunc="count")
    if len(right) < 2:
        return None, "fewer than two assets: resampling them cannot show the spread's uncertainty"
    columns = [*right.fillna(0).to_numpy(float).T, *count.fillna(0).to_numpy(float).T]
    means = np.array(bootstrap_means(*columns, n_resamples=resamples, seed=seed))
    levels = right.shape[1]
    with np.errstate(invalid="ignore", divide="ignore"):
        accuracy = means[:levels] / means[levels:]  # levels x resamples; nan: level not drawn
    spread = np.nanmax(accuracy, axis=0) - np.nanmin(accuracy, axis=0)
    return list(percentile_interval(spread)), None


def changed_share(rows: pd.DataFrame) -> tuple[float | None, list[float] | None, int]:
    """(share of the assets seen at two levels or more whose prediction is not the same at
    every level, its Wilson interval, how many assets)."""
    seen = rows.groupby("asset")["pred"].agg(levels="count", predictions="nunique")
    seen = seen[seen["levels"] > 1]
    if not len(seen):
        return None, None, 0
    changed = int((seen["predictions"] > 1).sum())
    return changed / len(seen), list(wilson_interval(changed, len(seen))), len(seen)


@dataclass(frozen=True)
class LevelSpread:
    """Accuracy at each level of one factor (``level``: what a level is, "world"), the
    spread best − worst with a paired-bootstrap interval over assets, the worst level, and
    the share of assets whose prediction changes with the level; a sorted bars figure."""

    name: str  # the variant, and the suffix of the keys
    level: str
    figure: str = ""
    headline: bool = False

    @property
    def variants(self) -> tuple[str, ...]:
        return (self.name,)

    def missing(self) -> dict[str, Any]:
        n = self.name
        keys = (f"spread/{n}", f"spread/{n}_ci95", f"worst/{n}", f"worst/{n}_level")
        return dict.fromkeys((*keys, f"changed/{n}", f"changed/{n}_ci95", f"levels/{n}"))

    def compute(self, frames: Frames, ctx: ScoringContext) -> MetricOutput:
        rows = by_level(frames[self.name])
        if not len(rows):
            return MetricOutput(self.missing())
        table = level_accuracy(rows)
        spread = interval = withheld = None
        if len(table) > 1:  # one level has no spread
            spread = float(table["accuracy"].max() - table["accuracy"].min())
            interval, withheld = spread_interval(rows, ctx.seed, ctx.bootstrap_resamples)
        worst = table.index[0]
        changed, changed_ci, assets = changed_share(rows)
        values = self._values(table, spread, interval, changed, changed_ci)
        if withheld:
            values[WITHHELD] = {f"spread/{self.name}": withheld}
        report = Report(
            self._scores(table, spread, interval, changed, changed_ci, assets, len(rows)),
            tables=[level_table(table, self.name, self.level)],
        )
        if self.figure:
            report.figures.append(self._figure(table))
        report.notes.append(
            f"{self.name}: {len(table)} {self.level}s, {rows['asset'].nunique()} assets, "
            f"{len(rows)} images; worst {self.level}: {worst} ({pct(table['accuracy'].iloc[0])}%)."
        )
        return MetricOutput(values, report)

    def _values(self, table, spread, interval, changed, changed_ci) -> dict[str, Any]:
        n = self.name
        return {
            f"spread/{n}": spread,
            f"spread/{n}_ci95": interval,
            f"worst/{n}": float(table["accuracy"].iloc[0]),
            f"worst/{n}_level": str(table.index[0]),
            f"changed/{n}": changed,
            f"changed/{n}_ci95": changed_ci,
            f"levels/{n}": levels_record(table),
        }

    def _scores(self, table, spread, interval, changed, changed_ci, assets, images) -> list:
        n, level = self.name, self.level
        worst = table.iloc[0]
        return [
            Score(
                key=f"spread/{n}",
                label=f"spread across {level}s ({n}: best − worst)",
                value=spread,
                unit="pts",
                ci95=interval,
                n=images,
                headline=self.headline,
                description=f"(the best {level}'s accuracy minus the worst's, the same assets in "
                f"each; 95% CI by a paired bootstrap over assets; higher means the {level} "
                "moves the model more).",
                short=f"{level}-spread",
                latex=self.headline,
            ),
            Score(
                key=f"worst/{n}",
                label=f"worst {level} ({table.index[0]})",
                value=float(worst["accuracy"]),
                unit="%",
                ci95=[float(worst["low"]), float(worst["high"])],
                n=int(worst["n"]),
                description=f"(accuracy on the {level} where the model does worst; Wilson CI).",
                latex=False,
            ),
            Score(
                key=f"changed/{n}",
                label=f"assets whose prediction changes with the {level}",
                value=changed,
                unit="%",
                ci95=changed_ci,
                n=assets,
                description=f"(the same object, pose and light in every {level}: the share of "
                f"assets not given one prediction in all of them; Wilson CI over assets).",
                latex=False,
            ),
        ]

    def _figure(self, table: pd.DataFrame) -> Figure:
        ordered = table.iloc[::-1]  # best first, so the eye reads down to the worst
        return Figure(
            file=self.figure,
            title=f"accuracy per {self.level}, sorted (spread "
            f"{pct(ordered['accuracy'].max() - ordered['accuracy'].min())} pts)",
            labels=[str(level) for level in ordered.index],
            values=[100 * a for a in ordered["accuracy"]],
            ylabel="top-1 accuracy (%) with 95% Wilson CI",
            intervals=[
                [100 * lo, 100 * hi] for lo, hi in zip(ordered["low"], ordered["high"], strict=True)
            ],
            counts=[int(n) for n in ordered["n"]] if ordered["n"].nunique() > 1 else None,
        )


def level_table(table: pd.DataFrame, variant: str, level: str) -> Table:
    """:func:`level_accuracy`'s rows as a report table."""
    rows = [
        [str(name), str(int(r.n)), pct(r.accuracy), format_interval([r.low, r.high])]
        for name, r in table.iterrows()
    ]
    return Table(
        key=f"levels/{variant}",
        title=f"Accuracy per {level} ({variant}), worst first:",
        columns=[level, "images", "accuracy (%)", "95% CI"],
        rows=rows,
    )


@dataclass(frozen=True)
class LevelTables:
    """For each of ``factors`` (variants whose ids are ``<variant>/<value>/<asset>``) that was
    scored, the accuracy at each value of the factor (``levels/<variant>``, a table). A
    factor's rows hold its values off the default only, so no spread is taken: its default
    is the worlds variant's, in other worlds."""

    name: str
    factors: tuple[str, ...]

    @property
    def variants(self) -> tuple[str, ...]:
        return ()  # computed for whichever factors were scored

    def missing(self) -> dict[str, Any]:
        return {}

    def compute(self, frames: Frames, ctx: ScoringContext) -> MetricOutput:
        out = MetricOutput()
        for variant in (f for f in self.factors if f in frames and len(frames[f])):
            table = level_accuracy(by_level(frames[variant]))
            out.values[f"levels/{variant}"] = levels_record(table)
            out.report.tables.append(level_table(table, variant, "value"))
        return out


@dataclass(frozen=True)
class SharedIndexNote:
    """For each ImageNet index two classes list (``shared``: index -> their labels, the later
    one the index's class as the authors' code builds its table), a note on the images of
    the other classes: how many were scored and how many were predicted as the index's
    class, which the authors' rule counts wrong for a 1000-class model."""

    name: str
    variant: str
    shared: tuple[tuple[int, tuple[int, ...]], ...]

    @property
    def variants(self) -> tuple[str, ...]:
        return (self.variant,)

    def missing(self) -> dict[str, Any]:
        return {self.name: None}

    def compute(self, frames: Frames, ctx: ScoringContext) -> MetricOutput:
        frame, names = frames[self.variant], ctx.classes
        out: dict[str, Any] = {}
        notes = []
        for index, labels in self.shared:
            owner = labels[-1]
            for label in labels[:-1]:
                images = int((frame["label"] == label).sum())
                taken = int(((frame["label"] == label) & (frame["pred"] == owner)).sum())
                out[names[label]] = {"images": images, f"predicted_{names[owner]}": taken}
                raise_by = pct(taken / len(frame)) if len(frame) else "0.0"
                notes.append(
                    f"{names[label]}: the authors' map gives ImageNet class {index} to "
                    f"{names[owner]} and {names[label]}, and their code counts it as "
                    f"{names[owner]}, so a 1000-class model is never right on a {names[label]} "
                    f"image ({images} scored in {self.variant}, {taken} of them predicted "
                    f"{names[owner]}: counted right, they would raise {self.variant} accuracy "
                    f"by {raise_by} pts). bgbench follows their code, so its numbers are theirs."
                )
        return MetricOutput({self.name: out}, Report(notes=notes))
