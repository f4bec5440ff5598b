"""PUG: ImageNet's spec (Bordes et al., "PUG: Photorealistic and Semantically Controllable
Synthetic Data for Representation Learning", NeurIPS 2023 Datasets and Benchmarks, arXiv
2308.03977).

Ten variants chosen from the columns of the authors' one table (:mod:`.rows`): ``worlds``
(every asset in every world, nothing else moved) and one per other factor. Labels are the
151 classes; a 1000-class ImageNet model is scored through the authors' map. The headline is
what only this benchmark can measure: the same rendered object, pose and light in 64 worlds,
so the spread of accuracy across worlds and the share of objects whose prediction moves with
the world are the background's effect alone, with no pasted seam or generated object.
"""

from __future__ import annotations

from hf_bgbench.benchmarks.pug_imagenet.facts import (
    AUTHORS_CROP,
    AUTHORS_SIZE,
    FACTORS,
    LICENSE_TEXT,
    SOURCE_REPO,
    VARIANTS,
    WORLDS,
)
from hf_bgbench.benchmarks.pug_imagenet.labels import (
    imagenet_to_pug,
    pug_label_space,
    shared_indices,
)
from hf_bgbench.benchmarks.pug_imagenet.metrics import LevelSpread, LevelTables, SharedIndexNote
from hf_bgbench.benchmarks.pug_imagenet.references import (
    PUG_CITATION,
    PUG_LEADERBOARD,
    PUG_REPORT,
)
from hf_bgbench.benchmarks.pug_imagenet.rows import asset_of
from hf_bgbench.spec import BenchmarkSpec, Protocol

SOURCES = (
    "Bordes et al., NeurIPS 2023 D&B (arXiv 2308.03977), Sec. 4.2 (PUG: ImageNet)",
    "facebookresearch/PUG: PUG_ImageNet/class_to_imagenet_idx.json (the class map), "
    "PUG_ImageNet/PUG_ImageNet.ipynb and the authors' run_pug_imagenet evaluation "
    "(CenterCrop(256), Resize((224, 224)), ImageNet mean/std, argmax over the 1000 logits "
    "through the map, a class outside the 151 wrong)",
)
IMAGENET_MEAN_STD = {
    "mean": (0.485, 0.456, 0.406),
    "std": (0.229, 0.224, 0.225),
    "source": "facebookresearch/PUG run_pug_imagenet: transforms.Normalize, every model",
}
DEVIATIONS = (
    "The authors' code runs every model under CUDA fp16 autocast; bgbench runs the precision "
    "--precision names (IEEE fp32 unless another is asked for, which is then recorded as a "
    "deviation of its own), so a near tie can fall the other way.",
    "The authors score the tarball's factor folders; bgbench chooses the same rows from the "
    "Hub table's columns (each factor's default = the value most rows hold), recorded in "
    "data.assumptions with the defaults found.",
    "CLIP-family models and VLMs: the authors evaluate neither on PUG: ImageNet; bgbench asks "
    "a CLIP over the 151 class names (its spelling, the authors' typos corrected: Kangarou, "
    "Bycicle, Cofee_Mug, Table_Lamb, ...) with 'a photo of a {}.'.",
)

AUTHORS = Protocol(
    name="pug-imagenet",
    summary=(
        "the authors' evaluation: every image centre-cropped to 256 x 256 and resized to "
        "224 x 224, the 1000-way argmax through their class map (a class outside the 151 "
        "wrong); CLIP-family models over the 151 class names"
    ),
    settings={
        "stretch": (AUTHORS_SIZE, AUTHORS_SIZE),
        "center_crop": AUTHORS_CROP,
        "authors_normalisation": IMAGENET_MEAN_STD,
        "zero_shot": {"classes": "benchmark", "templates": ("a photo of a {}.",)},
    },
    deviations=DEVIATIONS,
    sources=SOURCES,
)

BGBENCH = Protocol(
    name="pug-imagenet-bgbench",
    summary=(
        "bgbench's recipe: each model's own eval transform (its resize and centre crop) on "
        "the whole frame; classifiers through the authors' map; zero-shot models over "
        "ImageNet's 1000 classes with OpenAI's 80 prompts, then the map"
    ),
    deviations=(
        "Each model's own eval transform instead of the authors' CenterCrop(256) + "
        "Resize((224, 224)): the whole rendered frame, not its central 256 x 256.",
    ),
    sources=SOURCES,
)

PUG_METRICS = (
    LevelSpread(WORLDS, "world", figure="worlds.png", headline=True),
    LevelTables("factor_levels", tuple(FACTORS)),
    SharedIndexNote("map_collisions", WORLDS, tuple(shared_indices().items())),
)

PUG_IMAGENET = BenchmarkSpec(
    name="pug-imagenet",
    title="PUG: ImageNet: the same rendered objects in 64 worlds",
    label_space=pug_label_space(),
    variants=VARIANTS,
    reference_variant=WORLDS,
    metrics=PUG_METRICS,
    hub_repo=SOURCE_REPO,
    hub_published=True,
    hub_variant_configs=False,
    subset_unit=asset_of,
    download_command="bgbench download pug-imagenet",
    label_maps={"imagenet-1k": imagenet_to_pug},
    tasks=("evaluate",),
    readers=("hf_bgbench.benchmarks.pug_imagenet.release:PugImageNetRelease",),
    images_precropped=False,
    publish_private_only=True,
    citation=PUG_CITATION,
    description=(
        "151 ImageNet classes rendered with Unreal Engine (724 assets): every asset in 64 "
        "worlds with nothing else moved, then camera, pose, size, texture and light one at a "
        "time. Accuracy per world, its spread and the objects the world changes."
    ),
    data_license=f"{LICENSE_TEXT}.",
    short_name="PUG: ImageNet",
    paper_url="https://arxiv.org/abs/2308.03977",
    homepage="https://github.com/facebookresearch/PUG",
    variant_text={
        WORLDS: "every asset in each of the 64 worlds, every other factor at its default",
        **{v: f"{c} moved off its default, the rest at theirs" for v, c in FACTORS.items()},
    },
    hooks={
        "cli_download": "hf_bgbench.benchmarks.pug_imagenet.cli:DOWNLOAD",
        "cached_download": "hf_bgbench.benchmarks.pug_imagenet.download:cached_pug_imagenet",
        "validate_release": "hf_bgbench.benchmarks.pug_imagenet.validate:validate_pug_imagenet",
        "data_departures": "hf_bgbench.benchmarks.pug_imagenet.release:partial_download",
    },
    report=PUG_REPORT,
    leaderboard=PUG_LEADERBOARD,
    protocols={"evaluate": (AUTHORS, BGBENCH)},
)
