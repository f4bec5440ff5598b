"""The report of a graying run: the grayed and clean accuracy and the drop (and the re-fitted
head's accuracy when there is one), tables per class and per attribute, the per-class figure
and the notes (rendered by :mod:`hf_bgbench.render` like every task's), each made by its own
step from the run's numbers."""

from __future__ import annotations

from typing import Any

from hf_bgbench.formatting import interval, named_rows, pct
from hf_bgbench.results import Figure, Report, Score, Table, percent_bars

# the columns after the row's name (hf_bgbench.formatting.table_row) of both tables
DROP_CELLS = (
    ("n", str),
    ("accuracy_clean", pct),
    ("accuracy_grayed", pct),
    ("drop", pct),
    ("drop_ci95", interval),
)
REFIT_CELLS = (("accuracy_grayed_refit", pct), ("accuracy_grayed_refit_ci95", interval))


def build_report(body: dict[str, Any]) -> Report:
    """The scores, the tables per class (and per attribute), the figure of the grayed
    accuracy per class, and the notes of a graying run."""
    return Report(_scores(body), _tables(body), [_figure(body)], _notes(body))


def _refit(body: dict[str, Any]) -> bool:
    """Whether the run scored the grayed images through a head re-fitted on them."""
    return "accuracy_grayed_refit" in body


def _how(body: dict[str, Any]) -> str:
    """How the accuracies are aggregated, for the headline descriptions."""
    if body["aggregation"] == "class-mean":
        return "accuracy per class, averaged over the classes"
    return "accuracy pooled over images"


def _score(body: dict[str, Any], key: str, label: str, value: str, **kw: Any) -> Score:
    """The score ``key``: the number ``value`` of the run with its interval, images and
    variant."""
    return Score(
        key,
        label,
        body[value],
        ci95=body[f"{value}_ci95"],
        n=body["n_images"],
        config=body["variant"],
        **kw,
    )


def _scores(body: dict[str, Any]) -> list[Score]:
    """The grayed accuracy, the clean accuracy, the drop (and the re-fitted head's)."""
    grayed = _score(
        body,
        "accuracy_grayed",
        f"Accuracy, background set to grey {body['gray']:g}",
        "accuracy_grayed",
        headline=True,
        short="Grayed acc.",
        description=f"({_how(body)}; the object kept, every background pixel grey).",
    )
    clean = _score(
        body,
        "accuracy",
        f"Clean accuracy ({body['variant']})",
        "accuracy_clean",
        short="Clean acc.",
    )
    drop = _score(
        body,
        "graying_drop",
        "Drop from graying the background",
        "drop",
        unit="pts",
        headline=True,
        short="Drop",
        description="(clean − grayed; large: the background carried accuracy).",
    )
    return [grayed, clean, drop, *([_refit_score(body)] if _refit(body) else [])]


def _refit_score(body: dict[str, Any]) -> Score:
    """The accuracy on the grayed images of the head re-fitted on grayed train images."""
    epochs = body["refit_head"]["probe"]["epochs"]
    return _score(
        body,
        "accuracy_grayed_refit",
        "Accuracy, background grey, head re-fitted on grey-background train images",
        "accuracy_grayed_refit",
        headline=True,
        short="Grayed acc. (re-fitted head)",
        description=f"({_how(body)}; a linear head trained {epochs} epochs on the frozen "
        "features of train images with the background grayed: Fig. 8, right).",
    )


def _tables(body: dict[str, Any]) -> list[Table]:
    """The table per class (and per attribute, when the data has attribute masks)."""
    tables = [_per_class_table(body)]
    if body.get("per_attribute"):
        tables.append(_per_attribute_table(body))
    return tables


def _per_class_table(body: dict[str, Any]) -> Table:
    """Each class's clean and grayed accuracy and drop (and the re-fitted head's)."""
    columns = ["Class", "n", "Clean (%)", "Grayed (%)", "Drop (pts)", "95% CI"]
    cells = [*DROP_CELLS]
    if _refit(body):
        columns += ["Grayed, re-fitted head (%)", "95% CI"]
        cells += REFIT_CELLS
    bootstrap = body["bootstrap"]
    return Table(
        "per_class",
        "Per class:",
        columns,
        named_rows(body["per_class"], cells),
        note=f"{body['n_images']} images of {body['variant']}; 95% intervals: percentile "
        f"bootstrap over images ({bootstrap['resamples']} resamples, seed {bootstrap['seed']}).",
    )


def _per_attribute_table(body: dict[str, Any]) -> Table:
    """Each attribute's accuracy clean and grayed alone, and the drop."""
    return Table(
        "per_attribute",
        "Per attribute, grayed alone (images where it has a mask):",
        ["Attribute", "n", "Clean (%)", "Attribute grayed (%)", "Drop (pts)", "95% CI"],
        named_rows(body["per_attribute"], DROP_CELLS),
        note="Accuracy pooled over the images that have the attribute (the authors' "
        "attr_importance.py); a large drop: the model uses that part.",
    )


def _figure(body: dict[str, Any]) -> Figure:
    """Each class's grayed accuracy as a bar, against the clean accuracy."""
    classes = body["per_class"]
    return percent_bars(
        classes,
        "accuracy_grayed",
        file="graying.png",
        title=f"{body['model']}: accuracy with the background grayed",
        ylabel="accuracy, background grayed (%)",
        reference=(100 * body["accuracy_clean"], "clean"),
        counts=[c["n"] for c in classes.values()],
        ylim=(0.0, 105.0),
    )


def _notes(body: dict[str, Any]) -> list[str]:
    """The per-image file, and how the head was re-fitted or why it was not."""
    notes = [f"Per image: {body['per_image_file']}."]
    how_refit = body.get("refit_head") or {}
    if _refit(body):
        notes.append(f"Re-fitted head: {how_refit['probe']['note']}")
    elif how_refit.get("reason"):
        notes.append(
            "No head re-fitted on grey-background train images (Fig. 8, right): "
            f"{how_refit['reason']}."
        )
    return notes
