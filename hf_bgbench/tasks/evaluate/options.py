"""The ``evaluate`` task's options, each declared once
(:func:`~hf_bgbench.tasks.options.option`): the Python API's keyword arguments, the command
line's flags and the Space's controls are generated from them
(:mod:`hf_bgbench.tasks.evaluate` holds the hooks)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from hf_bgbench.builders.arguments import positive_int
from hf_bgbench.tasks.options import (
    RunOptions,
    check_cache_folder,
    default_spec,
    option,
    output_option,
)


@dataclass
class EvaluateOptions(RunOptions):
    """Score a timm / transformers / open_clip / bundled model (CLIP-family models zero-shot)
    on every variant of a benchmark and report per-variant accuracy with intervals and the
    benchmark's metrics (IN-9: BG-GAP, the other gaps, the prediction categories). Writes
    results.json, results.md, results_model_index.yaml, accuracy.png and per-image
    predictions to --output. Several
    processes (one per GPU): `accelerate launch --multi_gpu --num_processes N -m hf_bgbench
    evaluate ...`; same results as one process."""

    data: str | Path | None = option(
        None,
        lambda task: (
            "Hub dataset id, local Hub-layout folder, official release folder, or "
            "photo folder (default: the benchmark's Hub dataset once it is published; until "
            "then, or offline, a `bgbench download`)"
        ),
    )
    variants: Sequence[str] | None = option(
        None,
        lambda task: (
            "variants to score, space- or comma-separated (default: all the data "
            f"has; {default_spec().short_name}: {', '.join(default_spec().variants)})"
        ),
        many=True,
        metavar="VARIANT",
    )
    output_dir: str | Path | None = output_option("bgbench_results")
    allow_mismatched_ids: bool = option(
        False,
        "when variants that should hold the same images do not, score only the images they "
        "share (recorded in results.json) instead of stopping with an error",
    )
    cache_dir: str | Path | None = option(None, "prediction cache folder", parse=Path)
    use_cache: bool = option(
        True, "recompute every prediction", flags=("--no-cache",), negated=True
    )
    decode_cache: bool = option(
        False,
        "keep the decoded images on disk (uint8, about 150 KB per 224x224 image, under "
        "the cache root's decoded/) and read them back instead of decoding whenever a model "
        "is fed the same pixels (same data, resize, crop, decoder): every model after the "
        "first skips decoding, the same predictions (recorded)",
        flags=("--decode-cache",),
    )
    max_images: int | None = option(
        None,
        "score a seeded random subset of at most N images per variant, the same images in "
        "every variant that holds the same ids, so the gaps stay paired (recorded; a quick "
        "look, not the benchmark's number)",
        parse=positive_int,
        # the Space's cap is a job's total: the variants a visitor picks share it equally
        space_cap=("BGBENCH_SPACE_EVALUATE_IMAGES", 25_000),
        space_cap_shared=True,
    )
    seed: int = option(0, "seed of the subset and the bootstrap intervals (recorded)", parse=int)

    def __post_init__(self) -> None:
        super().__post_init__()
        from hf_bgbench.data.decoded_cache import default_decoded_dir
        from hf_bgbench.inference.engine import default_cache_dir

        if self.use_cache:
            where = Path(self.cache_dir) if self.cache_dir else default_cache_dir()
            check_cache_folder(where, "prediction cache", "run with --no-cache", self.Error)
        if self.decode_cache:
            check_cache_folder(
                default_decoded_dir(), "decoded-image cache", "leave out --decode-cache", self.Error
            )
