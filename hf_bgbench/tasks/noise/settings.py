"""What a benchmark's ``noise`` protocol may set (checked when the benchmark registers; see
:mod:`hf_bgbench.tasks.protocol_settings`)."""

from __future__ import annotations

from dataclasses import dataclass

from hf_bgbench.tasks.protocol_settings import MaskedTaskSettings


@dataclass(frozen=True)
class NoiseTrials:
    """How many noise draws per image and level the paper's text and the authors' released
    script take; the task writes the sentence about ``--trials`` from the value it ran."""

    paper: int
    authors_code: int


@dataclass(frozen=True)
class NoiseProtocolSettings(MaskedTaskSettings):
    """:class:`~hf_bgbench.tasks.protocol_settings.MaskedTaskSettings` (``stretch``,
    ``aggregation``: the accuracies per class, then the mean over the classes, or pooled over
    the noisy images; ``head``) and ``noise_trials``: the trials the source names (None: it
    names none)."""

    noise_trials: NoiseTrials | None = None
