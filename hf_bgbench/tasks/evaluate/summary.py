"""The numbers of an ``evaluate`` run: per-variant accuracy with Wilson intervals and the
benchmark's metrics (:mod:`hf_bgbench.scoring`), with the report section the renderer draws
(:func:`hf_bgbench.tasks.evaluate.report.build_report`); over repeated seeded builds of the
data (:meth:`Reader.runs`), also each run's numbers and their mean and spread
(:func:`summarize_runs`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from hf_bgbench.benchmarks import BenchmarkSpec
from hf_bgbench.formatting import pct
from hf_bgbench.metrics import accuracy, per_class_accuracy
from hf_bgbench.models.vlm import NO_ANSWER
from hf_bgbench.results import WITHHELD, Report
from hf_bgbench.scoring import (
    BOOTSTRAP_RESAMPLES,
    RUN_COLUMN,
    ScoringContext,
    accuracy_interval,
    compute_metrics,
)
from hf_bgbench.tasks.evaluate.report import build_report, runs_note, runs_table


def summarize(
    spec: BenchmarkSpec,
    predictions: dict[str, pd.DataFrame],
    skipped: dict[str, list[dict[str, Any]]] | None = None,
    *,
    seed: int = 0,
    bootstrap_resamples: int = BOOTSTRAP_RESAMPLES,
) -> tuple[dict[str, Any], Report]:
    """(results keys, report) of a benchmark from per-variant prediction frames.

    Accuracies carry a 95% Wilson interval; the spec's metrics add theirs (IN-9's gaps: a
    95% paired-bootstrap interval over the images both variants share, seeded by ``seed``).
    Frames of runs pooled by :func:`pool_runs` (a ``run`` column) are repeated measurements
    of the same images: ``n`` counts images, and every interval resamples images with all
    their runs (:func:`hf_bgbench.scoring.image_of`).
    """
    skipped = skipped or {}
    per_variant: dict[str, Any] = {}
    withheld: dict[str, str] = {}
    for variant, frame in predictions.items():
        unread = skipped.get(variant, [])
        per_variant[variant], gap = _variant_numbers(
            spec, variant, frame, unread, seed, bootstrap_resamples
        )
        withheld |= {f"accuracy/{variant}": gap} if gap else {}
    ctx = ScoringContext(
        {v: r["accuracy"] for v, r in per_variant.items()}, spec.classes, seed, bootstrap_resamples
    )
    metrics = compute_metrics(spec.metrics, predictions, ctx)
    body: dict[str, Any] = {"benchmark": spec.name, "variants": per_variant, **metrics.values}
    withheld |= body.get(WITHHELD, {})
    if withheld:
        body[WITHHELD] = withheld
    body["bootstrap"] = {"seed": seed, "resamples": bootstrap_resamples, "confidence": 0.95}
    return body, build_report(spec, per_variant, metrics.report)


def _variant_numbers(
    spec: BenchmarkSpec,
    variant: str,
    frame: pd.DataFrame,
    unread: list[dict[str, Any]],
    seed: int,
    bootstrap_resamples: int,
) -> tuple[dict[str, Any], str | None]:
    """(one variant's numbers, why its interval is withheld or None): accuracy and its
    interval, n, per-class accuracy and the images that could not be read."""
    if frame.empty:
        raise ValueError(f"{spec.name}/{variant}: no image could be scored{_why_none(unread)}.")
    per_class = per_class_accuracy(frame["pred"], frame["label"], spec.num_classes)
    # over images: runs of the same images (pooled) count each image once
    ci95, gap, n = accuracy_interval(frame, seed, bootstrap_resamples)
    measured = {"n_measurements": int(len(frame))} if RUN_COLUMN in frame else {}
    numbers = {
        "accuracy": accuracy(frame["pred"], frame["label"]),
        "accuracy_ci95": ci95,
        "n": int(n),
        **measured,
        "per_class": {
            name: (None if pd.isna(acc) else float(acc))
            for name, acc in zip(spec.classes, per_class, strict=True)
        },
        "skipped": len(unread),
        "skipped_ids": [s["id"] for s in unread],
    }
    return numbers, gap


def _why_none(unread: list[dict[str, Any]]) -> str:
    """Why a variant has no scored image, when its images could not be read ("" else)."""
    if not unread:
        return ""
    return (
        f": all {len(unread)} could not be read; the first: {unread[0]['reason']} Replace or "
        "remove the unreadable files, or score other data"
    )


RUNS_STD_DDOF = 1  # the sample standard deviation over runs


def pool_runs(predictions: dict[str, dict[str, pd.DataFrame]]) -> dict[str, pd.DataFrame]:
    """Per variant, the frames of every run (run -> variant -> frame) as one: each row's id
    prefixed by its run (``<run>/<id>``) so paired metrics pair images within a run, and a
    ``run`` column. Variants are those every run scored."""
    names = list(predictions)
    first = predictions[names[0]]
    return {
        variant: pd.concat(
            [
                predictions[name][variant].assign(
                    id=name + "/" + predictions[name][variant]["id"].astype(str),
                    **{RUN_COLUMN: name},
                )
                for name in names
            ],
            ignore_index=True,
        )
        for variant in first
        if all(variant in predictions[name] for name in names)
    }


def summarize_runs(
    spec: BenchmarkSpec,
    predictions: dict[str, dict[str, pd.DataFrame]],
    skipped: dict[str, dict[str, list[dict[str, Any]]]] | None = None,
    *,
    seed: int = 0,
    bootstrap_resamples: int = BOOTSTRAP_RESAMPLES,
) -> tuple[dict[str, Any], Report]:
    """(results keys, report) over repeated builds of the data (run -> variant -> frame).

    Every number of the report (accuracy per variant, each metric's scores) is computed per
    run; ``runs`` in the results holds them (``per_run``) with their ``mean``, sample ``std``,
    ``min`` and ``max`` over the runs, and the report a table of them. The top-level keys are
    :func:`summarize` of the runs pooled (:func:`pool_runs`): with runs of equal size, each
    number is the mean over the runs."""
    skipped = skipped or {}
    names = list(predictions)
    per_run, units = _scores_per_run(spec, predictions, skipped, seed, bootstrap_resamples)
    spread = _spread_over_runs(names, per_run, list(units))
    body, report = summarize(
        spec,
        pool_runs(predictions),
        _pooled_skipped(predictions, skipped),
        seed=seed,
        bootstrap_resamples=bootstrap_resamples,
    )
    body["runs"] = spread
    report.tables.insert(0, runs_table(spread, units))
    n_images = max(r["n"] for r in body["variants"].values())
    report.notes.append(runs_note(names, n_images, _uneven_variants(predictions, body)))
    return body, report


def _scores_per_run(
    spec: BenchmarkSpec,
    predictions: dict[str, dict[str, pd.DataFrame]],
    skipped: dict[str, dict[str, list[dict[str, Any]]]],
    seed: int,
    bootstrap_resamples: int,
) -> tuple[dict[str, dict[str, float]], dict[str, str]]:
    """(run -> score key -> value, score key -> unit): every score of each run's report
    that has a value, and each score's unit (from the first run that has it)."""
    per_run: dict[str, dict[str, float]] = {}
    units: dict[str, str] = {}
    for name, frames in predictions.items():
        _, report = summarize(
            spec, frames, skipped.get(name), seed=seed, bootstrap_resamples=bootstrap_resamples
        )
        per_run[name] = {s.key: float(s.value) for s in report.scores if s.value is not None}
        for score in report.scores:
            units.setdefault(score.key, score.unit)
    return per_run, units


def _spread_over_runs(
    names: list[str], per_run: dict[str, dict[str, float]], keys: list[str]
) -> dict[str, Any]:
    """The results' ``runs``: each number every run has, per run and its mean, sample std,
    min and max over the runs."""
    values = {
        k: [per_run[n][k] for n in names] for k in keys if all(k in per_run[n] for n in names)
    }
    return {
        "count": len(names),
        "names": names,
        "per_run": per_run,
        "mean": {k: float(np.mean(v)) for k, v in values.items()},
        "std": {
            k: float(np.std(v, ddof=RUNS_STD_DDOF)) if len(v) > RUNS_STD_DDOF else 0.0
            for k, v in values.items()
        },
        "std_ddof": RUNS_STD_DDOF,
        "min": {k: min(v) for k, v in values.items()},
        "max": {k: max(v) for k, v in values.items()},
    }


def _pooled_skipped(
    predictions: dict[str, dict[str, pd.DataFrame]],
    skipped: dict[str, dict[str, list[dict[str, Any]]]],
) -> dict[str, list[dict[str, Any]]]:
    """Per variant, every run's unreadable images, each id prefixed by its run (as
    :func:`pool_runs` prefixes the scored ones)."""
    names = list(predictions)
    return {
        variant: [
            {**s, "id": f"{name}/{s['id']}"}
            for name in names
            for s in skipped.get(name, {}).get(variant, [])
        ]
        for variant in predictions[names[0]]
    }


def _uneven_variants(
    predictions: dict[str, dict[str, pd.DataFrame]], body: dict[str, Any]
) -> list[str]:
    """The scored variants whose number of images differs between runs."""
    sizes = {v: {len(frames[v]) for frames in predictions.values()} for v in body["variants"]}
    return [v for v, n in sizes.items() if len(n) > 1]


def protocol_note(body: dict[str, Any]) -> str:
    """The report's note on how the numbers were made (label protocol, preprocessing,
    intervals), from the results ``body``."""
    said_apart = ("decode_cache", "decode_pipeline")
    pre = ", ".join(f"{k}={v}" for k, v in body["preprocessing"].items() if k not in said_apart)
    pipeline = body["preprocessing"].get("decode_pipeline")
    if pipeline:  # a record, not a setting: said in words (it changes no number)
        workers = pipeline.get("workers", 0)
        where = f"{workers} decode worker process(es)" if workers else "the main process"
        pre += f", decoded in {where} (chosen by {pipeline.get('chosen_by', 'pilot')})"
    states: dict[str, list[str]] = {}
    for variant, state in body["preprocessing"].get("decode_cache", {}).items():
        states.setdefault(state, []).append(variant)
    if set(states) - {"off"}:  # the pixels are the same either way: said only when used
        pre += ", decoded-image cache: " + "; ".join(
            f"{state} ({', '.join(variants)})" for state, variants in states.items()
        )
    boot = body["bootstrap"]
    return (
        f"Protocol: {body['label_protocol']}. Preprocessing: {pre}. Intervals: Wilson "
        f"(accuracies), paired bootstrap over shared images (gaps; {boot['resamples']} "
        f"resamples, seed {boot['seed']})."
    )


def unanswered_counts(label_space: Any, predictions: Mapping[str, pd.DataFrame]) -> dict:
    """Per variant, how many images the model gave no class (a VLM's :data:`NO_ANSWER`
    column: an open answer naming no class or two, rotations that disagree) and of how many;
    empty for a model that always answers."""
    names = tuple(getattr(label_space, "names", ()))
    if not names or names[-1] != NO_ANSWER:
        return {}
    index = len(names) - 1
    counts = {
        v: {"unanswered": int((f["pred_model"] == index).sum()), "n": len(f)}
        for v, f in predictions.items()
    }
    for v, f in predictions.items():  # a two-way question's: which of both or neither
        if "verdict" in f:
            counts[v] |= {k: int((f["verdict"] == k).sum()) for k in ("both", "neither")}
        if "no_answer_reason" in f:  # a served model's images without any answer, by why
            why = f["no_answer_reason"].dropna().value_counts()
            counts[v]["no_answer_from_the_model"] = {str(k): int(n) for k, n in why.items()}
    return counts


def answered_only(label_space: Any, predictions: Mapping[str, pd.DataFrame]) -> dict:
    """The predictions without the images that got no answer (a rule that leaves them out
    of the accuracy, as a two-way question's authors do); a variant where no image got one
    has no accuracy, and is refused by name."""
    index = len(label_space.names) - 1
    out = {v: f[f["pred_model"] != index].reset_index(drop=True) for v, f in predictions.items()}
    empty = [f"{v} ({len(predictions[v])} images)" for v, f in out.items() if f.empty]
    if empty:
        raise ValueError(
            f"No answer named exactly one of its question's two classes on {', '.join(empty)}, "
            "so there is no accuracy to report (such answers are left out of it). The answers "
            "are in the prediction cache; a model that does not follow the question cannot be "
            "scored by this protocol -- try another --protocol."
        )
    return out


def rotation_accuracies(
    table: np.ndarray, predictions: Mapping[str, pd.DataFrame]
) -> dict[str, list[float]]:
    """Per variant, the accuracy (%) of each rotation of a multiple-choice question on its
    own (a VLM's per-image ``rotation_choices``, model classes mapped through ``table``);
    empty when the model recorded no rotations or asked once."""
    out: dict[str, list[float]] = {}
    for variant, frame in predictions.items():
        if "rotation_choices" not in frame or frame["rotation_choices"].isna().any():
            return {}
        picks = np.stack(frame["rotation_choices"].to_list())  # (images, rotations)
        if picks.shape[1] < 2:
            return {}
        right = table[picks] == frame["label"].to_numpy()[:, None]
        out[variant] = [round(100.0 * float(a), 4) for a in right.mean(axis=0)]
    return out


def rotation_note(accuracies: Mapping[str, Sequence[float]]) -> str:
    """The report's sentence on each rotation's accuracy beside the circular one."""
    parts = "; ".join(
        f"{v} {', '.join(pct(a / 100) for a in accs)}" for v, accs in accuracies.items()
    )
    return (
        "Accuracy of each rotation of the options on its own (%): "
        f"{parts} -- the circular accuracy counts an image right only if every rotation is."
    )
