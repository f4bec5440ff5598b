"""The ``saliency`` task's options, each declared once
(:func:`~hf_bgbench.tasks.options.option`): the Python API's keyword arguments, the command
line's flags and the Space's controls are generated from them
(:mod:`hf_bgbench.tasks.saliency` holds the hooks)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hf_bgbench.builders.arguments import non_negative_int, positive_int
from hf_bgbench.inference.cam_methods import METHODS
from hf_bgbench.tasks.options import (
    RunOptions,
    option,
    output_option,
)

TARGETS = ("predicted", "true")
"""Which class a saliency map explains: the predicted one, or the true one."""
PER_IMAGE_FILE = "saliency_per_image.parquet"
"""The per-image file the task writes in its run folder."""


@dataclass
class SaliencyOptions(RunOptions):
    """Grad-CAM (grad-cam package) on the predicted or true class of every image of the
    benchmark's mask variant (IN-9: original + mask; RIVAL10: ordinary + object_mask),
    compared with the object mask: IoU after max-normalising and binarising at 0.5, share of
    saliency inside the mask, delta density (mean saliency on the object minus on the
    background), average precision of the map for the mask's pixels, and saliency recall
    (mask coverage of the most salient pixels holding 25 % of the saliency; also at 50 and
    75 %). Each score is averaged per predicted class, then over classes (the RIVAL10
    authors' aggregation; --protocol bgbench-v1: over images), with bootstrap intervals;
    also the other way, per predicted class and on RIVAL10 per attribute. Writes
    saliency.json, saliency.md, saliency.png, saliency_gallery.png (the images with the
    lowest delta density) and saliency_per_image.parquet to --output."""

    data: str | Path | None = option(
        None,
        lambda task: (
            "Hub-layout folder or Hub dataset id whose mask variant has object masks, "
            "or the official release (default: the benchmark's Hub dataset once it is "
            "published; until then, or offline, a `bgbench download`)"
        ),
    )
    target: str = option(
        "predicted",
        "class whose Grad-CAM is taken: the model's predicted class, or the true class (for a "
        "1000-class model: the highest-scoring ImageNet class mapped to it); scores are "
        "grouped by predicted class either way",
        choices=TARGETS,
    )
    target_layer: str | None = option(
        None,
        "dotted module path of the layer to explain, e.g. layer4, blocks.-1.norm1 (default: "
        "chosen from the model: the last feature map of a CNN, the last block's norm1 of a ViT)",
        metavar="NAME",
    )
    method: str = option("gradcam", "CAM method", choices=tuple(METHODS))
    max_images: int | None = option(
        None,
        "seeded random subset (recorded)",
        parse=positive_int,
        space_cap=("BGBENCH_SPACE_MAX_IMAGES", 200),
    )
    seed: int = option(0, "seed of the subset and the bootstrap", parse=int)
    gallery: int = option(
        16,
        "images with the lowest delta density drawn in saliency_gallery.png (0: none)",
        parse=non_negative_int,
    )
    output_dir: str | Path | None = output_option("bgbench_saliency")
    bootstrap_resamples: int = option(1000, "resamples of the bootstrap intervals", cli=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.gallery < 0:
            raise ValueError(f"--gallery must be 0 (none) or more, got {self.gallery}.")
