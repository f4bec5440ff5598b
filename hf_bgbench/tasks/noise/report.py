"""The report of a noise-analysis run: headline scores, tables per level and per class, and
the four plots (rendered by :mod:`hf_bgbench.render` like every task's), each made by its own
step from the run's numbers."""

from __future__ import annotations

from functools import partial
from typing import Any

from hf_bgbench.formatting import interval, named_rows, number, pct, table_row
from hf_bgbench.results import Figure, Report, Score, Series, Table, scaled_interval
from hf_bgbench.tasks.noise.summary import IRFS_BIN_EDGES

signed = partial(number, unit="+")  # RFS goes below zero: written with its sign
signed_interval = partial(interval, unit="+")
# each table's columns after the row's name (hf_bgbench.formatting.table_row)
RFS_CELLS = (("rfs", signed), ("rfs_ci95", signed_interval), ("irfs_mean", signed))
LEVEL_CELLS = (
    ("a_fg", pct),
    ("a_fg_ci95", interval),
    ("a_bg", pct),
    ("a_bg_ci95", interval),
    ("mean_accuracy", pct),
    *RFS_CELLS,
)
CLASS_CELLS = (("n_images", str), ("clean_accuracy", pct), ("a_fg", pct), ("a_bg", pct), *RFS_CELLS)
ATTRIBUTE_CELLS = (
    ("n", str),
    ("accuracy_clean", pct),
    ("accuracy_attribute_noise", pct),
    ("drop", pct),
    ("drop_ci95", interval),
    ("a_fg", pct),
)


def build_report(body: dict[str, Any]) -> Report:
    """Headline RFS, a_fg, a_bg, clean accuracy and iRFS; tables per level, per class and per
    class x level; the four figures (accuracy and RFS per level, the per-class scatter with
    its diagonal, iRFS histograms per class)."""
    return Report(_scores(body), _tables(body), _figures(body), _notes(body))


def _levels(body: dict[str, Any]) -> list[float]:
    """The run's noise levels, in its order."""
    return [lv["level"] for lv in body["levels"]]


def _class_mean(body: dict[str, Any]) -> bool:
    """Whether the run's accuracies are class means (the authors' aggregation)."""
    return body.get("aggregation", "class-mean") == "class-mean"


def _level_name(norm: str) -> str:
    """The name of a noise level's size, as a column or axis heading."""
    return "σ x 255" if norm == "linf" else "ε (ℓ2)"


def _scores(body: dict[str, Any]) -> list[Score]:
    """Every score of the run: RFS first, then the accuracies, iRFS and the secondary ones."""
    variant = body["variant"]
    return [
        _rfs_score(body),
        *_accuracy_scores(body),
        Score("irfs", "Mean iRFS", body["irfs_mean"], unit="", config=variant, short="iRFS"),
        *_pooled_scores(body),
        Score(
            "rfs_mean_over_levels",
            "Mean of the per-level RFS (not a number the paper reports)",
            body["rfs_mean_over_levels"],
            unit="",
            config=variant,
            latex=False,
        ),
    ]


def _rfs_score(body: dict[str, Any]) -> Score:
    """The headline RFS, with what it averages over and how to read it."""
    return Score(
        "rfs",
        "RFS (relative foreground sensitivity)",
        body["rfs"],
        unit="",
        ci95=body["rfs_ci95"],
        n=body["n_images"],
        config=body["variant"],
        headline=True,
        short="RFS",
        description=(
            f"({_averaged(body)} over {_sizes(body)} and {body['trials']} trials: RFS = "
            "(a_bg − a_fg) / (2 min(ā, 1 − ā)) in [−1, 1]; +1 = only noise on the object "
            "hurts, −1 = only noise on the background)."
        ),
    )


def _averaged(body: dict[str, Any]) -> str:
    """How the headline's accuracies are aggregated, as the start of its description."""
    if body.get("aggregation") == "image-pooled":
        return "a_bg and a_fg pooled over images"
    return "a_bg and a_fg as accuracy per class, averaged over the classes and"


def _sizes(body: dict[str, Any]) -> str:
    """The run's noise sizes as a set, in the norm's unit."""
    level_text = ", ".join(f"{lv:g}" for lv in _levels(body))
    return f"σ ∈ {{{level_text}}}/255" if body["norm"] == "linf" else f"ℓ2 ε ∈ {{{level_text}}}"


