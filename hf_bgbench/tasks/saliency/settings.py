"""What a benchmark's ``saliency`` protocol may set (checked when the benchmark registers; see
:mod:`hf_bgbench.tasks.protocol_settings`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from hf_bgbench.tasks.protocol_settings import PaperValueSettings
from hf_bgbench.tasks.saliency.options import SaliencyOptions


@dataclass(frozen=True)
class SaliencyProtocolSettings(PaperValueSettings):
    """``stretch``, ``aggregation``, ``head`` and ``paper_values`` (each a field of
    :class:`SaliencyOptions`): see
    :class:`~hf_bgbench.tasks.protocol_settings.PaperValueSettings`."""

    OPTIONS: ClassVar[type] = SaliencyOptions
    TASK: ClassVar[str] = "saliency"
