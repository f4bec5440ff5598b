"""RIVAL10 (Moayeri et al., CVPR 2022): ten CIFAR-10-like classes of ImageNet images with
object masks, 18 attributes and attribute masks. Facts: SPEC §2.

The paper scores a model through a linear head on its frozen penultimate features, fitted on
the train split (the ``probe`` label map, the default); ``imagenet`` maps a 1000-class model's
20 source ImageNet classes zero-shot.

The top of the folder: the spec names this folder's modules as hooks (reader, cached
download, sub-commands, row checks), so they never import it; they are handed the spec.
"""

from __future__ import annotations

from hf_bgbench.benchmarks.rival10.labels import imagenet_to_rival10, rival10_label_space
from hf_bgbench.benchmarks.rival10.protocols import RIVAL10_PROTOCOLS
from hf_bgbench.benchmarks.rival10.references import RIVAL10_LEADERBOARD, RIVAL10_REPORT
from hf_bgbench.spec import BenchmarkSpec, BuiltLayout

RIVAL10_VARIANTS = ("ordinary",)
RIVAL10_TASKS = ("evaluate", "noise", "saliency", "graying", "attribution")
RIVAL10_READERS = ("hf_bgbench.benchmarks.rival10.release:Rival10Release",)
OBJECT_MASK = "object_mask"
RIVAL10_HOOKS = {
    "cached_download": "hf_bgbench.benchmarks.rival10.download:cached_rival10_release",
    "cli_convert": "hf_bgbench.benchmarks.rival10.cli:CONVERT",
    "cli_download": "hf_bgbench.benchmarks.rival10.cli:DOWNLOAD",
}
RIVAL10_LAYOUT = BuiltLayout(
    image_size=None,
    mask_column=OBJECT_MASK,
    balanced=False,
    splits=("train", "test"),
    row_checks="hf_bgbench.benchmarks.rival10.validate:check_rival10_split",
    checks="the 18 attribute names, attribute masks only for present attributes, merged "
    "masks, wnids matching labels",
)
"""Photos at their own size with an object mask, unbalanced classes, both splits, and the
attribute checks of :mod:`.validate`."""

RIVAL10_CITATION = """@inproceedings{moayeri2022comprehensive,
  title={A Comprehensive Study of Image Classification Model Sensitivity to Foregrounds,
         Backgrounds, and Visual Attributes},
  author={Moayeri, Mazda and Pope, Phillip and Balaji, Yogesh and Feizi, Soheil},
  booktitle={Proceedings of the IEEE/CVF Conference on Computer Vision and Pattern
             Recognition (CVPR)},
  year={2022}
}"""

RIVAL10 = BenchmarkSpec(
    name="rival10",
    title="RIVAL10",
    label_space=rival10_label_space(),
    variants=RIVAL10_VARIANTS,
    reference_variant="ordinary",
    hub_repo="bgbench/rival10",
    label_maps={"imagenet-1k": imagenet_to_rival10},
    tasks=RIVAL10_TASKS,
    readers=RIVAL10_READERS,
    images_precropped=False,  # photos at their own size (the paper protocol stretches them)
    citation=RIVAL10_CITATION,
    description=(
        "Ten classes of ImageNet images with object masks, 18 attributes and attribute "
        "masks; noise analysis (RFS) and saliency alignment."
    ),
    mask_variant="ordinary",
    mask_column=OBJECT_MASK,
    default_label_map="probe",
    train_split="train",
    publish_private_only=True,  # the release's licence forbids redistribution (SPEC §2)
    download_command="bgbench download rival10",
    build_commands=("bgbench convert rival10",),
    short_name="RIVAL10",
    paper_url="https://arxiv.org/abs/2201.10766",
    evaluate_metrics=("rfs",),
    layout=RIVAL10_LAYOUT,
    hooks=RIVAL10_HOOKS,
    report=RIVAL10_REPORT,
    leaderboard=RIVAL10_LEADERBOARD,
    masked_source="RIVAL10 Hub folder",
    protocols=RIVAL10_PROTOCOLS,
)