def _accuracy_scores(body: dict[str, Any]) -> list[Score]:
    """a_fg, a_bg and the clean accuracy, with their intervals."""
    variant = body["variant"]
    return [
        Score(
            key,
            label,
            body[value],
            ci95=body[f"{value}_ci95"],
            n=body["n_images"],
            config=variant,
            short=short,
        )
        for key, label, value, short in (
            ("accuracy_fg_noise", "Accuracy, noise on the object", "a_fg", "a_fg"),
            ("accuracy_bg_noise", "Accuracy, noise on the background", "a_bg", "a_bg"),
            ("accuracy", f"Clean accuracy ({variant})", "clean_accuracy", "Clean acc."),
        )
    ]


def _pooled_scores(body: dict[str, Any]) -> list[Score]:
    """The image-weighted numbers kept beside the authors' class means, labelled."""
    pooled = body.get("image_pooled")
    if not pooled:
        return []
    return [
        Score(
            f"{key}_image_pooled",
            f"{label}, pooled over images (secondary; not the paper's aggregation)",
            pooled[value],
            unit=unit,
            ci95=pooled[f"{value}_ci95"],
            n=body["n_images"],
            config=body["variant"],
            latex=False,
        )
        for key, label, value, unit in (
            ("rfs", "RFS", "rfs", ""),
            ("accuracy_fg_noise", "Accuracy, noise on the object", "a_fg", "%"),
            ("accuracy_bg_noise", "Accuracy, noise on the background", "a_bg", "%"),
        )
    ]


def _tables(body: dict[str, Any]) -> list[Table]:
    """The tables per level, per class and per class x level (and per attribute, if any)."""
    tables = [_levels_table(body), _per_class_table(body), _class_levels_table(body)]
    if body.get("per_attribute"):
        tables.append(_per_attribute_table(body))
    return tables


def _levels_table(body: dict[str, Any]) -> Table:
    """The accuracies and RFS per noise level, and pooled over the levels ('all')."""
    rows = [table_row(f"{lv['level']:g}", lv, LEVEL_CELLS) for lv in body["levels"]]
    rows.append(table_row("all", body, LEVEL_CELLS))
    return Table(
        "levels",
        "Per noise level:",
        [
            _level_name(body["norm"]),
            "a_fg (%)",
            "95% CI",
            "a_bg (%)",
            "95% CI",
            "ā (%)",
            "RFS",
            "95% CI",
            "mean iRFS",
        ],
        rows,
        note=_levels_note(body),
    )


def _levels_note(body: dict[str, Any]) -> str:
    """What the per-level table's accuracies and intervals are."""
    return (
        f"a_fg / a_bg: accuracy with noise on the object / on the background "
        f"({body['n_images']} images x {body['trials']} trials per level; clean "
        f"accuracy {pct(body['clean_accuracy'])}%); {_aggregation_note(body)}. 95% "
        "intervals: percentile bootstrap over images (the trials of an image "
        "resampled together" + (", each class within itself)." if _class_mean(body) else ").")
    )


def _aggregation_note(body: dict[str, Any]) -> str:
    """How the per-level table's accuracies are aggregated."""
    if _class_mean(body):
        return (
            "each accuracy is the mean over the classes of the per-class accuracy, and the "
            "'all' row's RFS is the RFS of the level- and class-averaged accuracies (the "
            "authors' Fig. 4 and Fig. 6)"
        )
    return "accuracies pooled over images (every noisy copy weighs the same)"


def _per_class_table(body: dict[str, Any]) -> Table:
    """The clean and noisy accuracies and RFS of each class, over all levels."""
    return Table(
        "per_class",
        "Per class (all levels):",
        ["Class", "n", "Clean (%)", "a_fg (%)", "a_bg (%)", "RFS", "95% CI", "mean iRFS"],
        named_rows(body["per_class"], CLASS_CELLS),
    )


def _class_levels_table(body: dict[str, Any]) -> Table:
    """The RFS of each class at each noise level."""
    return Table(
        "class_levels",
        f"RFS per class and noise level ({_level_name(body['norm'])}):",
        ["Class", *(f"{lv:g}" for lv in _levels(body))],
        [
            [name, *(signed(lv["rfs"]) for lv in c["levels"])]
            for name, c in body["per_class"].items()
        ],
    )


def _per_attribute_table(body: dict[str, Any]) -> Table:
    """The accuracy with the noise on each attribute's mask alone, beside clean and a_fg."""
    return Table(
        "per_attribute",
        "Per attribute, noise on its mask alone (images that have it, all levels):",
        [
            "Attribute",
            "n",
            "Clean (%)",
            "Attribute noise (%)",
            "Drop (pts)",
            "95% CI",
            "a_fg (%)",
        ],
        named_rows(body["per_attribute"], ATTRIBUTE_CELLS),
        note="Accuracy pooled over the images that have the attribute; a_fg: the same "
        "images with the noise on the whole object, for scale.",
    )


