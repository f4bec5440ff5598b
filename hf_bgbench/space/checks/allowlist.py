"""The operator's allow-list of datasets: a visitor picks a *name*, never a path.

``BGBENCH_SPACE_DATASETS="in9=bgbench/in9,in9-local=/data/in9"`` (:func:`parse_allowlist`);
a name is offered for the benchmark it belongs to (:func:`datasets_for`) and anything else
is refused (:func:`resolve_dataset`). A Hub id in the list is read from the Hub only
(:func:`allowed_data`), never as a folder of the same name, and a server folder is named in
messages by its allow-list name (:func:`hidden_paths`). Pure functions, no Gradio.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hf_bgbench.space.checks.messages import SpaceRefusal
from hf_bgbench.space.checks.model_id import HUB_ID

DATASETS_ENV = "BGBENCH_SPACE_DATASETS"
_DATASET_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


@dataclass(frozen=True)
class AllowedDataset:
    """One entry of the operator's allow-list: the ``name`` a visitor picks, the ``target``
    (a Hub dataset id or a folder on the server) and the benchmark it belongs to (None:
    offered for every benchmark)."""

    name: str
    target: str
    benchmark: str | None

    @property
    def is_hub(self) -> bool:
        """Whether ``target`` is a Hub dataset id (``owner/name``); anything else (``/srv/in9``,
        ``./in9``) is a folder on the server."""
        return bool(HUB_ID.match(self.target))


def allowed_data(entry: AllowedDataset, spec: Any) -> Any:
    """What a task reads for an allow-listed dataset: for a Hub id, a Hub dataset reader that
    never looks at the server's disk (a relative folder of the same name is ignored); for a
    server folder, its path."""
    if not entry.is_hub:
        return entry.target
    from hf_bgbench.data.sources import resolve_source

    return resolve_source(entry.target, spec, hub_only=True)


def parse_allowlist(value: str | None, benchmarks: Mapping[str, str]) -> dict[str, AllowedDataset]:
    """``NAME=TARGET`` entries separated by commas (``value``), or, when unset, each
    benchmark's Hub dataset (``benchmarks``: name -> Hub repo). A name belongs to the
    benchmark it equals or starts with (``in9-local`` -> in9). Raises ValueError (an operator
    error) for a malformed entry."""
    if not value or not value.strip():
        return {b: AllowedDataset(b, repo, b) for b, repo in benchmarks.items()}
    out: dict[str, AllowedDataset] = {}
    for entry in filter(None, (e.strip() for e in value.split(","))):
        name, sep, target = (s.strip() for s in entry.partition("="))
        if not sep or not target or not _DATASET_NAME.match(name):
            raise ValueError(
                f"{DATASETS_ENV}: {entry!r} is not NAME=TARGET (NAME: letters, digits, '.', "
                "'_', '-'; TARGET: a Hub dataset id or a folder on the server)."
            )
        if name in out:
            raise ValueError(f"{DATASETS_ENV}: {name!r} is listed twice.")
        owner = max(
            (b for b in benchmarks if name == b or re.match(rf"^{re.escape(b)}[-_.]", name)),
            key=len,
            default=None,
        )
        out[name] = AllowedDataset(name, target, owner)
    return out


def datasets_for(allowed: Mapping[str, AllowedDataset], benchmark: str) -> list[str]:
    """The names offered for ``benchmark``."""
    return [n for n, d in allowed.items() if d.benchmark in (None, benchmark)]


def resolve_dataset(
    name: str | None, benchmark: str, allowed: Mapping[str, AllowedDataset]
) -> AllowedDataset:
    """The allow-listed dataset ``name`` for ``benchmark``; anything else is refused."""
    entry = allowed.get((name or "").strip())
    if entry is None or entry.benchmark not in (None, benchmark):
        offered = ", ".join(datasets_for(allowed, benchmark)) or "none"
        raise SpaceRefusal(
            f"Pick a dataset from the list; this Space only reads the datasets its operator "
            f"allowed (for {benchmark}: {offered})."
        )
    return entry


def hidden_paths(entry: AllowedDataset | None) -> dict[str, str]:
    """Server paths of ``entry`` -> its allow-list name, for messages."""
    if entry is None:
        return {}
    return {entry.target: entry.name, str(Path(entry.target).expanduser()): entry.name}
