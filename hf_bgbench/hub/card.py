"""A Hub repo's card (README.md): YAML front matter (what the Hub and ``load_dataset`` read,
e.g. ``configs:``) followed by markdown prose."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml


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
