"""Dropped accuracy under ImageNet-E attribute edits (Li et al., 2023) as an `evaluate` metric.

Every number comes from the hf_bgbench metric core (``dropped_accuracy_report``); the
published module carries that core inlined, so it needs only numpy and evaluate.
"""

from __future__ import annotations

import datasets
import evaluate

from hf_bgbench.evaluate_metrics.wrappers._common import CheckedInputs
from hf_bgbench.metrics.edits import IMAGENET_E_EDITS, dropped_accuracy_report

# ImageNet-E (SPEC §3) is scored in ImageNet-1k's label space.
IMAGENET_NUM_CLASSES = 1000

_CITATION = """\
@inproceedings{li2023imagenet,
  title={ImageNet-E: Benchmarking Neural Network Robustness via Attribute Editing},
  author={Li, Xiaodan and Chen, Yuefeng and Zhu, Yao and Wang, Shuhui and Zhang, Rong and
          Xue, Hui},
  booktitle={Proceedings of the IEEE/CVF Conference on Computer Vision and Pattern
             Recognition (CVPR)},
  year={2023}
}
"""

_DESCRIPTION = """\
Dropped accuracy (DA) = accuracy on the original images minus accuracy on an edited copy of
them, per ImageNet-E edit (background complexity, random background, object size, position,
rotation), and its mean over the edits.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `int`): predicted class per row (whole numbers only).
    references (`list` of `int`): true class per row.
    edits (`list` of `str`): the edit of each row; "original" rows are required. Default
        names: {edits}.
    reference_edit (`str`, compute keyword, default "original"): the unedited rows' name.
    known_edits (`list` of `str` or `None`, compute keyword): accepted edit names (default
        the ImageNet-E names above); `None` accepts any name (e.g. custom texture edits).
    num_classes (`int` or `None`, compute keyword, default 1000 = ImageNet-1k): classes
        must lie in [0, num_classes); None lifts the upper bound.
Returns:
    accuracy (`dict`): edit -> accuracy, in [0, 1], "original" included.
    dropped_accuracy (`dict`): edit -> acc(original) - acc(edit), in [-1, 1].
    mean_dropped_accuracy (`float`): unweighted mean of `dropped_accuracy` over the edits.
Examples:
    >>> da = evaluate.load("path/to/dropped_accuracy")  # "bgbench/dropped_accuracy" once published
    >>> da.compute(
    ...     predictions=[3, 7, 3, 0],
    ...     references=[3, 7, 3, 7],
    ...     edits=["original", "original", "size_0.05", "size_0.05"],
    ... )
    {{'accuracy': {{'original': 1.0, 'size_0.05': 0.5}}, 'dropped_accuracy': {{'size_0.05': 0.5}}, \
'mean_dropped_accuracy': 0.5}}
""".format(edits=", ".join(IMAGENET_E_EDITS))


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class DroppedAccuracy(CheckedInputs, evaluate.Metric):
    """Per-edit and mean dropped accuracy over long-format ImageNet-E rows."""

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "predictions": datasets.Value("int64"),
                    "references": datasets.Value("int64"),
                    "edits": datasets.Value("string"),
                }
            ),
            homepage="https://arxiv.org/abs/2303.17096",
            reference_urls=["https://arxiv.org/abs/2303.17096"],
        )

    def _compute(
        self,
        predictions,
        references,
        edits,
        reference_edit="original",
        known_edits=IMAGENET_E_EDITS,
        num_classes=IMAGENET_NUM_CLASSES,
    ):
        return dropped_accuracy_report(
            predictions,
            references,
            edits,
            reference_edit=reference_edit,
            known_edits=known_edits,
            num_classes=num_classes,
        )
