"""The Hub's evaluation-results format, written through ``huggingface_hub``'s own API.

A model repo holds ``.eval_results/<name>.yaml`` files: lists of
:class:`huggingface_hub.EvalResultEntry` (dataset id, task id, value, date, notes). A benchmark
dataset declares itself with an ``eval.yaml`` at its root (name, description, evaluation
framework, tasks), after which the scores model repos publish for it show on the dataset's
leaderboard and on each model's page. :func:`write_eval_results` writes the first from a
report; :mod:`hf_bgbench.hub.eval_yaml` the second, from a benchmark's spec.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from huggingface_hub import EvalResultEntry, eval_result_entries_to_yaml

from hf_bgbench.results import zero_shot_head


def local_data_note(data: Mapping[str, Any] | None, hub_repo: str) -> str:
    """ "" when ``data`` is the benchmark's Hub dataset, else a sentence naming what was
    scored instead (the score is not the published benchmark's)."""
    data = data or {}
    if data.get("kind") == "hub" and data.get("location") == hub_repo:
        return ""
    return (
        f"scored on other data than {hub_repo}: {data.get('kind', '?')} "
        f"{data.get('location', '?')} (fingerprint {data.get('fingerprint', '?')})"
    )


def report_entries(report: Mapping[str, Any]) -> dict[str, list[EvalResultEntry]]:
    """Benchmark name -> the eval-result entries of its headlines that have a value, in
    display units (% and points as the papers print them), each with a note naming the
    package version, the protocol, the data, n and every deviation."""
    by_name = {b["name"]: b for b in report["benchmarks"]}
    out: dict[str, list[EvalResultEntry]] = {}
    for row in report["headlines"]:
        bench = by_name[row["benchmark"]]
        task = bench["tasks"].get(row["task"]) or {}
        results = task.get("results")
        if row["value"] is None or not results:
            continue
        data = results.get("data") or {}
        parts = [f"hf_bgbench {report['hf_bgbench_version']}", f"protocol {row['protocol']}"]
        if row["which"]:
            parts.append(f"worst: {row['which']}")
        if row["n"] is not None:
            parts.append(f"n={row['n']}")
        if row["ci95"] is not None:
            lo, hi = row["ci95"]
            parts.append(f"95% CI [{lo:.2f}, {hi:.2f}]")
        head = zero_shot_head(results)
        if head:  # a CLIP's numbers depend on its class names and templates
            parts.append(head)
        local = local_data_note(data, bench["hub_repo"])
        if local:
            parts.append(local)
        parts += [f"deviation: {d}" for d in task.get("deviations", [])]
        out.setdefault(row["benchmark"], []).append(
            EvalResultEntry(
                dataset_id=bench["hub_repo"],
                task_id=row["eval_task_id"],
                value=round(float(row["value"]), 4),
                dataset_revision=data.get("revision"),
                date=results.get("created"),
                notes="; ".join(parts),
            )
        )
    return out


def write_eval_results(report: Mapping[str, Any], folder: Path) -> list[str]:
    """Write ``folder/<benchmark>.yaml`` for every benchmark with a value; the names."""
    folder.mkdir(parents=True, exist_ok=True)
    names = []
    for name, entries in report_entries(report).items():
        text = yaml.safe_dump(
            eval_result_entries_to_yaml(entries), sort_keys=False, allow_unicode=True
        )
        (folder / f"{name}.yaml").write_text(text, encoding="utf-8")
        names.append(f"{name}.yaml")
    return names
