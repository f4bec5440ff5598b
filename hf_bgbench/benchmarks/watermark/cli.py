"""The ``bgbench build watermark`` sub-command, declared: :data:`BUILD` is the spec's
``cli_build`` hook; ``bgbench build`` makes its parser from :class:`WatermarkBuild`.

``bgbench build watermark --images DIR [--metadata CSV] --output OUT``
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from hf_bgbench.builders.arguments import option, positive_int, shared_fields
from hf_bgbench.builders.commands import (
    Command,
    imagenet_photos,
    output_folder,
    photo_classes,
    photo_limit,
    progress_option,
    workers_option,
)
from hf_bgbench.spec import BenchmarkSpec


@dataclass(frozen=True, kw_only=True)
class WatermarkBuild:
    """Build the watermark benchmark (ImageNet-W style, Li et al. 2023) from ImageNet photos:
    each photo resized to 256 and centre-cropped to 224 (config 'original') and the same crop
    with the watermark of the imagenet-w package (config 'watermark'), as a Hub dataset repo
    folder. Needs pip install "hf-bgbench[watermark]"."""

    images: Path = imagenet_photos()
    metadata: Path | None = photo_classes()
    output: Path = output_folder()
    limit_per_class: int | None = photo_limit(positive_int)
    seed: int = option(0, "seed of the --limit-per-class subset")
    shard_size: int = option(500, "images per Parquet shard", parse=positive_int)
    workers: int = workers_option(
        "worker processes (0 or 1: in the main process; default: the CPUs available, "
        "%(default)s); the output is the same whatever the number"
    )
    overwrite: bool = option(False, "replace a different earlier build")
    progress: bool = progress_option()


def build(options: WatermarkBuild, spec: BenchmarkSpec, specs: Sequence[BenchmarkSpec]) -> int:
    from hf_bgbench.benchmarks.watermark.build import (
        WatermarkBuildOptions,
        build_watermark,
        summary_lines,
    )
    from hf_bgbench.builders.report import REPORT_NAME

    chosen = WatermarkBuildOptions(**shared_fields(options, WatermarkBuildOptions))
    for line in summary_lines(build_watermark(spec, chosen)):
        print(line)
    print(f"wrote {options.output} (card README.md, {REPORT_NAME})")
    return 0


BUILD = Command(
    "watermark", "ImageNet photos with and without the ImageNet-W watermark", WatermarkBuild, build
)
