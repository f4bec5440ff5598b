"""What a Backgrounds Challenge run computes and keeps: its numbers (from the per-foreground
verdicts, all from :mod:`hf_bgbench.metrics`) and its per-foreground files. Its report
section is :func:`hf_bgbench.tasks.challenge.report.build_report`."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from hf_bgbench.metrics import (
    FoolingMatrix,
    accuracy,
    challenge_accuracy,
    challenge_accuracy_per_class,
    challenge_report,
    wilson_interval,
)

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


def write_challenge_files(
    out: dict[str, Any], bg_labels: np.ndarray, bg_ids: list[str]
) -> dict[str, Callable[[Path], None]]:
    """Writers of vulnerable.parquet (one row per foreground) and, for a full-matrix run,
    fooling_matrix.npz (every composite's prediction).

    ``fooling_bg_id`` / ``pred`` of a vulnerable foreground name *a* fooling background and
    the prediction on it: in early stop the first one the schedule found (the most harmful
    backgrounds so far are tried first), not necessarily the first in dataset order; in full-matrix
    mode the first in dataset order. ``composites``: what the foreground took."""
    frame = _vulnerable_frame(out, bg_labels, bg_ids)
    writers: dict[str, Callable[[Path], None]] = {}
    if out["rows"]:
        matrix = np.stack(out["rows"])
        labels = np.asarray(out["labels"], np.int64)
        frame["n_fooling_backgrounds"] = (matrix != labels[:, None]).sum(axis=1)
        writers["fooling_matrix.npz"] = _matrix_writer(out, matrix, bg_labels, bg_ids)
    writers["vulnerable.parquet"] = lambda path: frame.to_parquet(path, index=False)
    return writers


def _vulnerable_frame(
    out: dict[str, Any], bg_labels: np.ndarray, bg_ids: list[str]
) -> pd.DataFrame:
    """vulnerable.parquet's rows: each foreground's verdict, fooling background and cost."""
    first = np.asarray(out["first_bg"], np.int64)
    return pd.DataFrame(
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


def _matrix_writer(
    out: dict[str, Any], matrix: np.ndarray, bg_labels: np.ndarray, bg_ids: list[str]
) -> Callable[[Path], None]:
    """The writer of fooling_matrix.npz: every composite's prediction, the ids and labels of
    both sides, and each background's attack success rate."""

    def write_matrix(path: Path) -> None:
        with path.open("wb") as f:  # a file object: savez would append ".npz" to a name
            np.savez_compressed(
                f,
                predictions=matrix.astype(np.int16),
                foreground_labels=np.asarray(out["labels"], np.int64),
                background_labels=bg_labels,
                foreground_ids=np.asarray(out["ids"]),
                background_ids=np.asarray(bg_ids),
                attack_success_rate=out.get("asr"),
            )

    return write_matrix


def summarize(
    spec, out: dict[str, Any], bg_labels: np.ndarray, bg_ids: list[str], *, full_matrix: bool
) -> dict[str, Any]:
    """The challenge's numbers from the per-foreground verdicts (and the full matrix)."""
    labels = np.asarray(out["labels"], np.int64)
    vulnerable = np.asarray(out["vulnerable"], bool)
    results = _verdict_numbers(spec, out, labels, vulnerable, len(bg_ids))
    results |= _composite_counts(out, vulnerable, len(bg_ids), full_matrix=full_matrix)
    if full_matrix:
        matrix = FoolingMatrix.from_arrays(
            np.stack(out["rows"]), labels, bg_labels, spec.num_classes
        )
        # the metric core's numbers of the fooling matrix (a dict, not the report section)
        matrix_numbers = challenge_report(matrix)
        if not math.isclose(matrix_numbers["challenge_accuracy"], results["challenge_accuracy"]):
            # same data, same definition
            raise RuntimeError("full-matrix challenge accuracy disagrees with the per-row flags")
        results["attack_success"] = _asr_summary(spec, matrix_numbers, bg_labels, bg_ids)
        out["asr"] = np.asarray(matrix_numbers["attack_success_rate"], float)  # for the outputs
    return results


def _verdict_numbers(
    spec, out: dict[str, Any], labels: np.ndarray, vulnerable: np.ndarray, n_bg: int
) -> dict[str, Any]:
    """Challenge accuracy (overall, with its Wilson interval, and per class), clean accuracy
    and the counts of foregrounds and backgrounds."""
    per_class = challenge_accuracy_per_class(vulnerable, labels)
    n_fg = len(labels)
    return {
        "challenge_accuracy": challenge_accuracy(vulnerable),
        "challenge_accuracy_ci95": list(wilson_interval(int((~vulnerable).sum()), n_fg)),
        "clean_accuracy": accuracy(np.asarray(out["clean_pred"]), labels),
        "n_foregrounds": n_fg,
        "n_backgrounds": n_bg,
        "n_vulnerable": int(vulnerable.sum()),
        "challenge_accuracy_per_class": {n: per_class.get(c) for c, n in enumerate(spec.classes)},
        "n_foregrounds_per_class": {
            n: int((labels == c).sum()) for c, n in enumerate(spec.classes)
        },
    }


def _composite_counts(
    out: dict[str, Any], vulnerable: np.ndarray, n_bg: int, *, full_matrix: bool
) -> dict[str, Any]:
    """What the verdicts cost: composites evaluated, the least any order needs, and what
    this run computed or took from the cache."""
    n_fg = len(vulnerable)
    return {
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


def _asr_summary(
    spec, matrix_numbers: dict[str, Any], bg_labels: np.ndarray, bg_ids: list[str]
) -> dict[str, Any]:
    """The results' ``attack_success``: the backgrounds' attack success rates overall and
    per class (from :func:`hf_bgbench.metrics.challenge_report`'s ``matrix_numbers``)."""
    asr = np.asarray(matrix_numbers["attack_success_rate"], float)
    per_class = {}
    for c, name in enumerate(spec.classes):
        cols = np.flatnonzero((bg_labels == c) & ~np.isnan(asr))
        order = cols[np.argsort(-asr[cols], kind="stable")][:TOP_BACKGROUNDS]
        per_class[name] = {
            "n_backgrounds": int((bg_labels == c).sum()),
            "max_asr": matrix_numbers["max_attack_success_rate_per_class"].get(c),
            "mean_asr": float(asr[cols].mean()) if len(cols) else None,
            "top_backgrounds": [{"id": bg_ids[j], "asr": float(asr[j])} for j in order],
            "foolable_into": matrix_numbers["foolable_into"].get(c),
        }
    defined = asr[~np.isnan(asr)]
    return {
        "mean_asr": float(defined.mean()) if len(defined) else None,
        "max_asr": float(defined.max()) if len(defined) else None,
        "fooled_into_background_class": matrix_numbers["fooled_into_background_class"],
        "per_class": per_class,
    }
