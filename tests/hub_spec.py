"""The Hub's own specification of ``eval.yaml`` and ``.eval_results/*.yaml``, as checks written
from its text (hub-docs ``docs/hub/eval-results.md`` and ``eval_results.yaml``; the framework
list of huggingface.js ``packages/tasks/src/eval.ts``), independent of the writer under test.
Each function returns the problems found (empty: the file is what the Hub accepts)."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from typing import Any

import yaml

EVAL_YAML_FIELDS = ("name", "description", "evaluation_framework", "tasks")
TASK_FIELDS = ("id", "config", "split")
ENTRY_KEYS = {"dataset", "value", "verifyToken", "date", "source", "notes", "evaluation_framework"}
DATASET_KEYS = {"id", "task_id", "config", "split", "revision"}
SOURCE_KEYS = {"url", "name", "user", "org"}
REPO_ID = re.compile(r"^[\w.-]+/[\w.-]+$")


def eval_yaml_problems(doc: Mapping[str, Any], variants: tuple[str, ...] = ()) -> list[str]:
    """What a Hub dataset's ``eval.yaml`` lacks (``variants``: the configs tasks may name)."""
    problems = [f"missing {k!r}" for k in EVAL_YAML_FIELDS if not doc.get(k)]
    for i, task in enumerate(doc.get("tasks") or []):
        problems += [f"task {i}: missing {k!r}" for k in TASK_FIELDS if not task.get(k)]
        if variants and task.get("config") not in variants:
            problems.append(f"task {i}: config {task.get('config')!r} is not a dataset config")
    ids = [t.get("id") for t in doc.get("tasks") or []]
    if len(ids) != len(set(ids)):
        problems.append("task ids repeat")
    return problems


def eval_results_problems(text: str) -> list[str]:
    """What a ``.eval_results/*.yaml`` file's text breaks of the specification: a list of
    entries, each with ``dataset.id`` (a Hub id), ``dataset.task_id`` and one numeric
    ``value``; ``date`` an ISO-8601 string (quoted, so YAML keeps it a string); ``source``
    with its ``url``; no keys the specification does not name."""
    problems = []
    entries = yaml.safe_load(text)
    if not isinstance(entries, list) or not entries:
        return ["not a non-empty list of entries"]
    for i, e in enumerate(entries):
        where = f"entry {i}"
        problems += [f"{where}: unknown key {k!r}" for k in set(e) - ENTRY_KEYS]
        dataset = e.get("dataset") or {}
        problems += [f"{where}: unknown dataset key {k!r}" for k in set(dataset) - DATASET_KEYS]
        if not REPO_ID.match(str(dataset.get("id", ""))):
            problems.append(f"{where}: dataset.id {dataset.get('id')!r} is not a Hub id")
        if not dataset.get("task_id"):
            problems.append(f"{where}: no dataset.task_id")
        value = e.get("value")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            problems.append(f"{where}: value {value!r} is not one plain number")
        if "date" in e:
            if not isinstance(e["date"], str):
                problems.append(f"{where}: date {e['date']!r} is not a string (unquoted?)")
            else:
                try:
                    dt.datetime.fromisoformat(e["date"])
                except ValueError:
                    problems.append(f"{where}: date {e['date']!r} is not ISO-8601")
        source = e.get("source")
        if source is not None:
            if not isinstance(source, dict) or not source.get("url"):
                problems.append(f"{where}: source without its required url")
            else:
                problems += [
                    f"{where}: unknown source key {k!r}" for k in set(source) - SOURCE_KEYS
                ]
        revision = dataset.get("revision")
        if revision is not None and not re.fullmatch(r"[0-9a-f]{40}", str(revision)):
            problems.append(f"{where}: dataset.revision {revision!r} is not a commit sha")
    return problems
