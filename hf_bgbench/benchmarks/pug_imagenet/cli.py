"""``bgbench download pug-imagenet``, declared: the spec's ``cli_download`` hook."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from hf_bgbench.builders.arguments import keywords, option
from hf_bgbench.builders.commands import Command
from hf_bgbench.spec import BenchmarkSpec


@dataclass(frozen=True, kw_only=True)
class PugImageNetDownload:
    """Download the Hub dataset facebook/PUG_ImageNet (the authors' upload: 88,328 images,
    about 29 GB of Parquet; CC-BY-NC 4.0, not for training generative models) into the
    Hugging Face cache, as it is; its size is said before the download starts. It is then
    read whenever no --data is given (or with --data facebook/PUG_ImageNet); files already
    in the cache are not fetched again."""

    revision: str | None = option(None, "the dataset's commit, branch or tag (default: main)")
    cache_dir: Path | None = option(
        None, "the Hugging Face cache folder (default: $HF_HUB_CACHE, else ~/.cache/huggingface)"
    )
    variants: tuple[str, ...] | None = option(
        None,
        "only the shards that hold these variants' rows (worlds, camera_yaw, ...): the "
        "factor columns of every shard are read first, a few MB, and the size said",
        many=True,
        metavar="VARIANT",
    )


def download(
    options: PugImageNetDownload, spec: BenchmarkSpec, specs: Sequence[BenchmarkSpec]
) -> int:
    from hf_bgbench.benchmarks.pug_imagenet.download import pug_snapshot
    from hf_bgbench.hub.snapshots import snapshot_commit

    spec.check_variants(list(options.variants or ()))
    folder = pug_snapshot(**keywords(options))
    commit = snapshot_commit(folder)
    print(f"PUG: ImageNet is at {folder}" + (f" (commit {commit})" if commit else ""))
    print(f"score a model on it: bgbench evaluate MODEL --benchmark {spec.name}")
    return 0


DOWNLOAD = Command(
    "pug-imagenet",
    "the Hub dataset facebook/PUG_ImageNet (CC-BY-NC 4.0, ~29 GB), into the Hugging Face cache",
    PugImageNetDownload,
    download,
)
