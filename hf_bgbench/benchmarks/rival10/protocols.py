"""RIVAL10's named recipes per task (:class:`hf_bgbench.spec.Protocol`): the paper's, the
default, and bgbench-v1, the recipe of bgbench before it followed the authors point by point.

Sources: the paper (Moayeri et al., CVPR 2022, §3-4) where its text is explicit, else the
authors' released code (``mmoayeri/RIVAL10``, branch ``gh-pages``: ``datasets/rival10.py``,
``compute_noise_robustness.py``, ``noise_analysis_plots.py``, ``bg_fg_saliency.py``,
``saliency_alignment_plots.py``). Settings read by the tasks: ``stretch`` (every photo and
mask resized whole to this size, no crop), ``aggregation`` (``class-mean`` or
``image-pooled``), ``head`` (the keyword arguments of the linear head the probe label map
fits: its ``recipe``). Each task's settings dataclass (``hf_bgbench/tasks/<task>/settings.py``)
checks these mappings when the benchmark registers: a misspelt key fails there.
"""

from __future__ import annotations

from hf_bgbench.spec import Protocol

PAPER = "rival10-paper"
PAPER_SOURCES = (
    "Moayeri et al., CVPR 2022, §3 (noise analysis, RFS) and §4 (saliency alignment)",
    "mmoayeri/RIVAL10@gh-pages datasets/rival10.py: Resize((224, 224)), no crop",
    "mmoayeri/RIVAL10@gh-pages noise_analysis_plots.py: per-class accuracy, mean over classes",
    "mmoayeri/RIVAL10@gh-pages bg_fg_saliency.py, saliency_alignment_plots.py",
    "mmoayeri/RIVAL10@gh-pages finetuner.py (fg_only), attr_importance.py: graying",
)
STRETCH = (224, 224)
# the linear head on frozen features (when the label map is the probe, the default): the
# authors' finetuner.py recipe; its own deviations land in results.json's probe record
PAPER_HEAD = {"recipe": "adam-augmented-v1"}
SEEDED_NOISE = (
    "Each image's noise at each level comes from its own seeded generator (reproducible and "
    "independent of batch size); the authors draw it from the global generator in loader "
    "order."
)
BINARY_NOISE_MASK = (
    "Object masks are resized with nearest neighbour and stay binary (m in {0, 1}, as the "
    "paper writes x + n ⊙ m); the authors' noise code multiplies the noise by the bilinearly "
    "resized, soft mask, so edge pixels get partial noise."
)
# How many noise draws per image and level the paper's text and the authors' released
# script take; the noise task writes the sentence about --trials from the value it ran.
NOISE_TRIALS = {"noise_trials": {"paper": 10, "authors_code": 1}}
# Options the paper fixes: {option: (the paper's value, what it is)}; the task writes a
# deviation from the value it used where it differs (tasks.deviations.paper_value_deviations).
GRAY_VALUES = {"paper_values": {"gray": (0.5, "Background set to grey")}}
SALIENCY_VALUES = {
    "paper_values": {
        "method": ("gradcam", "Saliency method"),
        "target": ("predicted", "Class explained"),
    }
}
ATTRIBUTION_VALUES = {
    "paper_values": {
        "top_k": (10, "Top-activating images per class and feature"),
        "tau": (0.5, "Grad-CAM binarised at this fraction of its maximum"),
    }
}
BINARY_SALIENCY_MASK = (
    "Object masks are resized with nearest neighbour and binarised at 128; the authors "
    "binarise the bilinearly resized mask with > 0, which counts every partly covered edge "
    "pixel as object."
)
GRAY_MASK = (
    "The object is kept under the nearest-neighbour resized binary mask; the authors blend "
    "with the bilinearly resized soft mask (x m + 0.5 (1 - m))."
)
V1_GEOMETRY = (
    "Images and masks take the model's own eval resize + centre crop; the authors stretch "
    "every photo to 224x224 without a crop, so the crop here removes background at the "
    "borders."
)
V1_HEAD = (
    "The linear head is multinomial logistic regression on standardised features fitted by "
    "L-BFGS with an L2 strength chosen on held-out train images (linear-probe-v1, fast); the "
    "authors train a linear layer with Adam on augmented [0, 1] photos for 10 epochs."
)
V1_POOLED = (
    "Accuracies are pooled over images (every noisy copy weighs the same); the authors take "
    "the accuracy per class, then the mean over the classes."
)
V1_SUMMARY = "bgbench-v1: the model's eval resize + centre crop, numbers pooled over images"


