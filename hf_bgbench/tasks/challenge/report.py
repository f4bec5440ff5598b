"""The report section of a Backgrounds Challenge run: its scores, the summary and per-class
tables, the per-class figure (with the attack-success histogram of a full-matrix run) and
its notes, rendered by :mod:`hf_bgbench.render` like every task's. The numbers come from
:mod:`hf_bgbench.tasks.challenge.summary`."""

from __future__ import annotations

from typing import Any

import numpy as np

from hf_bgbench.formatting import interval, pct
from hf_bgbench.results import Figure, Report, Score, Table

EARLY_STOP_NOTE = (
    "Each foreground stops at its first fooling composite; backgrounds are tried "
    "most harmful first (how often they fooled, and how far they lowered the true "
    "class's probability, so far). The verdicts do not depend on that order, but "
    "which fooling background vulnerable.parquet lists does: with scheduling, a "
    "fooling background is the first found in the schedule, not in dataset order."
)


def build_report(body: dict[str, Any], spec: Any, asr: np.ndarray | None) -> Report:
    """The report section from the run's results ``body`` and, for a full-matrix run, each
    background's attack success rate ``asr`` (None otherwise)."""
    return Report(
        _scores(body),
        [_summary_table(body), _per_class_table(body)],
        [_per_class_figure(body, asr)],
        _notes(body),
    )


def _scores(body: dict[str, Any]) -> list[Score]:
    """Challenge accuracy (the headline), clean accuracy and, for a full-matrix run, the
    share of foregrounds foolable into the background's class."""
    attack = body.get("attack_success")
    fooled_into = [_fooled_into_score(attack)] if attack else []
    return [_challenge_score(body), _clean_score(body), *fooled_into]


def _challenge_score(body: dict[str, Any]) -> Score:
    """The headline: challenge accuracy with its Wilson interval."""
    return Score(
        "challenge_accuracy",
        "Challenge accuracy",
        body["challenge_accuracy"],
        ci95=list(body["challenge_accuracy_ci95"]),
        n=body["n_foregrounds"],
        headline=True,
        description=(
            f"(share of foregrounds that no {body['background_variant']} background, of "
            "any class, makes the model misclassify)."
        ),
    )


def _clean_score(body: dict[str, Any]) -> Score:
    """Accuracy on the uncomposited foregrounds."""
    return Score(
        "accuracy",
        f"Clean accuracy ({body['foreground_variant']})",
        body["clean_accuracy"],
        n=body["n_foregrounds"],
        config=body["foreground_variant"],
        short="Clean acc.",
    )


def _fooled_into_score(attack: dict[str, Any]) -> Score:
    """The share of foregrounds some background fools into its own class (full matrix)."""
    return Score(
        "fooled_into_background_class",
        "Foregrounds foolable into the background's class",
        attack["fooled_into_background_class"],
        latex=False,
    )


def _summary_table(body: dict[str, Any]) -> Table:
    """The one-row summary: challenge and clean accuracy, and what the run evaluated."""
    headline = [
        str(body["model"]),
        pct(body["challenge_accuracy"]),
        interval(body["challenge_accuracy_ci95"]),
        pct(body["clean_accuracy"]),
    ]
    return Table(
        "challenge",
        "Backgrounds Challenge:",
        ["Model", "Challenge acc. (%)", "95% CI", "Clean acc. (%)", "Foregrounds", "Backgrounds"],
        [[*headline, str(body["n_foregrounds"]), str(body["n_backgrounds"])]],
        note=(
            f"Mode: {body['mode'].replace('_', ' ')}; composites evaluated "
            f"{body['composites_evaluated']:,} of {body['composites_total']:,} (the least "
            f"any order needs: {body['composites_minimal']:,})"
            + _subset_note(body["subset"], body.get("skipped") or {})
            + f". Clean accuracy: the uncomposited {body['foreground_variant']} images."
        ),
    )


def _subset_note(sub: dict[str, Any], skipped: dict[str, Any]) -> str:
    """The caps that left images out, said as a subset; "" when every image was used (a cap
    above the data's size draws them all)."""
    from hf_bgbench.tasks.subsets import left_images_out

    caps = [
        f"{cap}={sub[cap]}"
        for cap, ids, part in (
            ("max_foregrounds", "foreground_ids", "foregrounds"),
            ("max_backgrounds", "background_ids", "backgrounds"),
        )
        if left_images_out(sub.get(cap), sub.get(ids), len(skipped.get(part) or []))
    ]
    return f"; random subset ({', '.join(caps)}, seed {sub['seed']})" if caps else ""


def _per_class_table(body: dict[str, Any]) -> Table:
    """Challenge accuracy per class; a full-matrix run adds each class's attack success."""
    per_class, counts = body["challenge_accuracy_per_class"], body["n_foregrounds_per_class"]
    attack = body.get("attack_success")
    if not attack:
        return Table(
            "per_class",
            "Per class:",
            ["Class", "n", "Challenge acc. (%)"],
            [[name, str(counts[name]), pct(value)] for name, value in per_class.items()],
        )
    columns = ["Max ASR (%)", "Most fooling background", "Foolable into (%)"]
    return Table(
        "per_class",
        "Per class:",
        ["Class", "n", "Challenge acc. (%)", *columns],
        [
            [name, str(counts[name]), pct(value), *_attack_cells(attack["per_class"][name])]
            for name, value in per_class.items()
        ],
        note=(
            "ASR (attack success rate) of a background: share of foregrounds of other "
            "classes it flips into its own class. Foolable into: share of other-class "
            "foregrounds that some background of the class flips into it. "
            f"{pct(attack['fooled_into_background_class'])}% of foregrounds can be fooled "
            "into the background's class by some background."
        ),
    )


def _attack_cells(attack: dict[str, Any]) -> list[str]:
    """One class's attack-success cells: max ASR, most fooling background, foolable into."""
    most_fooling = (attack["top_backgrounds"] or [{"id": "—"}])[0]["id"]
    return [pct(attack["max_asr"]), most_fooling, pct(attack["foolable_into"])]


def _per_class_figure(body: dict[str, Any], asr: np.ndarray | None) -> Figure:
    """Challenge accuracy per class against the overall one; beside it, for a full-matrix
    run, the histogram of the backgrounds' attack success rates."""
    per_class, counts = body["challenge_accuracy_per_class"], body["n_foregrounds_per_class"]
    return Figure(
        file="challenge.png",
        title=f"{body['model']}: Backgrounds Challenge",
        labels=list(per_class),
        values=[100 * v if v is not None else None for v in per_class.values()],
        ylabel="challenge accuracy (%)",
        reference=(100 * body["challenge_accuracy"], "overall"),
        counts=[counts[n] for n in per_class],
        ylim=(0.0, 100.0),
        histogram=_asr_histogram(asr) if asr is not None else None,
    )


def _asr_histogram(asr: np.ndarray) -> dict[str, Any]:
    """The figure's second panel: the attack success rates (%) of the backgrounds that
    have one."""
    return {
        "values": (100 * asr[~np.isnan(asr)]).tolist(),
        "xlabel": "attack success rate of a background (%)",
        "ylabel": "backgrounds",
        "title": "ASR distribution",
    }


def _notes(body: dict[str, Any]) -> list[str]:
    """The seed and, in early stop, what the order of the backgrounds changes."""
    notes = [f"Seed {body['seed']} (subsets and the schedule's tie-breaks)."]
    if body["mode"] == "early_stop":
        notes.append(EARLY_STOP_NOTE)
    return notes
