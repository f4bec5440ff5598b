"""The watermark benchmark's spec: ImageNet-W-style watermark reliance (Li et al., CVPR 2023,
arXiv 2212.04825).

Two variants over the same images (ids): ``original`` and ``watermark``. Labels are the 1000
ImageNet-1k classes, so a 1000-class model is scored directly. Metrics, in report order:

- ``watermark_gap`` (headline) = acc(original) − acc(watermark), paired over the same images:
  the accuracy a model loses to the watermark. The paper's "IN-W gap" is the same number with
  the other sign (acc(IN-W) − acc(IN)).
- ``carton_flip_rate``: among the images *not* predicted "carton" without the watermark, the
  share predicted "carton" with it (the shortcut the paper found: ImageNet's carton photos
  often carry watermarks).
- ``carton_gap``: the paper's "carton gap", accuracy on the photos of class carton with the
  watermark minus without (null when the data holds no carton photo).
"""

from __future__ import annotations

from hf_bgbench.benchmarks.watermark.facts import (
    CARTON_INDEX,
    CROP,
    ORIGINAL,
    SPLIT,
    VARIANTS,
    WATERMARKED,
)
from hf_bgbench.benchmarks.watermark.metrics import ClassAccuracyGap, FlipsToClass
from hf_bgbench.labels import full_imagenet_label_space, identity_imagenet_map
from hf_bgbench.scoring import PairedGap
from hf_bgbench.spec import BenchmarkSpec, BuiltLayout, Headline

WATERMARK_CITATION = """@inproceedings{li2023whac,
  title={A Whac-A-Mole Dilemma: Shortcuts Come in Multiples Where Mitigating One Amplifies
         Others},
  author={Li, Zhiheng and Evtimov, Ivan and Gordo, Albert and Hazirbas, Caner and Hassner, Tal
          and Ferrer, Cristian Canton and Xu, Chenliang and Ibrahim, Mark},
  booktitle={Proceedings of the IEEE/CVF Conference on Computer Vision and Pattern
             Recognition (CVPR)},
  year={2023},
  url={https://arxiv.org/abs/2212.04825}
}"""

WATERMARK_METRICS = (
    PairedGap(
        "watermark_gap",
        ORIGINAL,
        WATERMARKED,
        label="watermark gap (original − watermark)",
        short="WM-GAP",
        description=(
            "(accuracy on the original images minus the same images with the ImageNet-W "
            "watermark; lower means less reliance on the watermark shortcut)."
        ),
        headline=True,
    ),
    FlipsToClass(
        "carton_flip_rate",
        ORIGINAL,
        WATERMARKED,
        CARTON_INDEX,
        label='flipped to "carton" by the watermark',
        description="(share of the images not predicted carton without the watermark that "
        "are predicted carton with it).",
    ),
    ClassAccuracyGap(
        "carton_gap",
        WATERMARKED,
        ORIGINAL,
        CARTON_INDEX,
        label="carton gap (carton photos: watermark − original)",
        description="(the paper's carton gap: accuracy on the carton photos with the watermark "
        "minus without).",
    ),
)

# What the builder writes and `bgbench validate` checks (besides the generic checks: both
# configs, split test, labels, the same ids in the same order, every image CROP x CROP).
WATERMARK_LAYOUT = BuiltLayout(
    image_size=(CROP, CROP),
    balanced=False,  # any photos: the classes hold what the source folder held
    splits=(SPLIT,),
    row_checks="hf_bgbench.benchmarks.watermark.validate:check_watermark_split",
    checks="watermark: each image differs from its original only where the text is drawn",
)

WATERMARK_REPORT = (
    Headline("evaluate", "watermark_gap", "WM-GAP", "pts", 1, description="original − watermark"),
)

WATERMARK_LEADERBOARD = (
    Headline(
        "evaluate",
        f"accuracy/{WATERMARKED}",
        "accuracy on watermarked images",
        "%",
        -1,
        description="top-1 accuracy with the watermark drawn on",
    ),
)
"""The Hub leaderboard's task; the watermark gap (higher = more reliance) stays in the report."""

WATERMARK = BenchmarkSpec(
    name="watermark",
    title="ImageNet-W-style watermark reliance",
    label_space=full_imagenet_label_space(),
    variants=VARIANTS,
    reference_variant=ORIGINAL,
    hub_repo="bgbench/watermark",
    build_commands=("bgbench build watermark",),
    label_maps={"imagenet-1k": identity_imagenet_map},
    metrics=WATERMARK_METRICS,
    tasks=("evaluate",),
    report=WATERMARK_REPORT,
    leaderboard=WATERMARK_LEADERBOARD,
    aligned_variants=VARIANTS,
    # Stored after Resize(256) + CenterCrop(224), as the paper evaluates: only resized to the
    # model's input size (when it differs) and normalised.
    images_precropped=True,
    citation=WATERMARK_CITATION,
    short_name="ImageNet-W",
    layout=WATERMARK_LAYOUT,
    hooks={"cli_build": "hf_bgbench.benchmarks.watermark.cli:BUILD"},
    description=(
        "ImageNet photos with and without the ImageNet-W text watermark (the imagenet-w "
        "package); watermark gap = acc(original) − acc(watermark), plus the share flipped to "
        '"carton".'
    ),
)
