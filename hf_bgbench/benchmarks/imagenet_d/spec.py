"""ImageNet-D's spec (Zhang et al., "ImageNet-D: Benchmarking Neural Network Robustness on
Diffusion Synthetic Object", CVPR 2024, arXiv 2403.18775).

Three variants, one per nuisance -- ``background``, ``texture``, ``material`` -- each of its
own generated images (no image is in two subsets, so nothing is paired). Labels are the 113
classes; a 1000-class ImageNet model is scored through the authors' 113 -> 125 map. The
headline is the accuracy on each subset (higher is better), with Wilson intervals.

Two ``evaluate`` protocols. ``imagenet-d`` (the default) is the authors' code point by
point: a classifier's 1000-way top-1 through the map (a class outside the 125 is wrong), a
CLIP-family model over the 113 class names with their one prompt, a generative VLM by their
two-way question (the true class and the image's hard negative from ``questions/``, the
answer matched as their ``compute_accuracy.py`` does, answers naming both or neither left
out and counted). ``imagenet-d-bgbench`` is bgbench's recipe: the zero-shot head over
ImageNet's 1000 classes with OpenAI's 80 prompts, then the map, and a VLM by the ``--vlm-*``
rules.
"""

from __future__ import annotations

from hf_bgbench.benchmarks.imagenet_d.facts import (
    AUTHORS_MAX_NEW_TOKENS,
    CLEAN,
    CLIP_TEMPLATE,
    NEGATIVE,
    OUTER_FIRST,
    PAIR_QUESTION,
    SPLIT,
    SUBSETS,
    VARIANTS,
)
from hf_bgbench.benchmarks.imagenet_d.labels import (
    answer_words,
    imagenet_d_label_space,
    imagenet_to_imagenet_d,
)
from hf_bgbench.benchmarks.imagenet_d.references import (
    IMAGENET_D_CITATION,
    IMAGENET_D_LEADERBOARD,
    IMAGENET_D_REPORT,
)
from hf_bgbench.scoring import UnpairedGap
from hf_bgbench.spec import BenchmarkSpec, BuiltLayout, Protocol

SOURCES = (
    "Zhang et al., CVPR 2024 (arXiv 2403.18775), Sec. 4 (evaluation)",
    "chenshuang-zhang/imagenet_d: evaluate_imagenet_models.py, utils/data_loaders_imgnet_id.py "
    "(classifiers), evaluate_vlm.py (CLIP), LLaVA/llava/serve/eval_imagenet_d.py and "
    "LLaVA/compute_accuracy.py (VQA models), preprocessing/*.txt (the classes and the map)",
)

VLM_DEVIATIONS = (
    "VLM answers are decoded greedily (no sampling); the authors' eval_imagenet_d.py samples "
    "at its default temperature 0.2 with no seed, so their answers differ from run to run.",
    "The VLM sees the image as its processor prepares it (transformers' AutoProcessor and chat "
    "template), not through LLaVA's own conversation templates; the question is the authors' "
    "word for word.",
    "A non-square image is centre-cropped to the processor's square, where LLaVA-1.5's own "
    "process_images pads it to a square (image_aspect_ratio 'pad'); for square images the two "
    "are the same.",
    "Answers are read as text decoded without the tokenizer's special tokens (</s>, "
    "<end_of_turn>), where eval_imagenet_d.py's tokenizer.decode keeps them; the class names "
    "are matched as substrings either way, so a verdict could differ only where a special "
    "token's text held a class name (an independent check: 1 of 31 answer texts changed, no "
    "verdict).",
)

