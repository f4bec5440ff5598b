"""What a benchmark's ``evaluate`` protocol may set (checked when the benchmark registers;
see :mod:`hf_bgbench.tasks.protocol_settings`)."""

from __future__ import annotations

from dataclasses import dataclass

from hf_bgbench.models.vlm.settings import PairQuestion
from hf_bgbench.tasks.protocol_settings import (
    HeadSettings,
    Normalisation,
    ZeroShotHead,
    check_stretch,
)


@dataclass(frozen=True)
class EvaluateProtocolSettings:
    """``stretch``: every photo resized whole to this (height, width), no crop (None: the
    model's own eval transform); ``head``: the linear head the probe label map fits (None:
    the model's own classes); ``authors_normalisation``: the fixed mean/std the authors'
    code normalises every model with (None: none), recorded as a deviation where the
    model's own differs; ``zero_shot``: the head CLIP-family models get (None: the
    ``--zero-shot-classes`` / ``--templates`` options); ``center_crop``: the central square
    every photo is cut to before the ``stretch`` (None: the whole photo); ``vlm_question``:
    the two-way question a generative VLM is asked about each image (None: the ``--vlm-*``
    rules). No ``aggregation``: evaluate counts over the images it scores, the only way it
    counts, so a recipe naming another would record one it did not follow."""

    stretch: tuple[int, int] | None = None
    center_crop: int | None = None
    head: HeadSettings | None = None
    authors_normalisation: Normalisation | None = None
    zero_shot: ZeroShotHead | None = None
    vlm_question: PairQuestion | None = None

    def __post_init__(self) -> None:
        check_stretch(self.stretch)
        if self.center_crop is not None and (self.stretch is None or self.center_crop < 1):
            raise ValueError("setting 'center_crop' needs a 'stretch' and a size >= 1.")
