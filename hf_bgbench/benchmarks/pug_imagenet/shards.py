"""Only the Parquet shards a user's variants need: ``bgbench download pug-imagenet --variants``.

The Hub dataset is one table in shards, the factors' rows mixed as the authors uploaded them.
The factor columns of every shard are read from the Hub first -- only those column chunks, a
few megabytes in all, never an image -- the defaults and each variant's rows found as a run
finds them (:mod:`.rows`), and then only the shards that hold the asked variants' rows are
downloaded. The defaults, which a part of the table could not give, are recorded for that
commit (:func:`recorded_defaults`), so a run on the partial snapshot chooses the same rows.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path
from typing import IO, Any

import pandas as pd
import pyarrow.parquet as pq

from hf_bgbench.benchmarks.pug_imagenet.facts import METADATA, SOURCE_REPO
from hf_bgbench.benchmarks.pug_imagenet.rows import factor_defaults, variant_mask
from hf_bgbench.cache import cache_root

log = logging.getLogger(__name__)
SHARDS = "data/*.parquet"
SHARD = "_shard"


@dataclass(frozen=True)
class ShardPlan:
    commit: str
    shards: tuple[str, ...]  # the ones to download, sorted
    every: int  # how many the table has
    size: int  # bytes of the ones to download
    total: int  # bytes of all of them
    defaults: dict[str, Any]  # factor column -> its default, from the whole table
    rows: dict[str, int]  # variant -> its rows in the whole table


def hub_files(revision: str | None) -> tuple[str, dict[str, int]]:
    """(the commit, shard path -> bytes) of the Hub dataset, from its file list."""
    from huggingface_hub import HfApi

    info = HfApi().dataset_info(SOURCE_REPO, revision=revision, files_metadata=True)
    sizes = {s.rfilename: s.size or 0 for s in info.siblings or [] if fnmatch(s.rfilename, SHARDS)}
    return str(info.sha), sizes


def hub_opener(commit: str) -> Callable[[str], IO[bytes]]:
    """Opens a shard of the commit on the Hub, read by ranges (only what is asked is fetched)."""
    from huggingface_hub import HfFileSystem

    fs = HfFileSystem()
    return lambda path: fs.open(f"datasets/{SOURCE_REPO}@{commit}/{path}", "rb")


def plan_shards(
    variants: Sequence[str],
    commit: str,
    sizes: dict[str, int],
    open_shard: Callable[[str], IO[bytes]],
    progress: bool = True,
) -> ShardPlan:
    """The shards that hold ``variants``' rows, from every shard's factor columns."""
    from tqdm.auto import tqdm

    parts = []
    for path in tqdm(sorted(sizes), desc="reading the factor columns", disable=not progress):
        with open_shard(path) as f:
            columns = pq.read_table(f, columns=list(METADATA)).to_pandas()
        parts.append(columns.assign(**{SHARD: path}))
    meta = pd.concat(parts, ignore_index=True)
    defaults = factor_defaults(meta)
    masks = {v: variant_mask(meta, v, defaults) for v in variants}
    needed = sorted(set().union(*(set(meta.loc[m, SHARD]) for m in masks.values())))
    return ShardPlan(
        commit=commit,
        shards=tuple(needed),
        every=len(sizes),
        size=sum(sizes[s] for s in needed),
        total=sum(sizes.values()),
        defaults={c: _plain(v) for c, v in defaults.items()},
        rows={v: int(m.sum()) for v, m in masks.items()},
    )


def _plain(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value


def defaults_file(commit: str) -> Path:
    return cache_root() / "pug_imagenet" / commit / "factor_defaults.json"


def _digest(payload: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def record_defaults(plan: ShardPlan) -> Path:
    """Keep the whole table's defaults for ``plan.commit`` (read by :func:`recorded_defaults`),
    with their digest, written under a temporary name and renamed (whole or absent)."""
    path = defaults_file(plan.commit)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"defaults": plan.defaults, "shards": plan.every}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({**payload, "sha256": _digest(payload)}, indent=1))
    os.replace(tmp, path)
    return path


def recorded_defaults(commit: str | None) -> tuple[dict[str, Any], int] | None:
    """(the whole table's defaults, its shard count) recorded when part of ``commit`` was
    downloaded, else None. A record damaged on disk (unreadable, or other bytes of the same
    size: its digest differs) is said and not used: wrong defaults would choose other rows."""
    path = defaults_file(commit) if commit else None
    if path is None or not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
        payload = {"defaults": data["defaults"], "shards": int(data["shards"])}
        whole = data.get("sha256") == _digest(payload)
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        whole = False
    if not whole:
        log.warning(
            "%s is damaged: not used (each factor's default is then taken from the shards "
            "present). Run `bgbench download pug-imagenet --variants ...` again to record it.",
            path,
        )
        return None
    return payload["defaults"], payload["shards"]
