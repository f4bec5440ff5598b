"""What a benchmark's ``saliency`` protocol may set (checked when the benchmark registers; see
:mod:`hf_bgbench.tasks.protocol_settings`)."""

from __future__ import annotations

from dataclasses import dataclass

from hf_bgbench.tasks.protocol_settings import (
    Aggregation,
    HeadSettings,
    PaperValues,
    check_paper_values,
    check_stretch,
)
from hf_bgbench.tasks.saliency.options import SaliencyOptions


@dataclass(frozen=True)
class SaliencyProtocolSettings:
    """``stretch``: every photo and mask resized whole to this (height, width), no crop (None:
    the model's own eval transform); ``aggregation``: how the per-image scores become a
    number (per class, then the mean over the classes, or pooled over the images); ``head``:
    the linear head the probe label map fits (None: the model's own classes);
    ``paper_values``: the options the paper fixes, {option: (its value, what it is)}, each a
    field of :class:`SaliencyOptions` (None: none)."""

    stretch: tuple[int, int] | None = None
    aggregation: Aggregation = "class-mean"
    head: HeadSettings | None = None
    paper_values: PaperValues | None = None

    def __post_init__(self) -> None:
        check_stretch(self.stretch)
        check_paper_values(self.paper_values, SaliencyOptions, "saliency")
