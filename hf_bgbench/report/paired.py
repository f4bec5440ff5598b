"""Per-image values of a run folder, the units a paired comparison resamples.

Each task says what they are (:class:`~hf_bgbench.tasks.runner.Task`): ``per_image(doc)``
names the run's per-image file(s), ``paired(doc, folder)`` reads them into score key ->
values indexed by image id, each a number whose mean over the images is the score (or its
per-image form: the noise task's ``irfs``). A task without ``paired`` is not compared.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from hf_bgbench.tasks import all_tasks, get_task
from hf_bgbench.tasks.per_image import CompareError

__all__ = [
    "CompareError",
    "comparable_tasks",
    "load_run",
    "per_image_files",
    "per_image_values",
    "scored_variants",
    "subset_difference",
    "subset_of",
]


def scored_variants(doc: Mapping[str, Any]) -> list[str]:
    """The variants a results document scored: its ``variants`` mapping holds a score per
    variant (the results format); [] for a task without variants."""
    variants = doc.get("variants")
    return list(variants) if isinstance(variants, Mapping) else []


def subset_of(doc: Mapping[str, Any]) -> str:
    """How a run is a seeded subset of its data (the departure it recorded: "a seeded
    subset: ... (--max-images)"), or "" for a run over all of its data."""
    departures = (doc.get("protocol") or {}).get("departures") or []
    return next((d for d in departures if "seeded subset" in d), "")


def subset_difference(a: Mapping[str, Any], b: Mapping[str, Any]) -> str:
    """A sentence for a refusal between runs whose data differ because one (or each) is a
    seeded subset of other images; "" when neither is."""
    sub_a, sub_b = subset_of(a), subset_of(b)
    if not (sub_a or sub_b) or sub_a == sub_b:
        return ""
    said = f"A scored {sub_a or 'all of its data'}; B scored {sub_b or 'all of its data'}"
    return (
        f" {said}: a subset holds other images than the full run (or another subset). "
        "Re-run them the same way: the same --max-* and --seed, or neither."
    )


def load_run(folder: str | Path) -> tuple[str, dict[str, Any], Path]:
    """("report" | "results", the document, its folder) of a report or results folder."""
    folder = Path(folder)
    if not folder.is_dir():
        raise CompareError(f"{folder} is not a folder; give a results or report folder.")
    report = folder / "report.json"
    rerun = "re-run the command that wrote it (or restore the file)"
    if report.is_file():
        try:
            doc = json.loads(report.read_text(encoding="utf-8"))
        except ValueError as err:  # it said only "Expecting value: line 2 column 1"
            raise CompareError(f"{report} is not valid JSON ({err}): {rerun}.") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list):
            raise CompareError(
                f"{report} is not a `bgbench report` document (it has no 'benchmarks' "
                f"list): {rerun}."
            )
        return "report", doc, folder
    broken = []
    for path in sorted(folder.glob("*.json")):
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as err:
            broken.append(f"{path.name} ({err})")
            continue
        if isinstance(doc, dict) and "task" in doc and "schema_version" in doc:
            check_results_document(doc, path)
            return "results", doc, folder
    if broken:  # a cut-short results.json was "holds no bgbench results" alone
        raise CompareError(
            f"{folder} holds no readable bgbench results: {'; '.join(broken)} is not valid "
            f"JSON. If it is the run's results document, {rerun}."
        )
    raise CompareError(
        f"{folder} holds no bgbench results (no report.json nor a results document); give "
        "the --output folder of `bgbench report` or of a task command."
    )


def check_results_document(doc: Mapping[str, Any], path: Path) -> None:
    """Refuse a results document whose header a hand edit (or another program) broke: a
    missing model became a row named "None", an unknown task an empty comparison, a
    schema of another major version was read as this one, a ``data`` that is no mapping a
    traceback."""
    from hf_bgbench.results import SCHEMA_VERSION

    wrong = []
    major = SCHEMA_VERSION.split(".")[0]
    if str(doc.get("schema_version")).split(".")[0] != major:
        wrong.append(
            f"schema_version {doc.get('schema_version')!r} is not a {major}.x results format, "
            f"the one this bgbench reads ({SCHEMA_VERSION})"
        )
    known = [task.name for task in all_tasks()]
    if doc.get("task") not in known:
        wrong.append(f"task {doc.get('task')!r} is none of {', '.join(known)}")
    for key in ("model", "benchmark"):
        if not isinstance(doc.get(key), str) or not doc[key].strip():
            wrong.append(f"{key!r} is {'missing' if key not in doc else repr(doc[key])}")
    if "data" in doc and not isinstance(doc["data"], Mapping):
        wrong.append(f"'data' is {type(doc['data']).__name__} {doc['data']!r}, not a mapping")
    if wrong:
        raise CompareError(
            f"{path} is not a results document bgbench can read: {'; '.join(wrong)}. It was "
            "edited or written by another program: re-run the command that wrote it (or "
            "restore the file)."
        )


def comparable_tasks() -> list[str]:
    """The tasks whose runs ``bgbench compare`` compares (those with a ``paired`` hook)."""
    return [task.name for task in all_tasks() if task.paired is not None]


def _task_of(doc: Mapping[str, Any]) -> Any:
    """The registered task of a results document (None: a task not registered here)."""
    try:
        return get_task(str(doc.get("task")))
    except ValueError:
        return None


def per_image_files(doc: Mapping[str, Any]) -> dict[str, str]:
    """Split name -> the run folder's per-image file (relative path) of a results document
    (what ``bgbench publish-results`` declares as the dataset's splits)."""
    task = _task_of(doc)
    return task.per_image(doc) if task is not None and task.per_image is not None else {}


def per_image_values(doc: Mapping[str, Any], folder: Path) -> dict[str, pd.Series]:
    """Score key -> per-image values (float, indexed by id) of the run in ``folder``, read
    from the files :func:`per_image_files` names."""
    task = _task_of(doc)
    if task is not None and task.paired is not None and not per_image_files(doc):
        # it said "compares the tasks evaluate, ...; this folder holds a 'evaluate' run"
        raise CompareError(
            f"{folder}: its {task.name} results document names no per-image file (a key "
            "that lists them, such as 'variants', is missing or empty): it was edited. "
            "Re-run the command that wrote it (or restore the file)."
        )
    if task is None or task.paired is None:
        raise CompareError(
            f"bgbench compare compares the tasks {', '.join(comparable_tasks())}; this folder "
            f"holds a {doc.get('task')!r} run."
        )
    import pyarrow as pa

    try:
        return task.paired(doc, folder)
    except pa.ArrowInvalid as err:  # it named the file and the byte count, not the fix
        raise CompareError(
            f"{folder}: a per-image file of the {task.name} run cannot be read ({err}). "
            "Re-run the command that wrote it (or restore the file)."
        ) from None
