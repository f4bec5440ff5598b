"""The ``challenge`` task's options, each declared once
(:func:`~hf_bgbench.tasks.options.option`): the Python API's keyword arguments, the command
line's flags and the Space's controls are generated from them
(:mod:`hf_bgbench.tasks.challenge` holds the hooks)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hf_bgbench.builders.arguments import positive_int
from hf_bgbench.tasks.options import (
    RunOptions,
    check_cache_folder,
    option,
    output_option,
)


class ChallengeError(ValueError):
    """The data cannot be used for the Backgrounds Challenge as given."""


@dataclass
class ChallengeOptions(RunOptions):
    """Paste every test foreground (image + fg_mask) on every only_bg_t background, of every
    class, and count the foregrounds no background can flip (challenge accuracy). Each
    foreground stops at its first fooling background, the most fooling backgrounds tried
    first; --full-matrix scores every composite and adds per-background attack success
    rates. Decided foregrounds are cached: rerun the same command after an interruption to
    resume. Writes challenge.json, challenge.md, vulnerable.parquet, challenge.png (and
    fooling_matrix.npz) to --output. Several processes (one per GPU), each taking a share of
    the foregrounds: `accelerate launch --multi_gpu --num_processes N -m hf_bgbench
    challenge ...`."""

    data: str | Path | None = option(
        None,
        lambda task: (
            "official release folder (bg_challenge/... with fg_mask), a Hub-layout "
            "folder whose foreground variant has a mask column, or a Hub dataset id (default: the "
            "benchmark's Hub dataset once it is published; until then, or offline, a `bgbench "
            "download`)"
        ),
    )
    foreground_variant: str = option("original", "variant of the foregrounds", cli=False)
    background_variant: str = option("only_bg_t", "variant of the backgrounds", cli=False)
    max_foregrounds: int | None = option(
        None,
        "seeded random subset",
        parse=positive_int,
        # 50 foregrounds x (200 backgrounds + 1): at worst ~10,000 forward passes, a quarter
        # of the Space's limit for the bundled model on 2 vCPU (bench/space_defaults.py)
        space_cap=("BGBENCH_SPACE_FOREGROUNDS", 50),
    )
    max_backgrounds: int | None = option(
        None,
        "seeded random subset",
        parse=positive_int,
        space_cap=("BGBENCH_SPACE_BACKGROUNDS", 200),
    )
    full_matrix: bool = option(
        False, "score every composite (no early stop) for attack success rates per background"
    )
    max_device_backgrounds: int | None = option(
        None,
        "backgrounds held on the device at once; more are streamed in chunks of this size, "
        "same results (default: all that fit in half the free device memory)",
        parse=positive_int,
    )
    cache_dir: str | Path | None = option(
        None,
        "where decided foregrounds are cached, so an interrupted run resumes (default: "
        "<cache root>/challenge)",
        parse=Path,
    )
    use_cache: bool = option(
        True, "recompute every foreground", flags=("--no-cache",), negated=True
    )
    seed: int = option(
        0, "seed of the subsets and of the schedule's tie-breaks (recorded)", parse=int
    )
    output_dir: str | Path | None = output_option("bgbench_challenge")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.use_cache:
            from hf_bgbench.tasks.challenge.cache import default_challenge_cache_dir

            where = Path(self.cache_dir) if self.cache_dir else default_challenge_cache_dir()
            check_cache_folder(where, "challenge cache", "run with --no-cache", self.Error)
        if self.max_device_backgrounds is not None and self.max_device_backgrounds < 1:
            raise ValueError(
                f"--max-device-backgrounds must be >= 1, got {self.max_device_backgrounds}."
            )
