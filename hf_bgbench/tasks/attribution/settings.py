"""What a benchmark's ``attribution`` protocol may set (checked when the benchmark registers; see
:mod:`hf_bgbench.tasks.protocol_settings`)."""

from __future__ import annotations

from dataclasses import dataclass

from hf_bgbench.tasks.attribution.options import AttributionOptions
from hf_bgbench.tasks.protocol_settings import (
    HeadSettings,
    PaperValues,
    check_paper_values,
    check_stretch,
)


@dataclass(frozen=True)
class AttributionProtocolSettings:
    """``stretch``: every photo and mask resized whole to this (height, width), no crop (None:
    the model's own eval transform); ``head``: the linear head the probe label map fits
    (None: the model's own classes); ``paper_values``: the options the paper fixes, {option:
    (its value, what it is)}, each a field of :class:`AttributionOptions` (None: none)."""

    stretch: tuple[int, int] | None = None
    head: HeadSettings | None = None
    paper_values: PaperValues | None = None

    def __post_init__(self) -> None:
        check_stretch(self.stretch)
        check_paper_values(self.paper_values, AttributionOptions, "attribution")
