"""Which commit a file of the local Hugging Face Hub cache came from."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


def cached_commit(
    repo_id: str, filenames: Sequence[str], repo_type: str = "model", revision: str = "main"
) -> str | None:
    """The commit the local Hub cache resolves ``revision`` of ``repo_id`` to, read from the
    snapshot folder of the first of ``filenames`` it holds (``.../snapshots/<commit>/<file>``);
    None when it holds none of them."""
    from huggingface_hub import try_to_load_from_cache

    for filename in filenames:
        cached = try_to_load_from_cache(repo_id, filename, revision=revision, repo_type=repo_type)
        if isinstance(cached, str) and Path(cached).parent.parent.name == "snapshots":
            return Path(cached).parent.name
    return None


def snapshot_commit(folder: str | Path) -> str | None:
    """The commit of a Hugging Face cache snapshot folder (``.../snapshots/<commit>``)."""
    folder = Path(folder)
    for part in (folder, *folder.parents):
        if part.parent.name == "snapshots":
            return part.name
    return None
