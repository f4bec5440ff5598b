"""``bgbench convert imagenet-d`` and ``bgbench download imagenet-d``, declared: the spec's
``cli_convert`` and ``cli_download`` hooks."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from hf_bgbench.builders.arguments import keywords, option
from hf_bgbench.builders.commands import (
    Command,
    output_argument,
    progress_option,
    release_folder,
)
from hf_bgbench.spec import BenchmarkSpec


@dataclass(frozen=True, kw_only=True)
class ImageNetDConvert:
    """Convert the ImageNet-D release (the Hub dataset zcs15/ImageNet-D, or the authors'
    tarball: background/, texture/, material/ of class folders, and questions/) into a Hub
    dataset repo folder: one config per subset (split 'test'), image bytes unchanged, label =
    the ImageNet-D class, id = the image's path in the release, negative = its hard negative
    from questions/<subset>.csv. The card carries the MIT licence and the citation."""

    src: Path = release_folder("ImageNet-D, or its parent")
    output: Path = output_argument()
    clean: Path | None = option(
        None,
        "real ImageNet photos of the classes (ImageNet val in wnid class folders; other "
        "classes skipped and counted), written as the 'clean' config: the reference of each "
        "subset's accuracy drop (default: the release's clean/ folder, when it has one)",
    )
    overwrite: bool = option(False, "replace data/ in the output")
    progress: bool = progress_option()


def convert(options: ImageNetDConvert, spec: BenchmarkSpec, specs: Sequence[BenchmarkSpec]) -> int:
    from hf_bgbench.benchmarks.imagenet_d.convert import convert_imagenet_d, summary_lines

    report = convert_imagenet_d(**keywords(options), spec=spec)
    for line in summary_lines(report):
        print(line)
    print(f"wrote {options.output} (card: README.md, report: build_report.json)")
    return 0


@dataclass(frozen=True, kw_only=True)
class ImageNetDDownload:
    """Download the Hub dataset zcs15/ImageNet-D (the authors' upload, MIT licence; about
    5 GB of PNGs) into the Hugging Face cache, as it is. It is then read whenever no --data is
    given (or with --data zcs15/ImageNet-D); a finished download is reused."""

    revision: str | None = option(None, "the dataset's commit, branch or tag (default: main)")
    cache_dir: Path | None = option(
        None, "the Hugging Face cache folder (default: $HF_HUB_CACHE, else ~/.cache/huggingface)"
    )


def download(
    options: ImageNetDDownload, spec: BenchmarkSpec, specs: Sequence[BenchmarkSpec]
) -> int:
    from hf_bgbench.benchmarks.imagenet_d.download import imagenet_d_snapshot
    from hf_bgbench.hub.snapshots import snapshot_commit

    folder = imagenet_d_snapshot(**keywords(options))
    commit = snapshot_commit(folder)
    print(f"ImageNet-D is at {folder}" + (f" (commit {commit})" if commit else ""))
    print(f"score a model on it: bgbench evaluate MODEL --benchmark {spec.name}")
    return 0


CONVERT = Command(
    "imagenet-d",
    "the ImageNet-D release (background/, texture/, material/, questions/)",
    ImageNetDConvert,
    convert,
)
DOWNLOAD = Command(
    "imagenet-d",
    "the Hub dataset zcs15/ImageNet-D (MIT), into the Hugging Face cache",
    ImageNetDDownload,
    download,
)
