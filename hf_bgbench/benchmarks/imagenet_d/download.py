"""``bgbench download imagenet-d``: the Hub dataset ``zcs15/ImageNet-D`` (the authors' own
upload, MIT licence) fetched into the Hugging Face cache as it is -- the release layout,
nothing converted -- and read from there whenever no ``--data`` is given, or when ``--data``
names that repo."""

from __future__ import annotations

from pathlib import Path

from hf_bgbench.benchmarks.imagenet_d.facts import SOURCE_REPO
from hf_bgbench.data.reader import DataSourceError
from hf_bgbench.data.snapshots import dataset_snapshot

NOT_CACHED = (
    f"The Hub dataset {SOURCE_REPO} is not in the local Hugging Face cache and the Hub cannot "
    "be reached: run `bgbench download imagenet-d` where it can, or give --data a copy of it "
    "(`git lfs clone https://huggingface.co/datasets/zcs15/ImageNet-D`)."
)


def imagenet_d_snapshot(
    revision: str | None = None, cache_dir: str | Path | None = None, *, local_only: bool = False
) -> Path:
    """The folder of the Hub dataset's snapshot (downloaded unless ``local_only`` or the Hub
    is offline, then read from the cache); a DataSourceError says how to get it."""
    return dataset_snapshot(
        SOURCE_REPO,
        revision=revision,
        cache_dir=cache_dir,
        local_only=local_only,
        not_cached=NOT_CACHED,
    )


def cached_imagenet_d(cache_dir: str | Path | None = None) -> Path | None:
    """The cached snapshot of a finished ``bgbench download imagenet-d``, else None."""
    try:
        return imagenet_d_snapshot(cache_dir=cache_dir, local_only=True)
    except DataSourceError:
        return None
