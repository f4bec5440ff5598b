"""The report section of a noise-analysis run: headline scores, tables per level and per
class, and the four plots (rendered by :mod:`hf_bgbench.render` like every task's)."""

from __future__ import annotations

from typing import Any

from hf_bgbench.formatting import interval, number, pct
from hf_bgbench.results import Figure, Report, Score, Series, Table
from hf_bgbench.tasks.noise.summary import IRFS_BIN_EDGES


def _level_row(name: str, stats: dict[str, Any]) -> list[str]:
    """One row of the per-level table (a level's numbers, or the pooled ones)."""
    return [
        name,
        pct(stats["a_fg"]),
        interval(stats["a_fg_ci95"]),
        pct(stats["a_bg"]),
        interval(stats["a_bg_ci95"]),
        pct(stats["mean_accuracy"]),
        number(stats["rfs"], "+"),
        interval(stats["rfs_ci95"], "+"),
        number(stats["irfs_mean"], "+"),
    ]


def _scaled(bounds: list[float] | None, scale: float) -> list[float] | None:
    """An interval in a figure's unit; None (withheld: no error bar) stays None."""
    return None if bounds is None else [scale * v for v in bounds]


def _averaged(body: dict[str, Any]) -> str:
    if body.get("aggregation") == "image-pooled":
        return "a_bg and a_fg pooled over images"
    return "a_bg and a_fg as accuracy per class, averaged over the classes and"


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


def _class_mean(body: dict[str, Any]) -> bool:
    return body.get("aggregation", "class-mean") == "class-mean"


def _aggregation_note(body: dict[str, Any]) -> str:
    if _class_mean(body):
        return (
            "each accuracy is the mean over the classes of the per-class accuracy, and the "
            "'all' row's RFS is the RFS of the level- and class-averaged accuracies (the "
            "authors' Fig. 4 and Fig. 6)"
        )
    return "accuracies pooled over images (every noisy copy weighs the same)"


def _level_name(norm: str) -> str:
    return "σ x 255" if norm == "linf" else "ε (ℓ2)"


