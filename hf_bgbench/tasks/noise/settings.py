"""What a benchmark's ``noise`` protocol may set (checked when the benchmark registers; see
:mod:`hf_bgbench.tasks.protocol_settings`)."""

from __future__ import annotations

from dataclasses import dataclass

from hf_bgbench.tasks.protocol_settings import Aggregation, HeadSettings, check_stretch


@dataclass(frozen=True)
class NoiseTrials:
    """How many noise draws per image and level the paper's text and the authors' released
    script take; the task writes the sentence about ``--trials`` from the value it ran."""

    paper: int
    authors_code: int


@dataclass(frozen=True)
class NoiseProtocolSettings:
    """``stretch``: every photo and mask resized whole to this (height, width), no crop (None:
    the model's own eval transform); ``aggregation``: the accuracies per class, then the mean
    over the classes, or pooled over the noisy images; ``head``: the linear head the probe
    label map fits (None: the model's own classes); ``noise_trials``: the trials the source
    names (None: it names none)."""

    stretch: tuple[int, int] | None = None
    aggregation: Aggregation = "class-mean"
    head: HeadSettings | None = None
    noise_trials: NoiseTrials | None = None

    def __post_init__(self) -> None:
        check_stretch(self.stretch)
