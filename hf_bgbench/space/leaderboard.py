"""The Space's leaderboard: results documents kept as rows of a dataset.

One row per (model, benchmark, task, data fingerprint, package version), holding the run's
headline scores (in display units: % and points). Rows live in ``rows.jsonl`` of a folder
(``BGBENCH_LEADERBOARD_DIR``) -- loadable with ``datasets.load_dataset("json", ...)`` -- and,
when ``BGBENCH_LEADERBOARD_REPO`` names a Hub dataset repo and the Hub is reachable, that file
is pulled before and pushed after each append (``huggingface_hub``; needs a write token).

A score is appended only when the run used the full data it was given: no subset caps
(``max_foregrounds``, ``max_backgrounds``, ``max_images``) and no mismatched-id filtering.
The published reference numbers (:func:`published_rows`, from each benchmark's spec) are
shown beside, marked "published".
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

LEADERBOARD_DIR_ENV = "BGBENCH_LEADERBOARD_DIR"
LEADERBOARD_REPO_ENV = "BGBENCH_LEADERBOARD_REPO"
ROWS_FILE = "rows.jsonl"
KEY = ("model", "benchmark", "task", "data_fingerprint", "hf_bgbench_version")
INFO_COLUMNS = ["source", "model", "benchmark", "task", "dataset", "hf_bgbench_version", "date"]
SUBSET_KEYS = ("max_foregrounds", "max_backgrounds", "max_images")


def published_rows() -> list[dict[str, Any]]:
    """The published reference results of every registered benchmark (its spec's
    ``published_results``), as leaderboard rows marked ``source: published``."""
    from hf_bgbench.benchmarks import all_specs

    return [
        {
            "source": "published",
            "model": row["model"],
            "benchmark": spec.name,
            "task": row["task"],
            "dataset": row["dataset"],
            "scores": dict(row["scores"]),
        }
        for spec in all_specs()
        for row in spec.published_results
    ]


class NotEligible(ValueError):
    """A run that may not enter the leaderboard (it scored a subset); the message says why."""


def subset_reason(doc: Mapping[str, Any]) -> str:
    """Why ``doc`` did not run on the full data ("" when it did)."""

    def caps(value: Any) -> Iterator[str]:
        if isinstance(value, Mapping):
            for k, v in value.items():
                if k in SUBSET_KEYS and v is not None:
                    yield f"{k}={v}"
                elif k != "report":
                    yield from caps(v)

    found = sorted(set(caps(doc)))
    if found:
        return f"it scored a seeded subset ({', '.join(found)})"
    if doc.get("mismatched_ids"):
        return "it scored only the images its variants share (mismatched ids)"
    return ""


def data_fingerprint(doc: Mapping[str, Any]) -> str:
    """The identity of the data a run scored: the document's own ``data.fingerprint`` when
    it records one, else a hash of its data description and the image counts it scored."""
    data = doc.get("data") or {}
    if isinstance(data, Mapping) and data.get("fingerprint"):
        return str(data["fingerprint"])
    counts = sorted((s.get("key"), s.get("n")) for s in doc.get("report", {}).get("scores", []))
    blob = json.dumps({"data": data, "counts": counts}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _display(score: Mapping[str, Any]) -> float | None:
    value = score.get("value")
    if value is None:
        return None
    scale = 100.0 if score.get("unit") in ("%", "pts") else 1.0
    return round(float(value) * scale, 2)


def row_from_results(doc: Mapping[str, Any], dataset: str) -> dict[str, Any]:
    """The leaderboard row of a results document (``dataset``: the allow-list name)."""
    scores: dict[str, float] = {}
    for s in doc.get("report", {}).get("scores", []):
        value = _display(s)
        if value is not None and (s.get("headline") or s.get("latex", True)):
            scores.setdefault(s.get("short") or s.get("label") or s["key"], value)
    return {
        "source": "measured",
        "model": doc.get("model"),
        "model_resolved": doc.get("model_resolved"),
        "benchmark": doc.get("benchmark"),
        "task": doc.get("task"),
        "dataset": dataset,
        "data_fingerprint": data_fingerprint(doc),
        "hf_bgbench_version": doc.get("hf_bgbench_version"),
        "label_protocol": doc.get("label_protocol"),
        "date": str(doc.get("created", ""))[:10],
        "scores": scores,
    }


def read_rows(folder: str | Path) -> list[dict[str, Any]]:
    path = Path(folder) / ROWS_FILE
    if not path.is_file():
        return []
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _write_rows(folder: Path, rows: list[dict[str, Any]]) -> None:
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".rows-", suffix=".jsonl")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, sort_keys=True) + "\n")
    os.replace(tmp, folder / ROWS_FILE)


def append_result(
    folder: str | Path, doc: Mapping[str, Any], dataset: str, repo_id: str | None = None
) -> dict[str, Any]:
    """Add (or replace: same key) the row of ``doc``; :class:`NotEligible` for a subset
    run. With ``repo_id``, the Hub dataset's rows are pulled first and pushed after."""
    reason = subset_reason(doc)
    if reason:
        raise NotEligible(
            f"Not added to the leaderboard: {reason}. Only runs on the full dataset are."
        )
    row = row_from_results(doc, dataset)
    folder = Path(folder)
    with _locked(folder):
        if repo_id:
            pull(folder, repo_id)
        rows = [r for r in read_rows(folder) if [r.get(k) for k in KEY] != [row[k] for k in KEY]]
        rows.append(row)
        _write_rows(folder, rows)
        if repo_id:
            push(folder, repo_id)
    return row


