"""What a Backgrounds Challenge run reports and keeps: its numbers (from the per-foreground
verdicts, all from :mod:`hf_bgbench.metrics`), its report section (scores, tables, figure;
rendered by :mod:`hf_bgbench.render` like every task) and its per-foreground files."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from hf_bgbench.formatting import interval, pct
from hf_bgbench.metrics import (
    FoolingMatrix,
    accuracy,
    challenge_accuracy,
    challenge_accuracy_per_class,
    challenge_report,
    wilson_interval,
)
from hf_bgbench.results import Figure, Report, Score, Table

RESULT_KEYS = [  # what a reader wants first in challenge.json (after the header)
    "mode",
    "challenge_accuracy",
    "challenge_accuracy_ci95",
    "clean_accuracy",
    "n_foregrounds",
    "n_backgrounds",
    "n_vulnerable",
    "challenge_accuracy_per_class",
    "attack_success",
]
TOP_BACKGROUNDS = 3  # most fooling backgrounds listed per class in the results


def challenge_report_section(body: dict[str, Any], spec, asr: np.ndarray | None) -> Report:
    lo, hi = body["challenge_accuracy_ci95"]
    scores = [
        Score(
            "challenge_accuracy",
            "Challenge accuracy",
            body["challenge_accuracy"],
            ci95=[lo, hi],
            n=body["n_foregrounds"],
            headline=True,
            description=(
                f"(share of foregrounds that no {body['background_variant']} background, of "
                "any class, makes the model misclassify)."
            ),
        ),
        Score(
            "accuracy",
            f"Clean accuracy ({body['foreground_variant']})",
            body["clean_accuracy"],
            n=body["n_foregrounds"],
            config=body["foreground_variant"],
            short="Clean acc.",
        ),
    ]
    summary = Table(
        "challenge",
        "Backgrounds Challenge:",
        ["Model", "Challenge acc. (%)", "95% CI", "Clean acc. (%)", "Foregrounds", "Backgrounds"],
        [
            [
                str(body["model"]),
                pct(body["challenge_accuracy"]),
                interval(body["challenge_accuracy_ci95"]),
                pct(body["clean_accuracy"]),
                str(body["n_foregrounds"]),
                str(body["n_backgrounds"]),
            ]
        ],
        note=(
            f"Mode: {body['mode'].replace('_', ' ')}; composites evaluated "
            f"{body['composites_evaluated']:,} of {body['composites_total']:,} (the least "
            f"any order needs: {body['composites_minimal']:,})"
            + _subset_note(body["subset"], body.get("skipped") or {})
            + f". Clean accuracy: the uncomposited {body['foreground_variant']} images."
        ),
    )
    per_class = body["challenge_accuracy_per_class"]
    counts = body["n_foregrounds_per_class"]
    attack = body.get("attack_success")
    if attack:
        classes = Table(
            "per_class",
            "Per class:",
            [
                "Class",
                "n",
                "Challenge acc. (%)",
                "Max ASR (%)",
                "Most fooling background",
                "Foolable into (%)",
            ],
            [
                [
                    name,
                    str(counts[name]),
                    pct(value),
                    pct(attack["per_class"][name]["max_asr"]),
                    (attack["per_class"][name]["top_backgrounds"] or [{"id": "—"}])[0]["id"],
                    pct(attack["per_class"][name]["foolable_into"]),
                ]
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
        scores.append(
            Score(
                "fooled_into_background_class",
                "Foregrounds foolable into the background's class",
                attack["fooled_into_background_class"],
                latex=False,
            )
        )
    else:
        classes = Table(
            "per_class",
            "Per class:",
            ["Class", "n", "Challenge acc. (%)"],
            [[name, str(counts[name]), pct(value)] for name, value in per_class.items()],
        )
    figure = Figure(
        file="challenge.png",
        title=f"{body['model']}: Backgrounds Challenge",
        labels=list(per_class),
        values=[100 * v if v is not None else None for v in per_class.values()],
        ylabel="challenge accuracy (%)",
        reference=(100 * body["challenge_accuracy"], "overall"),
        counts=[counts[n] for n in per_class],
        ylim=(0.0, 100.0),
        histogram=(
            {
                "values": (100 * asr[~np.isnan(asr)]).tolist(),
                "xlabel": "attack success rate of a background (%)",
                "ylabel": "backgrounds",
                "title": "ASR distribution",
            }
            if asr is not None
            else None
        ),
    )
    notes = [f"Seed {body['seed']} (subsets and the schedule's tie-breaks)."]
    if body["mode"] == "early_stop":
        notes.append(
            "Each foreground stops at its first fooling composite; backgrounds are tried "
            "most harmful first (how often they fooled, and how far they lowered the true "
            "class's probability, so far). The verdicts do not depend on that order, but "
            "which fooling background vulnerable.parquet lists does: with scheduling, a "
            "fooling background is the first found in the schedule, not in dataset order."
        )
    return Report(scores, [summary, classes], [figure], notes)


def _subset_note(sub: dict[str, Any], skipped: dict[str, Any]) -> str:
    """The caps that left images out, said as a subset; "" when every image was used (a cap
    above the data's size draws them all)."""
    from hf_bgbench.tasks.common import left_images_out

    caps = [
        f"{cap}={sub[cap]}"
        for cap, ids, part in (
            ("max_foregrounds", "foreground_ids", "foregrounds"),
            ("max_backgrounds", "background_ids", "backgrounds"),
        )
        if left_images_out(sub.get(cap), sub.get(ids), len(skipped.get(part) or []))
    ]
    return f"; random subset ({', '.join(caps)}, seed {sub['seed']})" if caps else ""


def write_challenge_files(
    out: dict[str, Any], bg_labels: np.ndarray, bg_ids: list[str]
) -> dict[str, Callable[[Path], None]]:
    """Writers of vulnerable.parquet (one row per foreground) and, for a full-matrix run,
    fooling_matrix.npz (every composite's prediction).

    ``fooling_bg_id`` / ``pred`` of a vulnerable foreground name *a* fooling background and
    the prediction on it: in early stop the first one the schedule found (the most harmful
    backgrounds so far are tried first), not necessarily the first in dataset order; in full-matrix
    mode the first in dataset order. ``composites``: what the foreground took."""
    first = np.asarray(out["first_bg"], np.int64)
    frame = pd.DataFrame(
        {
            "id": out["ids"],
            "label": np.asarray(out["labels"], np.int64),
            "vulnerable": np.asarray(out["vulnerable"], bool),
            "fooling_bg_id": [bg_ids[j] if j >= 0 else None for j in first],
            "fooling_bg_label": pd.array(
                [int(bg_labels[j]) if j >= 0 else None for j in first], dtype="Int64"
            ),
            "pred": pd.array(out["first_pred"], dtype="Int64"),
            "clean_pred": np.asarray(out["clean_pred"], np.int64),
            "composites": np.asarray(out["composites_per_fg"], np.int64),
        }
    )
    writers: dict[str, Callable[[Path], None]] = {}
    if out["rows"]:
        matrix = np.stack(out["rows"])
        labels = np.asarray(out["labels"], np.int64)
        frame["n_fooling_backgrounds"] = (matrix != labels[:, None]).sum(axis=1)

        def write_matrix(path: Path) -> None:
            with path.open("wb") as f:  # a file object: savez would append ".npz" to a name
                np.savez_compressed(
                    f,
                    predictions=matrix.astype(np.int16),
                    foreground_labels=labels,
                    background_labels=bg_labels,
                    foreground_ids=np.asarray(out["ids"]),
                    background_ids=np.asarray(bg_ids),
                    attack_success_rate=out.get("asr"),
                )

        writers["fooling_matrix.npz"] = write_matrix
    writers["vulnerable.parquet"] = lambda path: frame.to_parquet(path, index=False)
    return writers


def summarize(
    spec, out: dict[str, Any], bg_labels: np.ndarray, bg_ids: list[str], *, full_matrix: bool
) -> dict[str, Any]:
    """The challenge's numbers from the per-foreground verdicts (and the full matrix)."""
    labels = np.asarray(out["labels"], np.int64)
    vulnerable = np.asarray(out["vulnerable"], bool)
    acc = challenge_accuracy(vulnerable)
    per_class = challenge_accuracy_per_class(vulnerable, labels)
    n_fg, n_bg = len(labels), len(bg_ids)
    results: dict[str, Any] = {
        "challenge_accuracy": acc,
        "challenge_accuracy_ci95": list(wilson_interval(int((~vulnerable).sum()), n_fg)),
        "clean_accuracy": accuracy(np.asarray(out["clean_pred"]), labels),
        "n_foregrounds": n_fg,
        "n_backgrounds": n_bg,
        "n_vulnerable": int(vulnerable.sum()),
        "challenge_accuracy_per_class": {n: per_class.get(c) for c, n in enumerate(spec.classes)},
        "n_foregrounds_per_class": {
            n: int((labels == c).sum()) for c, n in enumerate(spec.classes)
        },
        # composites the verdicts took (cached foregrounds count what they took when computed)
        "composites_evaluated": int(out["composites"]),
        # the least any order can take: every background for a robust foreground, one
        # composite for a vulnerable one (full matrix: every pair)
        "composites_minimal": n_fg * n_bg
        if full_matrix
        else int((~vulnerable).sum()) * n_bg + int(vulnerable.sum()),
        "composites_total": n_fg * n_bg,
        "composites_computed": int(out["composites_computed"]),  # by this run
        "clean_forwards": int(out["clean_forwards"]),  # clean foregrounds scored by this run
        "computed_rows": int(out["rows_computed"]),  # (foreground, background chunk) verdicts
        "reused_rows": int(out["rows_reused"]),  # ... taken from the cache
    }
    if full_matrix:
        matrix = FoolingMatrix.from_arrays(
            np.stack(out["rows"]), labels, bg_labels, spec.num_classes
        )
        report = challenge_report(matrix)
        if not math.isclose(report["challenge_accuracy"], acc):  # same data, same definition
            raise RuntimeError("full-matrix challenge accuracy disagrees with the per-row flags")
        results["attack_success"] = _asr_summary(spec, report, bg_labels, bg_ids)
        out["asr"] = np.asarray(report["attack_success_rate"], float)  # for the outputs
    return results


def _asr_summary(
    spec, report: dict[str, Any], bg_labels: np.ndarray, bg_ids: list[str]
) -> dict[str, Any]:
    asr = np.asarray(report["attack_success_rate"], float)
    per_class = {}
    for c, name in enumerate(spec.classes):
        cols = np.flatnonzero((bg_labels == c) & ~np.isnan(asr))
        order = cols[np.argsort(-asr[cols], kind="stable")][:TOP_BACKGROUNDS]
        per_class[name] = {
            "n_backgrounds": int((bg_labels == c).sum()),
            "max_asr": report["max_attack_success_rate_per_class"].get(c),
            "mean_asr": float(asr[cols].mean()) if len(cols) else None,
            "top_backgrounds": [{"id": bg_ids[j], "asr": float(asr[j])} for j in order],
            "foolable_into": report["foolable_into"].get(c),
        }
    defined = asr[~np.isnan(asr)]
    return {
        "mean_asr": float(defined.mean()) if len(defined) else None,
        "max_asr": float(defined.max()) if len(defined) else None,
        "fooled_into_background_class": report["fooled_into_background_class"],
        "per_class": per_class,
    }
