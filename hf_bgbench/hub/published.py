"""Whether scored data *is* a benchmark's published Hub dataset, and at which revision.

A score is credited to a Hub dataset (an ``.eval_results`` entry naming its id, a row on its
leaderboard) only when that dataset was scored:

- the Hub dataset itself (``data.kind == "hub"`` and its id is the benchmark's), at the
  revision ``datasets`` loaded (pinned in the entry when known); or
- a local folder in the Hub's layout whose data files are byte for byte a published
  revision's: their content fingerprint (:func:`content_fingerprint`) is one the spec lists
  in :attr:`~hf_bgbench.spec.BenchmarkSpec.published_revisions`. The revision a folder
  records (``hf download --local-dir`` writes it under ``.cache/huggingface/download/``) says
  which revision to compare against; the files decide.

Anything else -- a local build, the official release converted, a photo folder, a fork on the
Hub -- is not the published benchmark, whatever its numbers, and :func:`credit` says why.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hf_bgbench.spec import BenchmarkSpec

DOWNLOAD_METADATA = Path(".cache") / "huggingface" / "download"
"""Where ``huggingface_hub`` records, per file of a ``--local-dir`` download, the commit it
came from (first line), its etag and when (``huggingface_hub._local_folder``)."""

_SHA = re.compile(r"^[0-9a-f]{40}$")


@dataclass(frozen=True)
class DataCredit:
    """Whether a score may be credited to the benchmark's Hub dataset (``credited``), the
    revision it was measured on (None: unknown), and in words why not (``reason``)."""

    credited: bool
    revision: str | None = None
    reason: str = ""


def recorded_revision(folder: str | Path) -> str | None:
    """The commit a ``--local-dir`` download of a Hub repo recorded for its README.md
    (None when the folder was not downloaded that way)."""
    path = Path(folder) / DOWNLOAD_METADATA / "README.md.metadata"
    try:
        first = path.read_text(encoding="utf-8").splitlines()[0].strip()
    except (OSError, IndexError, UnicodeDecodeError):
        return None
    return first if _SHA.match(first) else None


def data_files(folder: str | Path) -> list[Path]:
    """The Parquet files of a Hub-layout folder, sorted (huggingface_hub's own cache and
    bgbench's work folders left out)."""
    root = Path(folder)
    return sorted(
        p
        for p in root.rglob("*.parquet")
        if p.is_file() and not p.relative_to(root).parts[0].startswith(".")
    )


def content_fingerprint(folder: str | Path) -> str:
    """sha256 over every data file's path and sha256: equal for two folders exactly when
    they hold the same data files with the same bytes (wherever they live, whatever their
    mtimes); the card's prose is not part of it."""
    root = Path(folder)
    digest = hashlib.sha256()
    for path in data_files(root):
        file_hash = hashlib.sha256()
        with open(path, "rb") as f:
            while block := f.read(1 << 20):
                file_hash.update(block)
        digest.update(f"{path.relative_to(root).as_posix()}\0{file_hash.hexdigest()}\n".encode())
    return digest.hexdigest()


def credit(spec: BenchmarkSpec, data: Mapping[str, Any] | None) -> DataCredit:
    """Whether the data a results document describes (its ``data`` record) is ``spec``'s
    published Hub dataset (see the module docstring)."""
    data = data or {}
    kind, location = data.get("kind"), str(data.get("location") or "")
    if kind == "hub":
        if location == spec.hub_repo:
            return DataCredit(True, data.get("revision"))
        return DataCredit(
            False, reason=f"the Hub dataset {location}, not the published {spec.hub_repo}"
        )
    said = f"{kind or 'unknown'} data at {location or '?'}"
    if kind != "hub-folder":
        return DataCredit(False, reason=f"{said}, not the published {spec.hub_repo}")
    if not spec.published_revisions:
        return DataCredit(
            False,
            reason=f"a local folder ({location}); this version of hf_bgbench knows no "
            f"published revision of {spec.hub_repo} to match its files against",
        )
    if not Path(location).is_dir():
        return DataCredit(False, reason=f"a local folder ({location}) that is no longer there")
    fingerprint = content_fingerprint(location)
    recorded = recorded_revision(location)
    matches = [rev for rev, fp in spec.published_revisions.items() if fp == fingerprint]
    if matches:
        return DataCredit(True, recorded if recorded in matches else matches[0])
    about = f"recorded revision {recorded}" if recorded else "no recorded revision"
    return DataCredit(
        False,
        reason=f"a local folder ({location}; {about}) whose data files (content fingerprint "
        f"{fingerprint[:16]}…) match no published revision of {spec.hub_repo}",
    )
