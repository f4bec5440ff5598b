"""IN-9's named recipes per task (:class:`hf_bgbench.spec.Protocol`).

``evaluate`` and ``challenge`` follow Xiao et al. (ICLR 2021) and the authors' code
(``MadryLab/backgrounds_challenge``) with one deviation: the authors' ``in9_eval.py`` and
``challenge_eval.py`` wrap every model in ImageNet's mean/std (``tools/model_utils.py``),
bgbench normalises each model with its own (what it was trained with: the sound choice).
The two agree for the torchvision models the paper scored; where they differ the run
records a sentence generated from both pairs (:data:`AUTHORS_NORMALISATION`). Measured on
``tf_efficientnet_lite0`` (mean = std = 0.5) over a 63-image build of the sample photos,
ImageNet's mean/std scores 1.6 to 17.5 points lower per variant, BG-GAP unchanged (see the
docs/fidelity.md for the command). IN-9's paper has no noise or
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
# What the authors' code normalises every model with (ImageNet's mean/std); the tasks
# compare it with the model's own and record a deviation where they differ.
AUTHORS_NORMALISATION = {
    "authors_normalisation": {
        "mean": (0.485, 0.456, 0.406),
        "std": (0.229, 0.224, 0.225),
        "source": "in9_eval.py / challenge_eval.py (tools/model_utils.py)",
    }
}
BORROWED = (
    "IN-9's paper defines no {task} analysis: this applies Moayeri et al. (2022)'s protocol "
    "to IN-9's original images and their foreground masks."
)
BINARY_MASK = "Foreground masks are IN-9's own, binary (fg_mask > 0), at 224x224 as released."
V1_POOLED = "Numbers pooled over images (every image weighs the same), not averaged per class."


def _borrowed(
    task: str, summary: str, aggregation: str = "class-mean", **settings: object
) -> tuple[Protocol, ...]:
    borrowed = Protocol(
        "moayeri2022",
        summary,
        settings={"aggregation": aggregation, **settings},
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
        Protocol(
            "in9-paper",
            # no counts here: --variants may score fewer (recorded beside it)
            "the variants at 224x224 as released (the paper: all eight), BG-GAP",
            settings=AUTHORS_NORMALISATION,
            sources=PAPER_SOURCES,
        ),
    ),
    "challenge": (
        Protocol(
            "in9-paper",
            # no counts here: --max-foregrounds / --max-backgrounds may take fewer (a
            # departure the run records with the numbers it took)
            "the test set's foregrounds against its backgrounds (the paper: every pair)",
            settings=AUTHORS_NORMALISATION,
            sources=PAPER_SOURCES,
        ),
    ),
    "noise": _borrowed(
        "noise",
        "Gaussian noise on the object vs the background; per-class accuracies averaged "
        "over the classes; RFS of the averages",
        # Moayeri et al.'s text takes ten draws, their script one; the task writes the
        # sentence about --trials from the value it ran
        noise_trials={"paper": 10, "authors_code": 1},
    ),
    "graying": _borrowed(
        "graying",
        "every background pixel set to grey (Moayeri et al.'s: 0.5); accuracy pooled over the "
        "test images, as Moayeri et al. count it",
        aggregation="image-pooled",
        # the options Moayeri et al. fix: {option: (their value, what it is)}; the task
        # writes a deviation from the value it used (tasks.deviations.paper_value_deviations)
        paper_values={"gray": (0.5, "Background set to grey")},
    ),
    "saliency": _borrowed(
        "saliency",
        "class activation maps (Moayeri et al.'s: Grad-CAM of the predicted class) against "
        "the foreground mask; scores grouped by predicted class, mean per class, then over "
        "classes",
        paper_values={
            "method": ("gradcam", "Saliency method"),
            "target": ("predicted", "Class explained"),
        },
    ),
}
