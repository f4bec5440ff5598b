"""IN-9's sub-commands, declared (the spec's CLI hooks name them): ``bgbench build in9``,
``bgbench convert in9-release`` and ``bgbench download in9``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from hf_bgbench.benchmarks.in9.download import DATASET_DIRNAME, DEFAULT_IN9_URL
from hf_bgbench.builders.arguments import keywords, option, shared_fields
from hf_bgbench.builders.commands import (
    Command,
    DownloadOptions,
    cache_folder,
    imagenet_photos,
    output_argument,
    output_folder,
    photo_classes,
    photo_limit,
    progress_option,
    release_folder,
    release_url,
    workers_option,
)
from hf_bgbench.spec import BenchmarkSpec


@dataclass(frozen=True, kw_only=True)
class In9Build:
    """Build the eight ImageNet-9 Backgrounds Challenge variants (and their foreground masks)
    from ImageNet photos and boxes, as a Hub dataset repo folder.

    The same options serve dataset_scripts/in9.py."""

    images: Path = imagenet_photos()
    boxes: Path | None = option(
        None,
        "PASCAL-VOC XML boxes (ROOT/<wnid>/<stem>.xml or ROOT/<stem>.xml, the ILSVRC "
        "Annotation layout) or a CSV with columns file,xmin,ymin,xmax,ymax (one row per box)",
    )
    no_boxes: bool = option(
        False,
        "estimate a box (spectral-residual saliency) for photos without one; such rows "
        "are flagged box_estimated=True",
    )
    metadata: Path | None = photo_classes()
    output: Path = output_folder()
    seed: int = option(0, "seed of every random choice (default 0)")
    workers: int = workers_option("worker processes (default: the CPUs available, %(default)s)")
    label_space: str = option(
        "in9",
        "in9: the 9 IN-9 classes; imagenet: Full-IN, all 1000 classes (benchmark in9_full)",
        choices=("in9", "imagenet"),
    )
    split: str = option(
        "val",
        "val: photos are ImageNet val, written as split 'test'; train: written as split "
        "'train', plus the in9l config (IN-9L; --label-space in9 only)",
        choices=("val", "train"),
    )
    image_format: str = option(
        "jpeg",
        "encoding of the variant images: jpeg (quality 95, 4:4:4) or png (lossless)",
        choices=("jpeg", "png"),
    )
    shard_size: int = option(1000, "images per Parquet shard")
    limit_per_class: int | None = photo_limit()
    variants: str | None = option(None, "comma-separated variants to write (default: all eight)")
    overwrite: bool = option(False, "replace an earlier build of the split")
    keep_work: bool = option(False, "keep the stage-1 cache afterwards")
    progress: bool = progress_option()


def build(options: In9Build, spec: BenchmarkSpec, specs: Sequence[BenchmarkSpec]) -> int:
    """``bgbench build in9``: the spec ``--label-space`` names, taken from ``specs``."""
    from hf_bgbench.benchmarks.in9.build import (
        LABEL_SPACES,
        REPORT_NAME,
        BuildOptions,
        build_in9,
        summary_lines,
    )
    from hf_bgbench.benchmarks.in9.variants import IN9_VARIANTS

    named = next(s for s in specs if s.name == LABEL_SPACES[options.label_space])
    listed = options.variants
    variants = tuple(v.strip() for v in listed.split(",")) if listed else IN9_VARIANTS
    report = build_in9(
        BuildOptions(**shared_fields(options, BuildOptions, variants=variants)), named
    )
    for line in summary_lines(report):
        print(line)
    print(f"wrote {options.output} (card README.md, {REPORT_NAME})")
    return 0


BUILD = Command("in9", "the eight IN-9 variants from ImageNet photos and boxes", In9Build, build)


@dataclass(frozen=True, kw_only=True)
class In9Release:
    """Convert bg_challenge/<variant>/val/<class-dir>/<stem>.JPEG and
    bg_challenge/fg_mask/val/<class-dir>/<stem>.npy into a Hub dataset repo folder (image
    bytes unchanged, masks as PNG, one config per variant, split 'test')."""

    src: Path = release_folder("bg_challenge or its parent")
    output: Path = output_argument()
    overwrite: bool = option(False, "replace data/ in the output")


def convert(options: In9Release, spec: BenchmarkSpec, specs: Sequence[BenchmarkSpec]) -> int:
    from hf_bgbench.benchmarks.in9.convert import convert_in9_release

    report = convert_in9_release(options.src, options.output, spec, overwrite=options.overwrite)
    counts = ", ".join(f"{k} {v}" for k, v in report["per_class"].items())
    print(f"converted {report['kept']} images per variant ({counts}) into {options.output}")
    return 0


CONVERT = Command(
    "in9-release",
    "the official Backgrounds Challenge release (bg_challenge/<variant>/val/...)",
    In9Release,
    convert,
)


@dataclass(frozen=True, kw_only=True)
class In9Download(DownloadOptions):
    """Download the authors' Backgrounds Challenge archive (resuming a partial download),
    record its sha256, unpack it safely, check the layout
    (bg_challenge/<variant>/val/<class-dir>/*.JPEG and fg_mask/val/.../*.npy) and convert it
    into a Hub-layout dataset folder in the cache. A finished conversion is reused. Needs
    about 3 GB of free disk."""

    url: str = release_url(DEFAULT_IN9_URL, "archive.tar.gz")
    cache_dir: Path | None = cache_folder(DATASET_DIRNAME)


def download(options: In9Download, spec: BenchmarkSpec, specs: Sequence[BenchmarkSpec]) -> int:
    from hf_bgbench.benchmarks.in9.download import describe, download_in9

    print(describe(download_in9(**keywords(options), spec=spec)))
    return 0


DOWNLOAD = Command(
    "in9",
    "the Backgrounds Challenge test data (~1 GB), converted to the Hub layout",
    In9Download,
    download,
)
