"""The ``attribution`` task's options, each declared once
(:func:`~hf_bgbench.tasks.options.option`): the Python API's keyword arguments, the command
line's flags and the Space's controls are generated from them
(:mod:`hf_bgbench.tasks.attribution` holds the hooks)."""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass
from pathlib import Path

from hf_bgbench.builders.arguments import non_negative_int, positive_int
from hf_bgbench.tasks.options import RunOptions, option, output_option

GALLERY_FILE = "attribution_gallery.png"
OUTPUTS = (
    "attribution.json",
    "attribution.md",
    "attribution_model_index.yaml",
    "attribution.png",
    GALLERY_FILE,
)
"""What the task writes in its run folder."""


class AttributionError(ValueError):
    """Neural-feature attribution cannot run as asked (message meant for a person)."""


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or not 0.0 < value <= 1.0:
        raise argparse.ArgumentTypeError(
            f"tau is a fraction of the map's maximum in (0, 1] (the paper's: 0.5), got {text!r}"
        )
    return value


@dataclass
class AttributionOptions(RunOptions):
    """Neural-feature attribution (Moayeri et al., 2022, Sec. 5, Fig. 10) on a benchmark with
    attribute masks: for each class and penultimate-layer feature, the top-k training images
    of the class by the feature's activation; Grad-CAM of the feature on them, binarised at
    tau of its maximum; IoU with each attribute's mask, averaged over the k images; the best
    feature per class and attribute, and its IoU on the test split (does it generalise?).
    Writes attribution.json, attribution.md, attribution_model_index.yaml, attribution.png
    and attribution_gallery.png to --output."""

    Error = AttributionError

    data: str | Path | None = option(
        None,
        "release folder, Hub-layout folder or Hub dataset id with train and test splits and "
        "attribute masks (default: the benchmark's Hub repo, else a `bgbench download`)",
    )
    top_k: int = option(
        10, "top-activating images per class and feature (the paper's: 10)", parse=positive_int
    )
    tau: float = option(
        0.5,
        "Grad-CAM binarised at tau x its maximum (the paper's: 0.5)",
        parse=_fraction,
    )
    max_features: int | None = option(
        None,
        "examine only this many features per class, those with the highest mean activation "
        "on the class's train images (default: every feature; a CPU run needs a small cap)",
        parse=positive_int,
        space_cap=("BGBENCH_SPACE_MAX_FEATURES", 8),
    )
    classes: list[str] | None = option(
        None,
        "classes to study, space- or comma-separated (default: all)",
        many=True,
        metavar="CLASS",
    )
    seed: int = option(0, "seed of --max-images and the bootstrap (recorded)", parse=int)
    max_images: int | None = option(
        None,
        "seeded random subset of images of each split (recorded)",
        parse=positive_int,
        space_cap=("BGBENCH_SPACE_MAX_IMAGES", 200),
    )
    gallery: int = option(
        4,
        "attributes (the best train IoUs) drawn in attribution_gallery.png, their best "
        "feature's Grad-CAM on its top images (0: none)",
        parse=non_negative_int,
    )
    output_dir: str | Path | None = output_option("bgbench_attribution")

    def __post_init__(self) -> None:
        super().__post_init__()
        if int(self.top_k) < 1:
            raise AttributionError(f"--top-k must be >= 1, got {self.top_k}.")
        if not 0.0 < float(self.tau) <= 1.0:
            raise AttributionError(f"--tau must be in (0, 1], got {self.tau!r}.")
        if self.max_features is not None and int(self.max_features) < 1:
            raise AttributionError(f"--max-features must be >= 1, got {self.max_features}.")
        if int(self.gallery) < 0:
            raise AttributionError(f"--gallery must be 0 (none) or more, got {self.gallery}.")
