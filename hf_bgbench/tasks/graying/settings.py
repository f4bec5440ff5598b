"""What a benchmark's ``graying`` protocol may set (checked when the benchmark registers; see
:mod:`hf_bgbench.tasks.protocol_settings`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from hf_bgbench.tasks.graying.options import GrayingOptions
from hf_bgbench.tasks.protocol_settings import PaperValueSettings


@dataclass(frozen=True)
class GrayingProtocolSettings(PaperValueSettings):
    """``stretch``, ``aggregation``, ``head`` and ``paper_values`` (each a field of
    :class:`GrayingOptions`): see
    :class:`~hf_bgbench.tasks.protocol_settings.PaperValueSettings`."""

    OPTIONS: ClassVar[type] = GrayingOptions
    TASK: ClassVar[str] = "graying"
