"""IN-9's report card and its published numbers, as data (:class:`~hf_bgbench.spec.Headline`,
:class:`~hf_bgbench.spec.Reference`).

Sources: Xiao et al., "Noise or Signal: The Role of Image Backgrounds in Object Recognition"
(ICLR 2021), Table of IN-9 test accuracies, repeated in the README of
github.com/MadryLab/backgrounds_challenge ("Test Accuracy Results on ImageNet-9" and the
"Backgrounds Challenge Leaderboard"). The pre-trained rows are torchvision's ImageNet
checkpoints; timm serves exactly those weights under the ``.tv_in1k`` tags. timm's default
``resnet50`` tag now points at other weights (``resnet50.a1_in1k``), which do not reproduce
95.6 / 86.2 / 78.9: name the tag.
"""

from __future__ import annotations

from hf_bgbench.spec import Headline, Reference

CHALLENGE_ACCURACY = Headline(
    "challenge",
    "challenge_accuracy",
    "Challenge accuracy",
    "%",
    -1,
    config="original",  # the foregrounds (fg_mask); backgrounds: every only_bg_t image
    description="share of foregrounds no background can flip",
)

IN9_REPORT = (
    Headline("evaluate", "accuracy/original", "original", "%", 0),
    Headline("evaluate", "accuracy/mixed_same", "mixed_same", "%", 0),
    Headline("evaluate", "accuracy/mixed_rand", "mixed_rand", "%", 0),
    Headline(
        "evaluate",
        "bg_gap",
        "BG-GAP",
        "pts",
        1,
        description="mixed_same − mixed_rand accuracy on the same foregrounds",
    ),
    CHALLENGE_ACCURACY,
)

IN9_LEADERBOARD = (
    Headline("evaluate", "accuracy/original", "original accuracy", "%", 0),
    Headline("evaluate", "accuracy/mixed_same", "mixed_same accuracy", "%", 0),
    Headline(
        "evaluate",
        "accuracy/mixed_rand",
        "mixed_rand accuracy",
        "%",
        -1,
        description="foregrounds on another class's background: higher means less reliance",
    ),
    CHALLENGE_ACCURACY,
)
"""The Hub leaderboard's tasks: the accuracies the paper and the authors' README print, and
the challenge. BG-GAP (higher = more reliance) is not one: a Hub leaderboard ranks high first
and has no "lower is better"; it stays in the report and each entry's notes."""

_TABLE = "Xiao et al. 2021, IN-9 test accuracies (README of MadryLab/backgrounds_challenge)"
_BOARD = "MadryLab/backgrounds_challenge README, Backgrounds Challenge Leaderboard"
_DATA = "IN-9 test (official release, 4,050 images per variant)"


def _evaluate(model: str, tag: str, o: float, s: float, r: float, gap: float, notes: str = ""):
    return Reference(
        model,
        "evaluate",
        {
            "accuracy/original": o,
            "accuracy/mixed_same": s,
            "accuracy/mixed_rand": r,
            "bg_gap": gap,
        },
        _TABLE,
        model_tag=tag,
        dataset=_DATA,
        notes=notes,
    )


_AUTHORS = "the authors' own checkpoint (trained by the paper's scripts); no Hub tag"
IN9_REFERENCES = (
    _evaluate("VGG16-BN", "vgg16_bn.tv_in1k", 94.3, 83.6, 73.4, 10.2),
    _evaluate("ResNet-50", "resnet50.tv_in1k", 95.6, 86.2, 78.9, 7.3),
    _evaluate("ResNet-152", "resnet152.tv_in1k", 96.7, 89.3, 83.5, 5.8),
    _evaluate("ResNet-50 (trained on IN-9L)", "", 96.4, 89.8, 75.6, 14.2, _AUTHORS),
    _evaluate("ResNet-50 (trained on Mixed-Rand)", "", 73.3, 71.5, 71.3, 0.2, _AUTHORS),
    Reference(
        "ResNet-50",
        "challenge",
        {"challenge_accuracy": 22.3, "accuracy": 95.6},
        _BOARD,
        model_tag="resnet50.tv_in1k",
        dataset=_DATA,
        labels={"accuracy": "Clean acc."},
    ),
    Reference(
        "ResNet-50 (trained on IN-9L)",
        "challenge",
        {"challenge_accuracy": 12.0, "accuracy": 96.4},
        _BOARD,
        dataset=_DATA,
        notes=_AUTHORS,
        labels={"accuracy": "Clean acc."},
    ),
    Reference(
        'always "dog"',
        "challenge",
        {"challenge_accuracy": 11.1},
        'MadryLab/backgrounds_challenge README ("a model that always predicts dog has an '
        'accuracy of 11%")',
        dataset=_DATA,
        notes="a constant classifier: exactly 1/9 = 11.1 %; the README rounds to 11 %",
    ),
)
