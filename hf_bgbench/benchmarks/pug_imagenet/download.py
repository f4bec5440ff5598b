"""``bgbench download pug-imagenet``: the authors' Hub dataset ``facebook/PUG_ImageNet``
(CC-BY-NC 4.0) fetched into the Hugging Face cache as it is, its size said before the first
byte, and read from there whenever no ``--data`` is given or ``--data`` names that repo."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from hf_bgbench.benchmarks.pug_imagenet.facts import SOURCE_REPO
from hf_bgbench.benchmarks.pug_imagenet.shards import (
    ShardPlan,
    hub_files,
    hub_opener,
    plan_shards,
    record_defaults,
)
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


def pug_snapshot(
    revision: str | None = None,
    cache_dir: str | Path | None = None,
    *,
    local_only: bool = False,
    variants: Sequence[str] | None = None,
) -> Path:
    """The folder of the Hub dataset's snapshot (downloaded unless ``local_only`` or the Hub
    is offline, then read from the cache; files already there are not fetched again), its
    size said before the download; with ``variants``, only the shards that hold their rows
    (:mod:`.shards`). A DataSourceError says how to get it."""
    if not local_only:
        check_hub()  # once: an unreachable Hub means the local cache only, said once
    patterns: tuple[str, ...] = PATTERNS
    if not (local_only or hub_offline()):
        if variants:
            plan = _planned(variants, revision)
            revision, patterns = plan.commit, (*plan.shards, "README.md")
        else:
            _say_size(revision)
    return dataset_snapshot(
        SOURCE_REPO,
        revision=revision,
        cache_dir=cache_dir,
        local_only=local_only,
        not_cached=NOT_CACHED,
        allow_patterns=patterns,
    )


def _say_size(revision: str | None) -> None:
    try:  # the shards' sizes from the Hub's file list (no data read); the card is a few kB
        _, sizes = hub_files(revision)
    except Exception as err:  # the size is said when it can be; the download goes on
        log.warning("%s: its size could not be read (%s)", SOURCE_REPO, err)
        return
    log.warning(
        "%s: %d Parquet shards, %.1f GB in all, into the Hugging Face cache (files already there "
        "are not fetched again; --variants fetches only the shards those variants need)",
        SOURCE_REPO,
        len(sizes),
        sum(sizes.values()) / 1e9,
    )


def _planned(variants: Sequence[str], revision: str | None) -> ShardPlan:
    """The shards ``variants`` need, said, and the whole table's defaults recorded."""
    try:
        commit, sizes = hub_files(revision)
        plan = plan_shards(variants, commit, sizes, hub_opener(commit))
    except DataSourceError:
        raise
    except Exception as err:
        raise DataSourceError(
            f"Cannot read the factor columns of {SOURCE_REPO} from the Hub ({err}); download "
            "it whole (no --variants)."
        ) from None
    record_defaults(plan)
    rows = ", ".join(f"{v}: {n} rows" for v, n in plan.rows.items())
    log.warning(
        "%s: %d of its %d shards hold the rows of %s (%s): %.1f of %.1f GB",
        SOURCE_REPO,
        len(plan.shards),
        plan.every,
        ", ".join(variants),
        rows,
        plan.size / 1e9,
        plan.total / 1e9,
    )
    return plan


def cached_pug_imagenet(cache_dir: str | Path | None = None) -> Path | None:
    """The cached snapshot of a finished ``bgbench download pug-imagenet``, else None."""
    try:
        return pug_snapshot(cache_dir=cache_dir, local_only=True)
    except DataSourceError:
        return None
