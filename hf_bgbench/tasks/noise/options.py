"""The ``noise`` task's options, each declared once (:func:`~hf_bgbench.tasks.options.option`):
the Python API's keyword arguments, the command line's flags and the Space's controls are
generated from them (:mod:`hf_bgbench.tasks.noise` holds the hooks)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from hf_bgbench.builders.arguments import positive_int
from hf_bgbench.tasks.noise.levels import (
    NORMS,
    NoiseError,
    NoiseSettings,
    check_levels,
)
from hf_bgbench.tasks.options import (
    RunOptions,
    option,
    output_option,
    paragraph,
)

PER_IMAGE_FILE = "noise_images.parquet"
"""The per-image file the task writes in its run folder."""


@dataclass
class NoiseOptions(RunOptions):
    """RIVAL10's noise analysis on any benchmark with object masks (RIVAL10 ordinary /
    object_mask, IN-9 original / mask, test split): each image gets Gaussian noise on the
    object only (accuracy a_fg) and on the background only (a_bg), --trials draws per level.
    Relative foreground sensitivity RFS = (a_bg - a_fg) / (2 min(ā, 1 - ā)) per level, per
    class and overall, iRFS per image, with 95% intervals. Writes noise.json, noise.md,
    noise_model_index.yaml, noise_images.parquet (per image and level) and four plots to
    --output.

    release folder (RIVAL10/ or bg_challenge/ with fg_mask), Hub-layout folder or Hub dataset
    id whose mask variant has its mask column (default: the benchmark's Hub repo, else a
    `bgbench download`)
    """

    Error = NoiseError

    data: str | Path | None = option(None, lambda task: paragraph(NoiseOptions, 1))
    norm: str = option(
        "linf",
        "linf: noise N(0, σ²) with σ = level/255 (the paper's main setting); l2: each "
        "region's noise scaled to ℓ2 norm ε = level (pixels in [0, 1], whole image tensor)",
        choices=NORMS,
    )
    levels: Sequence[float | str] | None = option(
        None,
        "noise levels, space- or comma-separated (default: linf 30 60 90 120 150 180 210, "
        "i.e. σ = 30/255 ...; l2 25 50 ... 200)",
        many=True,
        metavar="LEVEL",
    )
    trials: int = option(10, "noise draws per image and level", parse=positive_int)
    seed: int = option(
        0,
        "seed of the noise (per image and level, on the device), the bootstrap and "
        "--max-images (recorded)",
        parse=int,
    )
    max_images: int | None = option(
        None,
        "seeded random subset of images",
        parse=positive_int,
        # its own cap: ~141 forward passes an image (10 trials x 7 levels x 2 regions + the
        # clean one); 100 images are ~14,000 passes, about a third of the Space's 20-minute
        # limit for the bundled model on 2 vCPU (bench/space_defaults.py)
        space_cap=("BGBENCH_SPACE_NOISE_IMAGES", 100),
    )
    attributes: bool = option(
        False,
        "also add the noise to each attribute's mask alone, on the images that have it (data "
        "with an attribute_masks column): accuracy per attribute",
    )
    output_dir: str | Path | None = output_option("bgbench_noise")

    def __post_init__(self) -> None:
        trials = self.trials
        if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
            raise NoiseError(f"--trials must be a whole number >= 1, got {trials!r}.")
        super().__post_init__()
        self.noise()  # the levels, checked

    def noise(self) -> NoiseSettings:
        levels = tuple(check_levels(self.levels, self.norm))
        return NoiseSettings(levels, self.trials, self.norm, self.seed)