def _paper(
    summary: str, *deviations: str, aggregation: str | None = "class-mean", **settings: object
) -> Protocol:
    # aggregation None: the task has one way to count (evaluate: over the images it scores),
    # so the recipe records none rather than one the task would not follow
    pooling = {} if aggregation is None else {"aggregation": aggregation}
    return Protocol(
        PAPER,
        summary,
        settings={"stretch": STRETCH, **pooling, "head": PAPER_HEAD, **settings},
        deviations=deviations,
        sources=PAPER_SOURCES,
    )


def _v1(*deviations: str, aggregation: str | None = "image-pooled") -> Protocol:
    pooling = {} if aggregation is None else {"aggregation": aggregation}
    return Protocol(
        "bgbench-v1",
        V1_SUMMARY,
        settings={**pooling, "head": {"recipe": "linear-probe-v1"}},
        deviations=(V1_GEOMETRY, V1_HEAD, *deviations),
    )


RIVAL10_PROTOCOLS = {
    "evaluate": (
        _paper(
            "the authors' 224x224 stretch of every photo; accuracy of the scoring head over "
            "the test images",
            aggregation=None,
        ),
        _v1(aggregation=None),
    ),
    "noise": (
        _paper(
            # no levels or trials here: the run's own values are recorded beside it, and
            # the task writes a sentence where they differ from the paper's
            "Gaussian noise on the object vs the background, per noise level and trial; "
            "per-class accuracies averaged over the classes; RFS of the averages",
            BINARY_NOISE_MASK,
            SEEDED_NOISE,
            **NOISE_TRIALS,
        ),
        _v1(V1_POOLED, BINARY_NOISE_MASK, SEEDED_NOISE),
    ),
    "saliency": (
        _paper(
            "class activation maps (the paper's: Grad-CAM of the predicted class) against "
            "the object mask on 224x224 stretched photos; scores grouped by predicted class, "
            "NaN-skipping mean per class, then the mean over classes",
            BINARY_SALIENCY_MASK,
            **SALIENCY_VALUES,
        ),
        _v1(BINARY_SALIENCY_MASK),
    ),
    "graying": (
        _paper(
            "every background pixel (and, alone, each attribute) set to grey (the paper's: "
            "0.5) on 224x224 stretched photos; accuracy pooled over the test images, as the "
            "authors' finetuner.py and attr_importance.py count it, of the scoring head and "
            "of a head re-fitted (20 epochs) on grey-background train photos (Fig. 8)",
            GRAY_MASK,
            aggregation="image-pooled",
            **GRAY_VALUES,
        ),
        _v1(GRAY_MASK),
    ),
    "attribution": (
        Protocol(
            PAPER,
            "per class, the top train images of each penultimate feature (the paper's: 10); "
            "Grad-CAM of the feature binarised at a fraction of its max (the paper's: 0.5); "
            "mean IoU with each attribute mask; the best feature per class and attribute, "
            "then its IoU on the test split (Fig. 10)",
            settings={"stretch": STRETCH, "head": PAPER_HEAD, **ATTRIBUTION_VALUES},
            deviations=(
                "The authors release no code for this analysis (Sec. 5), so where the paper "
                "is silent the choices are bgbench's: top images are a class's train images "
                "by true label, highest activation first, ties to the earlier image.",
                "An image among a feature's top images that lacks the attribute counts IoU 0 "
                "in the mean over the top images, as the authors' eps-IoU (utils.py) gives "
                "for an empty mask against a non-empty map.",
                "The best feature is chosen per class and attribute, among the features whose "
                "top images hold the attribute at least once; ties go to the lower index.",
                "On the test split the best feature's IoU is taken on the class's top test "
                "images by that feature's activation, as many as on train (--top-k).",
                "Grad-CAM explains the layer the saliency task explains (a CNN's last feature "
                "map, a ViT's last block norm1) with respect to the feature's activation.",
                "Attribute masks are resized with nearest neighbour and binarised at 128; the "
                "authors' loader (local_rival10.py) resizes them smoothly and keeps every "
                "non-zero pixel, which widens each mask at its edges.",
            ),
            sources=(
                "Moayeri et al., CVPR 2022, §5 (neural feature attribution) and Fig. 10",
                "mmoayeri/RIVAL10@gh-pages datasets/rival10.py: Resize((224, 224)), no crop",
                "mmoayeri/RIVAL10@gh-pages utils.py: binarize (x / max > 0.5), IoU",
            ),
        ),
    ),
}
