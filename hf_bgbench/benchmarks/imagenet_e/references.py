"""ImageNet-E's report card and its published numbers, as data (:class:`~hf_bgbench.spec.
Headline`, :class:`~hf_bgbench.spec.Reference`).

Source: Li et al., "ImageNet-E: Benchmarking Neural Network Robustness via Attribute
Editing" (CVPR 2023): the λ = 20 background edit drops top-1 by 9.23 % on average over the
paper's models, the 0.05 object pixel rate by 18.34 %, and the average DA of ResNet-50 is
15.72 % against 10.20 % for Swin-S. The paper does not name the checkpoints it scored, so no
row names a model tag; the averages "over models" are not one model's numbers and are shown
as the paper's average.
"""

from __future__ import annotations

from hf_bgbench.benchmarks.imagenet_e.edit_names import PAPER_ATTRIBUTE_EDITS
from hf_bgbench.spec import Headline, Reference

IMAGENET_E_REPORT = (
    Headline(
        "evaluate",
        "mean_da",
        "Mean DA",
        "pts",
        1,
        description="original − edit accuracy, averaged over the edits",
    ),
    Headline(
        "evaluate",
        "da/",
        "Worst edit DA",
        "pts",
        1,
        worst=True,
        description="the edit that drops accuracy most",
    ),
)

IMAGENET_E_LEADERBOARD = (
    Headline(
        "evaluate",
        "mean_edit_accuracy",
        "Accuracy on the edited images",
        "%",
        -1,
        # a Hub task names one config: the first edit averaged (the description names all)
        config=PAPER_ATTRIBUTE_EDITS[0],
        description="top-1 accuracy averaged over the paper's attribute edits "
        f"({', '.join(PAPER_ATTRIBUTE_EDITS)})",
    ),
    *(
        Headline(
            "evaluate",
            f"accuracy/{edit}",
            f"{edit} accuracy",
            "%",
            -1,
            description=f"top-1 accuracy on the {edit} edit",
        )
        for edit in PAPER_ATTRIBUTE_EDITS
    ),
)
"""The Hub leaderboard's tasks: accuracies, which rank the right way round (high first); the
drops above stay in the report and each entry's notes."""

_PAPER = "Li et al. 2023 (ImageNet-E, CVPR), Sec. 4"
_DATA = "ImageNet-E (4,352 images, 11 edits; each number the mean of 5 runs)"
_UNNAMED = "the paper does not name the checkpoint; no tag reproduces it for certain"

IMAGENET_E_REFERENCES = (
    Reference(
        "average over the paper's models",
        "evaluate",
        {"da/bg_complex": 9.23, "da/size_0.05": 18.34},
        _PAPER,
        dataset=_DATA,
        notes="an average over every model the paper scored, not one model",
        labels={"da/bg_complex": "DA bg_complex (λ = 20)", "da/size_0.05": "DA size_0.05"},
    ),
    Reference("ResNet-50", "evaluate", {"mean_da": 15.72}, _PAPER, dataset=_DATA, notes=_UNNAMED),
    Reference("Swin-S", "evaluate", {"mean_da": 10.20}, _PAPER, dataset=_DATA, notes=_UNNAMED),
)
