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


def dataset_snapshot(
    repo_id: str,
    *,
    revision: str | None,
    cache_dir: str | Path | None,
    local_only: bool,
    not_cached: str,
    allow_patterns: Sequence[str] | None = None,
) -> Path:
    """The folder of the Hub dataset ``repo_id``'s snapshot: downloaded (files already in the
    cache are not fetched again) unless ``local_only`` or the Hub is offline, then read from
    the cache. A DataSourceError says ``not_cached`` when the cache lacks it, or the Hub's
    error in words; never a traceback."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    from hf_bgbench.data.reader import DataSourceError
    from hf_bgbench.hub.reachable import check_hub, hub_offline

    if not local_only:
        check_hub()  # once: an unreachable Hub means the local cache only, said once
    try:
        folder = snapshot_download(
            repo_id,
            repo_type="dataset",
            revision=revision,
            cache_dir=cache_dir,
            allow_patterns=list(allow_patterns) if allow_patterns else None,
            local_files_only=local_only or hub_offline(),
        )
    except LocalEntryNotFoundError:
        raise DataSourceError(not_cached) from None
    except Exception as err:  # a network or Hub error, said plainly
        raise DataSourceError(f"Cannot fetch the Hub dataset {repo_id}: {err}") from None
    return Path(folder)