AUTHORS = Protocol(
    name="imagenet-d",
    summary=(
        "the authors' code: classifiers by their 1000-way top-1 through the 113 -> 125 class "
        "map; CLIP-family models over the 113 class names with 'A photo of a {}'; generative "
        "VLMs by the two-way question (true class, hard negative), answers naming both or "
        "neither left out"
    ),
    settings={
        "zero_shot": {"classes": "benchmark", "templates": (CLIP_TEMPLATE,)},
        "vlm_question": {
            "prompt": PAIR_QUESTION,
            "answer_words": answer_words(),
            "outer_first": OUTER_FIRST,
            "max_new_tokens": AUTHORS_MAX_NEW_TOKENS,
            "source": "chenshuang-zhang/imagenet_d LLaVA/llava/serve/eval_imagenet_d.py, "
            "LLaVA/compute_accuracy.py",
            "column": NEGATIVE,
            "deviations": VLM_DEVIATIONS,
        },
    },
    sources=SOURCES,
)

BGBENCH = Protocol(
    name="imagenet-d-bgbench",
    summary=(
        "bgbench's recipe: classifiers as the authors'; zero-shot models over ImageNet's 1000 "
        "classes (OpenAI's 80 prompts) through the class map; generative VLMs by --vlm-*"
    ),
    deviations=(
        "Zero-shot models classify among ImageNet's 1000 classes with OpenAI's 80 prompt "
        "templates and are mapped to the 113 classes, not among the 113 ImageNet-D names with "
        "the authors' one prompt.",
        "Generative VLMs are scored by bgbench's --vlm-protocol rule over the 113 classes, not "
        "by the authors' two-way question with a hard negative.",
    ),
    sources=SOURCES,
)

IMAGENET_D_METRICS = tuple(
    UnpairedGap(
        f"drop/{subset}",
        CLEAN,
        subset,
        label=f"drop: {CLEAN} − {subset} (the classes {subset} holds)",
        description=(
            f"(accuracy on real ImageNet photos of the classes the {subset} subset holds minus "
            f"accuracy on {subset}; different images, so Newcombe's interval of two "
            "independent proportions; higher means the nuisance costs the model more)."
        ),
    )
    for subset in SUBSETS
)

IMAGENET_D_LAYOUT = BuiltLayout(
    image_size=None,  # generated images at their own size
    balanced=False,  # the subsets hold as many images per class as generation kept
    splits=(SPLIT,),
    masks_shared=False,
    required_variants=SUBSETS,  # the clean photos are optional
    row_checks="hf_bgbench.benchmarks.imagenet_d.validate:check_imagenet_d_split",
    checks="imagenet-d: every hard negative is an ImageNet-D class other than the image's own",
)

IMAGENET_D = BenchmarkSpec(
    name="imagenet-d",
    title="ImageNet-D: objects generated against new backgrounds, textures and materials",
    label_space=imagenet_d_label_space(),
    variants=VARIANTS,
    reference_variant=SUBSETS[0],
    metrics=IMAGENET_D_METRICS,
    hub_repo="bgbench/imagenet-d",
    download_command="bgbench download imagenet-d",
    build_commands=("bgbench convert imagenet-d",),
    label_maps={"imagenet-1k": imagenet_to_imagenet_d},
    tasks=("evaluate",),
    readers=("hf_bgbench.benchmarks.imagenet_d.release:ImageNetDRelease",),
    images_precropped=False,  # the model's own eval transform, as the authors' code applies
    citation=IMAGENET_D_CITATION,
    description=(
        "ImageNet objects generated whole by a diffusion model against a new background, "
        "texture or material (113 classes); accuracy per nuisance, by the authors' protocol "
        "for classifiers, CLIP and VLMs."
    ),
    short_name="ImageNet-D",
    paper_url="https://arxiv.org/abs/2403.18775",
    homepage="https://github.com/chenshuang-zhang/imagenet_d",
    layout=IMAGENET_D_LAYOUT,
    hooks={
        "cli_convert": "hf_bgbench.benchmarks.imagenet_d.cli:CONVERT",
        "cli_download": "hf_bgbench.benchmarks.imagenet_d.cli:DOWNLOAD",
        "cached_download": "hf_bgbench.benchmarks.imagenet_d.download:cached_imagenet_d",
    },
    report=IMAGENET_D_REPORT,
    leaderboard=IMAGENET_D_LEADERBOARD,
    protocols={"evaluate": (AUTHORS, BGBENCH)},
)
