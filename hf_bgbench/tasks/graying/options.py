"""The ``graying`` task's options, each declared once
(:func:`~hf_bgbench.tasks.options.option`): the Python API's keyword arguments, the command
line's flags and the Space's controls are generated from them
(:mod:`hf_bgbench.tasks.graying` holds the hooks)."""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass
from pathlib import Path

from hf_bgbench.builders.arguments import positive_int
from hf_bgbench.tasks.options import RunOptions, option, output_option


def _gray_level(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(
            f"the grey level is a pixel value in [0, 1] (0.5: mid-grey), got {text!r}"
        )
    return value


PER_IMAGE_FILE = "graying_images.parquet"
"""The per-image file the task writes in its run folder."""


class GrayingError(ValueError):
    """The graying ablation cannot run as asked (message meant for a person)."""


@dataclass
class GrayingOptions(RunOptions):
    """Background ablation by graying (Moayeri et al., 2022, Fig. 8) on any benchmark with
    object masks (test split): every background pixel set to a flat grey, the object kept;
    accuracy on the clean and on the grayed images, and the drop, per class and overall with
    95% intervals; for a model scored through a linear head, also the accuracy on the grayed
    images of a head re-fitted on grey-background train images. Writes graying.json,
    graying.md, graying_model_index.yaml and graying_images.parquet (per image) to
    --output."""

    Error = GrayingError

    data: str | Path | None = option(
        None,
        "release folder, Hub-layout folder or Hub dataset id whose mask variant has its mask "
        "column (default: the benchmark's Hub repo, else a `bgbench download`)",
    )
    gray: float = option(
        0.5,
        "the grey every background pixel is set to, in [0, 1] (the paper's: 0.5)",
        parse=_gray_level,
    )
    refit_head: bool = option(
        True,
        "skip the second number of Fig. 8: accuracy on the grayed test images of a linear head "
        "re-fitted on grey-background train images (the authors' finetuner.py fg_only head: "
        "20 epochs over the train split; fitted once, then cached). Only a model scored "
        "through the protocol's linear head (--label-map probe) has one",
        flags=("--no-refit-head",),
        negated=True,
    )
    seed: int = option(0, "seed of --max-images and the bootstrap (recorded)", parse=int)
    max_images: int | None = option(
        None,
        "seeded random subset of images",
        parse=positive_int,
        space_cap=("BGBENCH_SPACE_MAX_IMAGES", 200),
    )
    output_dir: str | Path | None = output_option("bgbench_graying")

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0.0 <= float(self.gray) <= 1.0:
            raise GrayingError(f"--gray must be in [0, 1], got {self.gray!r}.")
