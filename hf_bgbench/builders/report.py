"""The files every build or conversion writes beside its data: ``build_report.json`` (what
it was made from, counts, drops), the ``.bgbench-work`` cache of an unfinished run, and an
output folder made ready for a fresh conversion."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from hf_bgbench.files import REPORT_NAME, ensure_writable_dir

__all__ = [
    "REPORT_FORMAT",
    "REPORT_NAME",
    "WORK_DIRNAME",
    "prepare_repo_folder",
    "read_report",
    "write_json",
]

REPORT_FORMAT = "bgbench-build-report/1"
WORK_DIRNAME = ".bgbench-work"
"""Per-run cache inside the output folder (resumable stages), deleted after success."""


def read_report(output: str | Path) -> dict[str, Any]:
    """The folder's ``build_report.json`` ({} when there is none)."""
    path = Path(output) / REPORT_NAME
    if not path.is_file():
        return {}
    return json.loads(path.read_text(encoding="utf-8"))


def write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def prepare_repo_folder(output: Path, overwrite: bool) -> None:
    """Make ``output`` ready for a converted repo: writable (named as OUTPUT in the error),
    and its ``data/`` empty -- an earlier conversion there is refused unless ``overwrite``,
    then removed, so no stale shard survives."""
    ensure_writable_dir(output, "OUTPUT")
    data = output / "data"
    if data.exists() and any(data.iterdir()):
        if not overwrite:
            raise FileExistsError(
                f"{output} already holds data/; use --overwrite or an empty folder."
            )
        shutil.rmtree(data)