def pull(folder: Path, repo_id: str) -> bool:
    """Replace the local rows with the Hub dataset's (merged: local rows not there kept)."""
    from huggingface_hub import hf_hub_download

    from hf_bgbench.space.safety import hub_offline

    if hub_offline():
        return False
    try:
        path = hf_hub_download(repo_id, ROWS_FILE, repo_type="dataset")
    except Exception as err:  # no file yet, or no Hub: keep the local rows
        if type(err).__name__ in ("EntryNotFoundError", "RemoteEntryNotFoundError"):
            return False
        from hf_bgbench.hub.errors import is_hub_unreachable

        if is_hub_unreachable(err):
            return False
        raise
    remote = read_rows(Path(path).parent)
    keys = {tuple(r.get(k) for k in KEY) for r in remote}
    local = [r for r in read_rows(folder) if tuple(r.get(k) for k in KEY) not in keys]
    _write_rows(folder, remote + local)
    return True


def push(folder: Path, repo_id: str) -> bool:
    """Upload ``rows.jsonl`` to the Hub dataset ``repo_id`` (created if missing)."""
    from huggingface_hub import HfApi

    from hf_bgbench.space.safety import hub_offline

    if hub_offline():
        return False
    api = HfApi()
    api.create_repo(repo_id, repo_type="dataset", exist_ok=True)
    api.upload_file(
        path_or_fileobj=str(folder / ROWS_FILE),
        path_in_repo=ROWS_FILE,
        repo_id=repo_id,
        repo_type="dataset",
        commit_message="bgbench Space: leaderboard row",
    )
    return True


def table(
    rows: list[dict[str, Any]],
    *,
    benchmark: str | None = None,
    task: str | None = None,
    model: str = "",
    published: bool = True,
) -> tuple[list[str], list[list[Any]]]:
    """Headers and rows for the leaderboard view: the info columns, then every score column
    of the selected rows; published rows included (``published``) and marked."""
    chosen = [*(published_rows() if published else []), *rows]
    chosen = [
        r
        for r in chosen
        if (not benchmark or r.get("benchmark") == benchmark)
        and (not task or r.get("task") == task)
        and model.strip().lower() in str(r.get("model", "")).lower()
    ]
    score_cols: list[str] = []
    for r in chosen:
        score_cols += [c for c in r.get("scores", {}) if c not in score_cols]
    values = [
        [r.get(c, "") or "" for c in INFO_COLUMNS] + [r["scores"].get(c) for c in score_cols]
        for r in chosen
    ]
    return INFO_COLUMNS + score_cols, values