def _figures(body: dict[str, Any]) -> list[Figure]:
    """Accuracy and RFS per level, the per-class scatter and the iRFS histograms."""
    return [_accuracy_figure(body), _rfs_figure(body), _classes_figure(body), _irfs_figure(body)]


def _level_series(body: dict[str, Any], label: str, key: str, scale: float) -> Series:
    """One number per level (times ``scale``) with its intervals, as a line."""
    per_level = body["levels"]
    return Series(
        label,
        [scale * lv[key] for lv in per_level],
        [scaled_interval(lv[f"{key}_ci95"], scale) for lv in per_level],
    )


def _over_levels(
    body: dict[str, Any], file: str, what: str, ylabel: str, lines: list[Series], **kw: Any
) -> Figure:
    """A line plot of ``lines`` over the noise levels."""
    norm, levels = body["norm"], _levels(body)
    return Figure(
        file=file,
        title=f"{body['model']}: {what} ({norm})",
        labels=[f"{lv:g}" for lv in levels],
        values=[],
        ylabel=ylabel,
        kind="lines",
        x=[float(lv) for lv in levels],
        xlabel="noise σ (x 1/255)" if norm == "linf" else "noise ε (ℓ2 norm per region)",
        series=lines,
        **kw,
    )


def _accuracy_figure(body: dict[str, Any]) -> Figure:
    """a_fg and a_bg per level, against the clean accuracy."""
    return _over_levels(
        body,
        "noise_accuracy.png",
        "accuracy under noise",
        "accuracy (%) with 95% CI",
        [
            _level_series(body, "noise on the object (a_fg)", "a_fg", 100),
            _level_series(body, "noise on the background (a_bg)", "a_bg", 100),
        ],
        reference=(100 * body["clean_accuracy"], "clean"),
        ylim=(0.0, 105.0),
    )


def _rfs_figure(body: dict[str, Any]) -> Figure:
    """RFS per level, against RFS = 0."""
    return _over_levels(
        body,
        "noise_rfs.png",
        "RFS per noise level",
        "RFS with 95% CI",
        [_level_series(body, "RFS", "rfs", 1)],
        reference=(0.0, "RFS = 0"),
        ylim=(-1.05, 1.05),
    )


def _classes_figure(body: dict[str, Any]) -> Figure:
    """Each class's a_bg against its a_fg (all levels), with the diagonal."""
    classes = body["per_class"]
    return Figure(
        file="noise_classes.png",
        title=f"{body['model']}: a_fg vs a_bg per class (all levels)",
        labels=list(classes),
        values=[100 * c["a_bg"] for c in classes.values()],
        ylabel="accuracy, noise on the background (%)",
        kind="scatter",
        x=[100 * c["a_fg"] for c in classes.values()],
        xlabel="accuracy, noise on the object (%)",
        intervals=[scaled_interval(c["a_bg_ci95"], 100) for c in classes.values()],
        x_intervals=[scaled_interval(c["a_fg_ci95"], 100) for c in classes.values()],
        diagonal=True,
        xlim=(0.0, 100.0),
        ylim=(0.0, 100.0),
    )


def _irfs_figure(body: dict[str, Any]) -> Figure:
    """The histogram of each class's iRFS (one value per image and level)."""
    classes = body["per_class"]
    return Figure(
        file="noise_irfs.png",
        title=f"{body['model']}: iRFS per class (one value per image and level)",
        labels=list(classes),
        values=[],
        ylabel="images x levels",
        kind="histograms",
        x=IRFS_BIN_EDGES.tolist(),
        series=[
            Series(f"{name}, mean {c['irfs_mean']:+.2f}", c["irfs_histogram"]["counts"])
            for name, c in classes.items()
        ],
        xlabel="iRFS",
        xlim=(-1.0, 1.0),
        ylim=None,
    )


def _notes(body: dict[str, Any]) -> list[str]:
    """How the noise was drawn, where RFS is 0 and how iRFS is made, the per-image file."""
    return [
        f"Noise: {body['noise']['generator']}; seed {body['seed']}; the same noise tensor "
        "for the object and the background copy of a trial.",
        "RFS is 0 where min(ā, 1 − ā) = 0 (both accuracies 0 or both 1); iRFS uses the "
        "true-class probability averaged over trials, per image and level.",
        f"Per image and level: {body['per_image_file']}.",
    ]
