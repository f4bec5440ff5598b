"""The report's numbers, as plain rows: each spec's :class:`~hf_bgbench.spec.Headline` read
out of a task's results document, and its :class:`~hf_bgbench.spec.Reference` rows beside
it. Pure functions over documents; no model, no files."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hf_bgbench.report.paired import subset_of
from hf_bgbench.spec import BenchmarkSpec, Headline

DISPLAY_SCALE = {"%": 100.0, "pts": 100.0, "": 1.0}
"""Results documents keep fractions; the report shows % and points (x 100)."""


def display(value: float | None, unit: str) -> float | None:
    """A results value in the unit a reader sees (fractions x 100 for % and pts)."""
    return None if value is None else float(value) * DISPLAY_SCALE[unit]


def _scores(doc: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {s["key"]: s for s in doc.get("report", {}).get("scores", [])}


def pick_score(headline: Headline, doc: Mapping[str, Any]) -> tuple[Mapping[str, Any], str]:
    """The score of ``headline`` in ``doc`` and, for a ``worst`` headline, which one it is
    (the largest value among the keys under its prefix; "" otherwise). A KeyError names
    the key when the document has no such score."""
    scores = _scores(doc)
    if not headline.worst:
        if headline.key not in scores:
            raise KeyError(headline.key)
        return scores[headline.key], ""
    under = [
        (key, s)
        for key, s in scores.items()
        if key.startswith(headline.key) and s.get("value") is not None
    ]
    if not under:
        raise KeyError(headline.key)
    key, score = max(under, key=lambda item: item[1]["value"])
    return score, key[len(headline.key) :]


def protocol_of(doc: Mapping[str, Any]) -> tuple[str, list[str]]:
    """The recipe name a results document ran and every deviation it recorded."""
    protocol = doc.get("protocol") or {}
    deviations = list(protocol.get("deviations") or doc.get("protocol_deviations") or [])
    return str(protocol.get("name") or ""), deviations


def headline_rows(
    spec: BenchmarkSpec,
    docs: Mapping[str, Mapping[str, Any] | None],
    headlines: Sequence[Headline] | None = None,
) -> list[dict[str, Any]]:
    """One row per headline of ``spec`` (or of ``headlines``, e.g. its leaderboard
    numbers): its value (display units), 95% interval and n from the task's document in
    ``docs`` (task name -> document; None or absent: not run, the row says so), the
    published values beside it and the protocol that produced it."""
    rows = []
    for h in spec.report if headlines is None else headlines:
        row: dict[str, Any] = {
            "benchmark": spec.name,
            "benchmark_title": spec.short_name,
            "task": h.task,
            "key": h.key,
            "label": h.label,
            "unit": h.unit,
            "reliance": h.reliance,
            "eval_task_id": h.eval_task_id,
            "config": spec.leaderboard_config(h),
            "description": h.description,
            "value": None,
            "ci95": None,
            "n": None,
            "which": "",
            "protocol": "",
            "status": "not run",
            "warnings": [],
            "sample": "",
            "published": published_values(spec, h),
        }
        doc = docs.get(h.task)
        if doc is not None:
            row.update(_from_results(h, doc))
        rows.append(row)
    return rows


def _from_results(h: Headline, doc: Mapping[str, Any]) -> dict[str, Any]:
    """What a headline's row takes from its task's results document."""
    try:
        score, which = pick_score(h, doc)
    except KeyError:
        out: dict[str, Any] = {
            "status": "not in results" + (f" (needs {h.needs})" if h.needs else "")
        }
    else:
        ci = score.get("ci95")
        out = {
            "value": display(score.get("value"), h.unit),
            "ci95": None if ci is None else [display(x, h.unit) for x in ci],
            "n": score.get("n"),
            "which": which,
            "status": "run",
        }
    return out | {
        "protocol": protocol_of(doc)[0],
        "warnings": list(doc.get("warnings") or []),
        # a number over a sample sits beside full-set published ones: said as a sample
        "sample": subset_of(doc).removeprefix("a seeded subset: "),
    }


def published_values(spec: BenchmarkSpec, headline: Headline) -> list[dict[str, Any]]:
    """The published values of ``headline``'s number: (model, value, tag, source) per
    reference row of the same task that reports it. A ``worst`` headline has none (the
    papers do not report a worst edit)."""
    if headline.worst:
        return []
    return [
        {
            "model": ref.model,
            "value": float(ref.scores[headline.key]),
            "model_tag": ref.model_tag,
            "source": ref.source,
        }
        for ref in spec.references
        if ref.task == headline.task and headline.key in ref.scores
    ]


def reference_rows(spec: BenchmarkSpec) -> list[dict[str, Any]]:
    """Every reference row of ``spec`` as a plain dict (report.json, ``bgbench list``)."""
    return [
        {
            "benchmark": spec.name,
            "model": ref.model,
            "model_tag": ref.model_tag,
            "task": ref.task,
            "dataset": ref.dataset,
            "source": ref.source,
            "notes": ref.notes,
            "scores": dict(ref.scores),
        }
        for ref in spec.references
    ]
