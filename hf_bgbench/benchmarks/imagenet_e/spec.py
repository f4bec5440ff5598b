"""ImageNet-E (Li et al., CVPR 2023): ImageNet validation photos with one attribute edited
at a time -- background complexity, random background, object size, position, rotation.
Facts: SPEC §3.

One variant (config) per edit, named as in :data:`.edit_names.IMAGENET_E_EDITS`
(declared there once); every edit holds the same source images (ids). Labels are the 1000
ImageNet-1k classes, so a 1000-class model is scored directly. The metric is the dropped
accuracy DA(edit) = acc(original) − acc(edit) per edit; the headline is its mean over the
paper's attribute edits present (:data:`.edit_names.PAPER_ATTRIBUTE_EDITS`): the λ = 0
inversion control ``bg_inversion`` is reported beside it as a control, and the CPU build's
``bg_texture`` (not a paper edit) per edit only. Also the classes that drop most (over the
same edits) and accuracy along the object-size edits.

The top of the folder: the spec names this folder's modules as hooks (reader, sub-commands,
row checks, ``bgbench edit``), so they never import it; they are handed the spec.
"""

from __future__ import annotations

from hf_bgbench.benchmarks.imagenet_e.edit_names import (
    CONTROL_EDIT,
    IMAGENET_E_EDITS,
    NON_PAPER_EDITS,
    PAPER_ATTRIBUTE_EDITS,
    REFERENCE_EDIT,
)
from hf_bgbench.benchmarks.imagenet_e.references import (
    IMAGENET_E_LEADERBOARD,
    IMAGENET_E_REFERENCES,
    IMAGENET_E_REPORT,
)
from hf_bgbench.labels import full_imagenet_label_space, identity_imagenet_map
from hf_bgbench.scoring import AccuracyCurve, MeanAccuracy, MeanDrop, PairedGap, PerClassDrops
from hf_bgbench.spec import BenchmarkSpec, BuiltLayout, Protocol

IMAGENET_E_EDITED = tuple(e for e in IMAGENET_E_EDITS if e != REFERENCE_EDIT)
IMAGENET_E_READERS = (
    # a `--runs N` build first: its folder holds run-<seed>/ builds, not a release tree
    "hf_bgbench.benchmarks.imagenet_e.runs:ImageNetERuns",
    "hf_bgbench.benchmarks.imagenet_e.release:ImageNetERelease",
)
IMAGENET_E_HOOKS = {
    "cli_build": "hf_bgbench.benchmarks.imagenet_e.cli:BUILD",
    "cli_convert": "hf_bgbench.benchmarks.imagenet_e.cli:CONVERT",
    "cli_commands": "hf_bgbench.benchmarks.imagenet_e.edit_cli:EDIT",
    # plain-sentence deviations of the data scored from the paper's protocol (results.json
    # protocol.deviations): a CPU build, missing edits, another canvas
    "data_deviations": "hf_bgbench.benchmarks.imagenet_e.fidelity:data_deviations",
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
# (the paper's "Full": the object as large as the frame holds it whole). The curve uses these
# nominal rates from the edit names: prediction frames carry no per-image pixel rate; the
# measured rates are in the data's ``object_pixel_rate`` column.
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


IMAGENET_E_PAPER = Protocol(
    "imagenet-e-paper",
    "dropped accuracy acc(original) − acc(edit) per edit through the model's own eval "
    "transform; mean DA over the paper's attribute edits, the λ = 0 inversion reported alone "
    "as the control",
    sources=(
        "Li et al., ImageNet-E, CVPR 2023, §4 and Table 2 (the 'Inver' control column)",
        "alibaba/easyrobust benchmarks/imagenet-e (ImageNet-Editing: resize_obj.py, "
        "change_place.py, image_editor.py)",
    ),
)
"""What every ImageNet-E score follows; how the *data* departs from the paper (a CPU build)
is added per run by the ``data_deviations`` hook (:mod:`.fidelity`)."""


def da_name(edit: str) -> str:
    """The results key of an edit's dropped accuracy."""
    return f"da/{edit}"


def da_label(edit: str) -> str:
    """How an edit's DA is shown; the control and our own edits say they are not averaged."""
    if edit == CONTROL_EDIT:
        return f"DA {edit} (control: λ = 0 inversion round trip; not in the mean)"
    if edit in NON_PAPER_EDITS:
        return f"DA {edit} (not a paper edit; not in the mean)"
    return f"DA {edit}"


def imagenet_e_metrics() -> tuple:
    """Mean DA over the paper's attribute edits (headline, with the DA-per-edit figure), DA
    per edit (the bg_inversion control and bg_texture included, labelled as not averaged),
    the classes that drop most, and accuracy vs object pixel rate."""
    return (
        MeanDrop(
            "mean_da",
            REFERENCE_EDIT,
            PAPER_ATTRIBUTE_EDITS,
            label="mean DA (original − edit, averaged over the paper's attribute edits present)",
            short="mean DA",
            description=(
                "(dropped accuracy acc(original) − acc(edit), averaged over the paper's "
                "attribute edits scored; the bg_inversion control and the CPU-only bg_texture "
                "are reported per edit, not averaged; lower means the model relies less on the "
                "edited attributes)."
            ),
            headline=True,
            figure="dropped_accuracy.png",
            figure_title="dropped accuracy per paper edit",
        ),
        MeanAccuracy(
            "mean_edit_accuracy",
            PAPER_ATTRIBUTE_EDITS,
            label="accuracy on the edited images (mean over the paper's attribute edits present)",
            description="(top-1 accuracy averaged over the paper's attribute edits scored, on "
            "the images every one of them holds; higher means the edits hurt the model less).",
        ),
        *(PairedGap(da_name(e), REFERENCE_EDIT, e, label=da_label(e)) for e in IMAGENET_E_EDITED),
        PerClassDrops("per_class_da", REFERENCE_EDIT, PAPER_ATTRIBUTE_EDITS, top=10),
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
    build_commands=("bgbench build imagenet-e", "bgbench convert imagenet-e"),
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
    report=IMAGENET_E_REPORT,
    leaderboard=IMAGENET_E_LEADERBOARD,
    references=IMAGENET_E_REFERENCES,
    protocols={"evaluate": (IMAGENET_E_PAPER,)},
)