def noise_report_section(body: dict[str, Any]) -> Report:
    """Headline RFS, a_fg, a_bg, clean accuracy and iRFS; tables per level, per class and per
    class x level; the four figures (accuracy and RFS per level, the per-class scatter with
    its diagonal, iRFS histograms per class)."""
    norm, variant = body["norm"], body["variant"]
    levels = [lv["level"] for lv in body["levels"]]
    level_text = ", ".join(f"{lv:g}" for lv in levels)
    sizes = f"σ ∈ {{{level_text}}}/255" if norm == "linf" else f"ℓ2 ε ∈ {{{level_text}}}"
    scores = [
        Score(
            "rfs",
            "RFS (relative foreground sensitivity)",
            body["rfs"],
            unit="",
            ci95=body["rfs_ci95"],
            n=body["n_images"],
            config=variant,
            headline=True,
            short="RFS",
            description=(
                f"({_averaged(body)} over {sizes} and {body['trials']} trials: RFS = "
                "(a_bg − a_fg) / (2 min(ā, 1 − ā)) in [−1, 1]; +1 = only noise on the object "
                "hurts, −1 = only noise on the background)."
            ),
        ),
        *(
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
        ),
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
    level_rows = [_level_row(f"{lv['level']:g}", lv) for lv in body["levels"]]
    level_rows.append(_level_row("all", body))
    classes = body["per_class"]
    tables = [
        Table(
            "levels",
            "Per noise level:",
            [
                _level_name(norm),
                "a_fg (%)",
                "95% CI",
                "a_bg (%)",
                "95% CI",
                "ā (%)",
                "RFS",
                "95% CI",
                "mean iRFS",
            ],
            level_rows,
            note=(
                f"a_fg / a_bg: accuracy with noise on the object / on the background "
                f"({body['n_images']} images x {body['trials']} trials per level; clean "
                f"accuracy {pct(body['clean_accuracy'])}%); {_aggregation_note(body)}. 95% "
                "intervals: percentile bootstrap over images (the trials of an image "
                "resampled together"
                + (", each class within itself)." if _class_mean(body) else ").")
            ),
        ),
        Table(
            "per_class",
            "Per class (all levels):",
            ["Class", "n", "Clean (%)", "a_fg (%)", "a_bg (%)", "RFS", "95% CI", "mean iRFS"],
            [
                [
                    name,
                    str(c["n_images"]),
                    pct(c["clean_accuracy"]),
                    pct(c["a_fg"]),
                    pct(c["a_bg"]),
                    number(c["rfs"], "+"),
                    interval(c["rfs_ci95"], "+"),
                    number(c["irfs_mean"], "+"),
                ]
                for name, c in classes.items()
            ],
        ),
        Table(
            "class_levels",
            f"RFS per class and noise level ({_level_name(norm)}):",
            ["Class", *(f"{lv:g}" for lv in levels)],
            [
                [name, *(number(lv["rfs"], "+") for lv in c["levels"])]
                for name, c in classes.items()
            ],
        ),
    ]
    if body.get("per_attribute"):
        tables.append(
            Table(
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
                [
                    [
                        name,
                        str(a["n"]),
                        pct(a["accuracy_clean"]),
                        pct(a["accuracy_attribute_noise"]),
                        pct(a["drop"]),
                        interval(a["drop_ci95"]),
                        pct(a["a_fg"]),
                    ]
                    for name, a in body["per_attribute"].items()
                ],
                note="Accuracy pooled over the images that have the attribute; a_fg: the same "
                "images with the noise on the whole object, for scale.",
            )
        )
    return Report(scores, tables, _figures(body, norm, levels, classes), _notes(body))


def _figures(body: dict[str, Any], norm: str, levels: list[float], classes: dict) -> list:
    model, x = body["model"], [float(lv) for lv in levels]
    xlabel = "noise σ (x 1/255)" if norm == "linf" else "noise ε (ℓ2 norm per region)"
    per_level = body["levels"]

    def series(label: str, key: str, scale: float) -> Series:
        return Series(
            label,
            [scale * lv[key] for lv in per_level],
            [_scaled(lv[f"{key}_ci95"], scale) for lv in per_level],
        )

    def over_levels(file: str, what: str, ylabel: str, lines: list[Series], **kw: Any) -> Figure:
        return Figure(
            file=file,
            title=f"{model}: {what} ({norm})",
            labels=[f"{lv:g}" for lv in levels],
            values=[],
            ylabel=ylabel,
            kind="lines",
            x=x,
            xlabel=xlabel,
            series=lines,
            **kw,
        )

    return [
        over_levels(
            "noise_accuracy.png",
            "accuracy under noise",
            "accuracy (%) with 95% CI",
            [
                series("noise on the object (a_fg)", "a_fg", 100),
                series("noise on the background (a_bg)", "a_bg", 100),
            ],
            reference=(100 * body["clean_accuracy"], "clean"),
            ylim=(0.0, 105.0),
        ),
        over_levels(
            "noise_rfs.png",
            "RFS per noise level",
            "RFS with 95% CI",
            [series("RFS", "rfs", 1)],
            reference=(0.0, "RFS = 0"),
            ylim=(-1.05, 1.05),
        ),
        Figure(
            file="noise_classes.png",
            title=f"{model}: a_fg vs a_bg per class (all levels)",
            labels=list(classes),
            values=[100 * c["a_bg"] for c in classes.values()],
            ylabel="accuracy, noise on the background (%)",
            kind="scatter",
            x=[100 * c["a_fg"] for c in classes.values()],
            xlabel="accuracy, noise on the object (%)",
            intervals=[_scaled(c["a_bg_ci95"], 100) for c in classes.values()],
            x_intervals=[_scaled(c["a_fg_ci95"], 100) for c in classes.values()],
            diagonal=True,
            xlim=(0.0, 100.0),
            ylim=(0.0, 100.0),
        ),
        Figure(
            file="noise_irfs.png",
            title=f"{model}: iRFS per class (one value per image and level)",
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
        ),
    ]


def _notes(body: dict[str, Any]) -> list[str]:
    return [
        f"Noise: {body['noise']['generator']}; seed {body['seed']}; the same noise tensor "
        "for the object and the background copy of a trial.",
        "RFS is 0 where min(ā, 1 − ā) = 0 (both accuracies 0 or both 1); iRFS uses the "
        "true-class probability averaged over trials, per image and level.",
        f"Per image and level: {body['per_image_file']}.",
    ]
