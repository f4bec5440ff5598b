"""The Hub's evaluation-results format, written through ``huggingface_hub``'s own API.

A model repo holds ``.eval_results/<name>.yaml`` files: lists of
:class:`huggingface_hub.EvalResultEntry` (dataset id, task id, value, date, notes). A benchmark
dataset declares itself with an ``eval.yaml`` at its root (:mod:`hf_bgbench.hub.eval_yaml`),
after which the scores model repos publish for it show on the dataset's leaderboard and on
each model's page.

Three rules keep a leaderboard true (:func:`report_entries`):

1. Only a benchmark's leaderboard numbers become entries (higher is better: a Hub leaderboard
   ranks high first); gaps and drops go into each entry's ``notes``.
2. An entry names a Hub dataset only when that dataset was scored (:func:`hub.published.credit`
   <hf_bgbench.hub.published.credit>): a local build, a converted release or a photo folder
   gets no entry, whatever its numbers.
3. Only a run of the published protocol on all of the data (no ``protocol.departures``:
   restricted classes, resized input, a zero-shot head over other classes, a subset) is an
   entry.

What is withheld is returned with the reason, which report.md states with what to run.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from huggingface_hub import EvalResultEntry, eval_result_entries_to_yaml

from hf_bgbench.benchmarks import BenchmarkSpec, get_benchmark
from hf_bgbench.hub.published import credit
from hf_bgbench.results import model_head_line


def withheld_reason(spec: BenchmarkSpec, results: Mapping[str, Any]) -> tuple[str, str | None]:
    """("" and the dataset revision) when ``results`` may be a leaderboard entry of
    ``spec``'s Hub dataset, else (why not, in words, None)."""
    data = credit(spec, results.get("data"))
    if not data.credited:
        return f"scored on {data.reason}", None
    protocol = results.get("protocol") or {}
    if "published" not in protocol:
        said = "results that do not record whether the published protocol ran (re-run them)"
        return said, None
    if not protocol["published"]:
        departures = "; ".join(protocol.get("departures") or ())
        return f"not the published protocol on all of the data: {departures}", None
    return "", data.revision


def what_to_run(spec: BenchmarkSpec, reason: str) -> str:
    """The sentence after a withheld reason: what gives an entry instead."""
    if reason.startswith("not the published protocol"):
        return "Re-run without those options to get leaderboard entries."
    if not spec.hub_published:
        return (
            f"{spec.hub_repo} is not published on the Hub yet, so no score can be credited to "
            "it yet; the numbers stand in report.md and the model-index."
        )
    return (
        f"For leaderboard entries, score the published dataset: no --data for {spec.name} "
        f"(reads {spec.hub_repo}), or --data {spec.name}=FOLDER with FOLDER from `hf download "
        f"{spec.hub_repo} --repo-type dataset --local-dir FOLDER`."
    )


def _context_notes(report: Mapping[str, Any], benchmark: str) -> list[str]:
    """The benchmark's gaps and drops (higher = more reliance): not leaderboard tasks, so
    each entry carries them in its notes."""
    out = []
    for row in report["headlines"]:
        if row["benchmark"] == benchmark and row["reliance"] == 1 and row["value"] is not None:
            which = f" ({row['which']})" if row["which"] else ""
            value = f"{row['value']:.2f} {row['unit']}".strip()
            out.append(f"{row['label']}{which} {value} (lower = less reliance)")
    return out


def report_entries(
    report: Mapping[str, Any],
) -> tuple[dict[str, list[EvalResultEntry]], list[dict[str, str]]]:
    """(benchmark name -> its eval-result entries, the numbers withheld with the reason and
    what to run instead). Entries are the leaderboard numbers with a value, in display units
    (% as the papers print them), each noting the package version, protocol, n, the 95%
    interval, the gaps and every deviation."""
    by_name = {b["name"]: b for b in report["benchmarks"]}
    entries: dict[str, list[EvalResultEntry]] = {}
    withheld: dict[tuple[str, str], dict[str, str]] = {}
    verdicts: dict[tuple[str, str], tuple[str, str | None]] = {}
    for row in report.get("leaderboard", []):
        bench = by_name[row["benchmark"]]
        task = bench["tasks"].get(row["task"]) or {}
        results = task.get("results")
        if row["value"] is None or not results:
            continue
        spec = get_benchmark(row["benchmark"])
        key = (row["benchmark"], row["task"])
        if key not in verdicts:  # once per task: a folder's check hashes all its data files
            verdicts[key] = withheld_reason(spec, results)
        reason, revision = verdicts[key]
        if reason:
            withheld.setdefault(
                key,
                {
                    "benchmark": row["benchmark"],
                    "task": row["task"],
                    "reason": reason,
                    "instead": what_to_run(spec, reason),
                },
            )
            continue
        parts = [f"hf_bgbench {report['hf_bgbench_version']}", f"protocol {row['protocol']}"]
        if row["n"] is not None:
            parts.append(f"n={row['n']}")
        if row["ci95"] is not None:
            lo, hi = row["ci95"]
            parts.append(f"95% CI [{lo:.2f}, {hi:.2f}]")
        parts.append(f"config {row['config']}")
        head = model_head_line(results)
        if head:  # a CLIP's numbers depend on its class names and templates
            parts.append(head)
        parts += _context_notes(report, row["benchmark"])
        parts += [f"deviation: {d}" for d in task.get("deviations", [])]
        entries.setdefault(row["benchmark"], []).append(
            EvalResultEntry(
                dataset_id=bench["hub_repo"],
                task_id=row["eval_task_id"],
                value=round(float(row["value"]), 4),
                dataset_revision=revision,
                date=str(results.get("created") or report.get("created") or "") or None,
                notes="; ".join(parts),
            )
        )
    return entries, list(withheld.values())


def entries_yaml(entries: list[EvalResultEntry]) -> str:
    """One ``.eval_results`` file's text (dates quoted: ``safe_dump`` quotes any string a
    YAML reader would otherwise turn into a timestamp)."""
    return yaml.safe_dump(eval_result_entries_to_yaml(entries), sort_keys=False, allow_unicode=True)


def write_eval_results(report: dict[str, Any], folder: Path) -> list[str]:
    """Write ``folder/<benchmark>.yaml`` for every benchmark with an entry (no folder when
    none has); record what was withheld and why in ``report["eval_results_withheld"]``.
    Returns the file names."""
    entries, withheld = report_entries(report)
    report["eval_results_withheld"] = withheld
    names = []
    for name, listed in entries.items():
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{name}.yaml").write_text(entries_yaml(listed), encoding="utf-8")
        names.append(f"{name}.yaml")
    return names
