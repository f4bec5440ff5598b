"""A Hub dataset's snapshot in the local Hugging Face cache, fetched when the Hub answers: what
a benchmark whose data is the authors' own Hub upload reads (ImageNet-D, PUG: ImageNet)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from hf_bgbench.data.reader import DataSourceError
from hf_bgbench.hub.reachable import check_hub, hub_offline


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
