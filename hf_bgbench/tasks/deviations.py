"""The sentences a run records where it departs from the paper's values or the authors'
normalisation (each task adds them to ``run.deviations``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from hf_bgbench.tasks.protocol_settings import Normalisation, PaperValues

__all__ = ["normalisation_deviations", "paper_value_deviations"]


def paper_value_deviations(paper_values: PaperValues | None, options: Any) -> list[str]:
    """A sentence for each option the protocol pins to the paper's value (its
    ``paper_values`` setting; None: it pins none) that this run set otherwise, written from
    the value it used: a recorded sentence about a setting never states the default in its
    place."""
    out = []
    for name, (paper, what) in (paper_values or {}).items():
        used = getattr(options, name)
        if used != paper:
            flag = "--" + name.replace("_", "-")
            out.append(f"{what}: {used} ({flag}); the paper's: {paper}.")
    return out


def normalisation_deviations(fixed: Normalisation | None, classifier: Any) -> list[str]:
    """The sentence recording that this model was normalised with its own mean/std where the
    protocol's authors normalised every model with a fixed one (its
    ``authors_normalisation`` setting, ``fixed``), generated from the two pairs actually
    compared; none when they agree (e.g. a torchvision model under IN-9's ImageNet mean/std)
    or the protocol names no fixed normalisation (None). The model's own is what it was
    trained with, so it is the sound choice; the sentence makes the difference visible,
    since it moves accuracies by points where the two differ. A model that normalises its
    own inputs (a VLM's processor) names its ``normalisation`` (mean, std)."""
    if fixed is None:
        return []
    own = getattr(classifier, "normalisation", None)
    if isinstance(own, str):  # normalised out of sight (a served model's server)
        return [
            f"Inputs normalised by {own}, with statistics bgbench cannot see; the authors' "
            f"{fixed.source} normalises every model with mean "
            f"({', '.join(f'{x:g}' for x in fixed.mean)}), std "
            f"({', '.join(f'{x:g}' for x in fixed.std)})."
        ]
    if own is None:
        described = classifier.preprocessing.to_dict()  # what results.json records
        own = (tuple(described["mean"]), tuple(described["std"]))
    theirs = (tuple(fixed.mean), tuple(fixed.std))
    if np.allclose(np.array(own), np.array(theirs), atol=1e-6):
        return []

    def pair(mean: tuple, std: tuple) -> str:
        return (
            f"mean ({', '.join(f'{x:g}' for x in mean)}), std ({', '.join(f'{x:g}' for x in std)})"
        )

    return [
        f"Inputs normalised with the model's own {pair(*own)}; the authors' "
        f"{fixed.source} normalises every model with {pair(*theirs)}, which a model "
        "trained with other statistics scores lower under (docs/fidelity.md)."
    ]
