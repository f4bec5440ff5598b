"""Write and recognise dataset repos in the exact layout the Hugging Face Hub serves.

A repo folder is ``README.md`` (YAML front matter with ``configs:``) plus
``data/<config>/<split>-0000i-of-0000n.parquet`` shards with image bytes embedded, so
``load_dataset(folder_or_repo_id, config, split=...)`` works the same locally and on the Hub.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import datasets
import yaml
from datasets.table import embed_table_storage

MAX_SHARD_BYTES = 500 * 1024**2


def shard_paths(config: str, split: str, num_shards: int) -> list[str]:
    return [f"data/{config}/{split}-{i:05d}-of-{num_shards:05d}.parquet" for i in range(num_shards)]


def write_parquet_shards(
    ds: datasets.Dataset,
    out_dir: str | Path,
    config: str,
    split: str,
    max_shard_bytes: int = MAX_SHARD_BYTES,
) -> list[str]:
    """Write ``ds`` as embedded-bytes Parquet shards; returns their repo-relative paths."""
    out_dir = Path(out_dir)
    ds = ds.with_format("arrow").map(
        embed_table_storage, batched=True, batch_size=256, keep_in_memory=True
    )
    num_shards = max(1, math.ceil(ds.data.nbytes / max_shard_bytes))
    paths = shard_paths(config, split, num_shards)
    for index, rel in enumerate(paths):
        target = out_dir / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        ds.shard(num_shards=num_shards, index=index, contiguous=True).to_parquet(str(target))
    return paths


def write_parquet_shard(
    ds: datasets.Dataset,
    out_dir: str | Path,
    config: str,
    split: str,
    index: int,
    num_shards: int,
) -> str:
    """Write ``ds`` as shard ``index`` of ``num_shards``; returns its repo-relative path.

    Builders that produce one shard at a time (in parallel, resumably) use this. The shard
    is written to a temporary name and renamed, so an interrupted run never leaves a
    truncated file that a resumed run would take for a finished shard.
    """
    rel = shard_paths(config, split, num_shards)[index]
    target = Path(out_dir) / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp")
    ds = ds.with_format("arrow").map(
        embed_table_storage, batched=True, batch_size=256, keep_in_memory=True
    )
    ds.to_parquet(str(tmp))
    tmp.replace(target)
    return rel


def configs_yaml(configs: Mapping[str, list[str]], default: str | None = None) -> list[dict]:
    """The ``configs:`` entries of a card: config -> the splits it has."""
    entries = []
    for name, splits in configs.items():
        entry: dict[str, Any] = {
            "config_name": name,
            "data_files": [{"split": s, "path": f"data/{name}/{s}-*.parquet"} for s in splits],
        }
        if name == default:
            entry["default"] = True
        entries.append(entry)
    return entries


def render_card(metadata: Mapping[str, Any], body: str) -> str:
    """A README.md: YAML front matter (``metadata``) followed by the markdown ``body``."""
    front = yaml.safe_dump(dict(metadata), sort_keys=False, allow_unicode=True, width=100)
    return f"---\n{front}---\n\n{body.strip()}\n"


def read_card_metadata(folder: str | Path) -> dict[str, Any]:
    """The YAML front matter of ``folder/README.md`` ({} if there is none)."""
    readme = Path(folder) / "README.md"
    if not readme.is_file():
        return {}
    text = readme.read_text(encoding="utf-8")
    if not text.startswith("---"):
        return {}
    try:
        _, front, _ = text.split("---", 2)
    except ValueError:
        return {}
    return yaml.safe_load(front) or {}


def card_configs(folder: str | Path) -> list[str]:
    """Config names declared in the card of a Hub-layout folder."""
    return [c["config_name"] for c in read_card_metadata(folder).get("configs", [])]


def is_hub_layout(folder: str | Path) -> bool:
    return bool(card_configs(folder))
