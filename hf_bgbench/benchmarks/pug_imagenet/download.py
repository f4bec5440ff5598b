"""``bgbench download pug-imagenet``: the authors' Hub dataset ``facebook/PUG_ImageNet``
(CC-BY-NC 4.0) fetched into the Hugging Face cache as it is, its size said before the first
byte, and read from there whenever no ``--data`` is given or ``--data`` names that repo."""

from __future__ import annotations

import logging
from pathlib import Path

from hf_bgbench.benchmarks.pug_imagenet.facts import SOURCE_REPO
from hf_bgbench.data.reader import DataSourceError
from hf_bgbench.data.snapshots import dataset_snapshot
from hf_bgbench.hub.reachable import check_hub, hub_offline

log = logging.getLogger(__name__)
PATTERNS = ("data/*.parquet", "README.md")
"""What is fetched: the table's Parquet shards and the card; nothing else is needed."""
NOT_CACHED = (
    f"The Hub dataset {SOURCE_REPO} is not in the local Hugging Face cache and the Hub cannot "
    "be reached: run `bgbench download pug-imagenet` where it can (about 29 GB), or give "
    "--data a copy of it (its Parquet files, a save_to_disk copy or the authors' tarball)."
)


def download_size(revision: str | None = None) -> tuple[int, int]:
    """(files, bytes) the download fetches, from the Hub's file list (no data read)."""
    from fnmatch import fnmatch

    from huggingface_hub import HfApi

    info = HfApi().dataset_info(SOURCE_REPO, revision=revision, files_metadata=True)
    files = [s for s in info.siblings or [] if any(fnmatch(s.rfilename, p) for p in PATTERNS)]
    return len(files), sum(s.size or 0 for s in files)


def pug_snapshot(
    revision: str | None = None, cache_dir: str | Path | None = None, *, local_only: bool = False
) -> Path:
    """The folder of the Hub dataset's snapshot (downloaded unless ``local_only`` or the Hub
    is offline, then read from the cache; a finished download is reused), its size said
    before the download; a DataSourceError says how to get it."""
    if not local_only:
        check_hub()  # once: an unreachable Hub means the local cache only, said once
    if not (local_only or hub_offline()):
        try:
            files, size = download_size(revision)
            log.warning(
                "%s: %d files, %.1f GB in all, into the Hugging Face cache (files already "
                "there are not fetched again)",
                SOURCE_REPO,
                files,
                size / 1e9,
            )
        except Exception as err:  # the size is said when it can be; the download goes on
            log.warning("%s: its size could not be read (%s)", SOURCE_REPO, err)
    return dataset_snapshot(
        SOURCE_REPO,
        revision=revision,
        cache_dir=cache_dir,
        local_only=local_only,
        not_cached=NOT_CACHED,
        allow_patterns=PATTERNS,
    )


def cached_pug_imagenet(cache_dir: str | Path | None = None) -> Path | None:
    """The cached snapshot of a finished ``bgbench download pug-imagenet``, else None."""
    try:
        return pug_snapshot(cache_dir=cache_dir, local_only=True)
    except DataSourceError:
        return None
