"""ImageNet-E (Li et al., CVPR 2023): ImageNet validation photos with one attribute edited
at a time -- background complexity, random background, object size, position, rotation.
Facts: SPEC §3.

One variant (config) per edit, named as in :data:`.edit_names.IMAGENET_E_EDITS`
(declared there once); every edit holds the same source images (ids). Labels are the 1000
ImageNet-1k classes, so a 1000-class model is scored directly. The metric is the dropped
accuracy DA(edit) = acc(original) − acc(edit) per edit, its mean over the edits present
(the headline), the classes that drop most, and accuracy along the object-size edits.

The top of the folder: the spec names this folder's modules as hooks (reader, sub-commands,
row checks, ``bgbench edit``), so they never import it; they are handed the spec.
"""

from __future__ import annotations

from hf_bgbench.benchmarks.imagenet_e.edit_names import IMAGENET_E_EDITS, REFERENCE_EDIT
from hf_bgbench.labels import full_imagenet_label_space, identity_imagenet_map
from hf_bgbench.scoring import AccuracyCurve, MeanDrop, PairedGap, PerClassDrops
from hf_bgbench.spec import BenchmarkSpec, BuiltLayout

IMAGENET_E_EDITED = tuple(e for e in IMAGENET_E_EDITS if e != REFERENCE_EDIT)
IMAGENET_E_READERS = ("hf_bgbench.benchmarks.imagenet_e.release:ImageNetERelease",)
IMAGENET_E_HOOKS = {
    "cli_build": "hf_bgbench.benchmarks.imagenet_e.cli:register_build",
    "cli_convert": "hf_bgbench.benchmarks.imagenet_e.cli:register_convert",
    "cli_commands": "hf_bgbench.benchmarks.imagenet_e.edit_cli:register",
}
IMAGENET_E_LAYOUT = BuiltLayout(
    image_size=None,
    balanced=False,
    splits=("test",),
    row_checks="hf_bgbench.benchmarks.imagenet_e.validate:check_imagenet_e_split",
    masks_shared=False,  # the mask is the object's after the edit
    required_variants=("original",),  # a release or a CPU build holds a subset of the edits
    checks="'original' present (absent edits noted), ids shared across edits, "
    "object_pixel_rate in [0, 1] and equal to the mask's foreground share, edit_params JSON",
)

# The object-size edits in order of shrinking object, with their nominal object pixel rate
# (the paper's "Full" keeps the object at its own size). The curve uses these nominal rates
# from the edit names: prediction frames carry no per-image pixel rate; the measured rates are
# in the data's ``object_pixel_rate`` column.
SIZE_POINTS = (
    ("size_full", "Full"),
    ("size_0.1", "0.1"),
    ("size_0.08", "0.08"),
    ("size_0.05", "0.05"),
)

IMAGENET_E_CITATION = """@inproceedings{li2023imagenet,
  title={ImageNet-E: Benchmarking Neural Network Robustness via Attribute Editing},
  author={Li, Xiaodan and Chen, Yuefeng and Zhu, Yao and Wang, Shuhui and Zhang, Rong and
          Xue, Hui},
  booktitle={Proceedings of the IEEE/CVF Conference on Computer Vision and Pattern
             Recognition (CVPR)},
  year={2023}
}"""


def da_name(edit: str) -> str:
    """The results key of an edit's dropped accuracy."""
    return f"da/{edit}"


def imagenet_e_metrics() -> tuple:
    """Mean DA (headline, with the DA-per-edit figure), DA per edit, the classes that drop
    most, and accuracy vs object pixel rate."""
    return (
        MeanDrop(
            "mean_da",
            REFERENCE_EDIT,
            IMAGENET_E_EDITED,
            label="mean DA (original − edit, averaged over the edits present)",
            short="mean DA",
            description=(
                "(dropped accuracy acc(original) − acc(edit), averaged over the edits scored; "
                "lower means the model relies less on the edited attribute)."
            ),
            headline=True,
            figure="dropped_accuracy.png",
            figure_title="dropped accuracy per edit",
        ),
        *(PairedGap(da_name(e), REFERENCE_EDIT, e, label=f"DA {e}") for e in IMAGENET_E_EDITED),
        PerClassDrops("per_class_da", REFERENCE_EDIT, IMAGENET_E_EDITED, top=10),
        AccuracyCurve(
            "accuracy_vs_object_pixel_rate",
            SIZE_POINTS,
            REFERENCE_EDIT,
            title="accuracy vs object pixel rate (size edits)",
            xlabel="object pixel rate (nominal, from the edit name)",
            figure="accuracy_vs_object_size.png",
        ),
    )


IMAGENET_E = BenchmarkSpec(
    name="imagenet-e",
    title="ImageNet-E: attribute editing (background, size, position, direction)",
    label_space=full_imagenet_label_space(),
    variants=IMAGENET_E_EDITS,
    reference_variant=REFERENCE_EDIT,
    hub_repo="bgbench/imagenet-e",
    label_maps={"imagenet-1k": identity_imagenet_map},
    metrics=imagenet_e_metrics(),
    tasks=("evaluate",),
    readers=IMAGENET_E_READERS,
    aligned_variants=IMAGENET_E_EDITS,
    mask_variant=REFERENCE_EDIT,
    mask_column="mask",
    images_precropped=False,  # photos: the model's own eval transform
    citation=IMAGENET_E_CITATION,
    description=(
        "ImageNet photos with one attribute edited at a time (background complexity, "
        "random background, object size, position, rotation); dropped accuracy "
        "DA = acc(original) − acc(edit) per edit and averaged."
    ),
    short_name="ImageNet-E",
    paper_url="https://arxiv.org/abs/2303.17096",
    evaluate_metrics=("dropped_accuracy",),
    layout=IMAGENET_E_LAYOUT,
    hooks=IMAGENET_E_HOOKS,
)
