"""IN-9's named recipes per task (:class:`hf_bgbench.spec.Protocol`).

``evaluate`` and ``challenge`` follow Xiao et al. (ICLR 2021) and the authors' code
(``MadryLab/backgrounds_challenge``) with no known deviation. IN-9's paper has no noise or
saliency analysis: those tasks apply Moayeri et al. (2022)'s protocol -- accuracy per class,
then the mean over classes -- to IN-9's ``original`` images and their masks (224x224 as
released, so no resize), and say so.
"""

from __future__ import annotations

from hf_bgbench.spec import Protocol

PAPER_SOURCES = (
    "Xiao et al., Noise or Signal: The Role of Image Backgrounds in Object Recognition, ICLR 2021",
    "MadryLab/backgrounds_challenge (in9_eval.py, challenge_eval.py)",
)
BORROWED = (
    "IN-9's paper defines no {task} analysis: this applies Moayeri et al. (2022)'s protocol "
    "to IN-9's original images and their foreground masks."
)
BINARY_MASK = "Foreground masks are IN-9's own, binary (fg_mask > 0), at 224x224 as released."
V1_POOLED = "Numbers pooled over images (every image weighs the same), not averaged per class."


def _borrowed(task: str, summary: str, aggregation: str = "class-mean") -> tuple[Protocol, ...]:
    borrowed = Protocol(
        "moayeri2022",
        summary,
        settings={"aggregation": aggregation},
        deviations=(BORROWED.format(task=task), BINARY_MASK),
        sources=("Moayeri et al., CVPR 2022, and their released code",),
    )
    if aggregation != "class-mean":
        return (borrowed,)
    pooled = Protocol(
        "bgbench-v1",
        "bgbench-v1: numbers pooled over images",
        settings={"aggregation": "image-pooled"},
        deviations=(BORROWED.format(task=task), BINARY_MASK, V1_POOLED),
    )
    return borrowed, pooled


IN9_PROTOCOLS = {
    "evaluate": (
        Protocol("in9-paper", "the eight variants at 224x224, BG-GAP", sources=PAPER_SOURCES),
    ),
    "challenge": (
        Protocol(
            "in9-paper",
            "every foreground against every background of the test set",
            sources=PAPER_SOURCES,
        ),
    ),
    "noise": _borrowed(
        "noise",
        "Gaussian noise on the object vs the background; per-class accuracies averaged "
        "over the classes; RFS of the averages",
    ),
    "graying": _borrowed(
        "graying",
        "every background pixel set to 0.5 grey; accuracy pooled over the test images, as "
        "Moayeri et al. count it",
        aggregation="image-pooled",
    ),
    "saliency": _borrowed(
        "saliency",
        "Grad-CAM against the foreground mask; scores grouped by predicted class, mean per "
        "class, then over classes",
    ),
}
