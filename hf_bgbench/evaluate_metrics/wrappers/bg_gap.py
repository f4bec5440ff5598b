"""BG-GAP and per-variant accuracy on ImageNet-9 (Xiao et al., 2020) as an `evaluate` metric.

Every number comes from the hf_bgbench metric core (``bg_gap_report``); the published module
carries that core inlined, so it needs only numpy and evaluate.
"""

from __future__ import annotations

import datasets
import evaluate

from hf_bgbench.evaluate_metrics.wrappers._common import CheckedInputs
from hf_bgbench.metrics.backgrounds import bg_gap_report

# ImageNet-9 (SPEC §1): the eight test variants and the nine classes in label order.
IN9_VARIANTS = (
    "original",
    "only_bg_b",
    "only_bg_t",
    "no_fg",
    "only_fg",
    "mixed_same",
    "mixed_rand",
    "mixed_next",
)
IN9_CLASSES = (
    "dog",
    "bird",
    "vehicle",
    "reptile",
    "carnivore",
    "insect",
    "instrument",
    "primate",
    "fish",
)

_CITATION = """\
@inproceedings{xiao2021noise,
  title={Noise or Signal: The Role of Image Backgrounds in Object Recognition},
  author={Xiao, Kai Yuanqing and Engstrom, Logan and Ilyas, Andrew and Madry, Aleksander},
  booktitle={International Conference on Learning Representations},
  year={2021},
  note={arXiv:2006.09994}
}
"""

_DESCRIPTION = """\
BG-GAP = accuracy on IN-9 Mixed-Same minus accuracy on IN-9 Mixed-Rand: how much a classifier
gains from backgrounds typical of the foreground's class. Also reports the accuracy of every
IN-9 variant present, acc(mixed_same) - acc(mixed_next), acc(original) - acc(only_fg), and
(config "with_ids") the paper's prediction categories.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `int`): predicted IN-9 class per row, 0-8 (-1 = a model class
        outside IN-9, always wrong). Whole numbers only: 1.7 is an error.
    references (`list` of `int`): the foreground's IN-9 class per row, 0-8.
    variants (`list` of `str`): the IN-9 variant of each row: original, only_bg_b, only_bg_t,
        no_fg, only_fg, mixed_same, mixed_rand or mixed_next. Rows of mixed_same and
        mixed_rand are required.
    ids (`list` of `str`, config "with_ids" only): the source image id of each row, shared by
        the variants of one image; enables `prediction_categories`.
Returns:
    accuracy_<variant> (`float`): accuracy of every variant present, in [0, 1].
    bg_gap (`float`): accuracy_mixed_same - accuracy_mixed_rand, in [-1, 1].
    same_minus_next (`float`): accuracy_mixed_same - accuracy_mixed_next (mixed_next rows).
    original_minus_only_fg (`float`): accuracy_original - accuracy_only_fg (when present).
    prediction_categories (`dict`, config "with_ids"): fractions of images that are
        bg_required, bg_fg_required, bg_irrelevant, bg_fools, other (they sum to 1).
Examples:
    >>> bg_gap = evaluate.load("path/to/bg_gap")  # this folder; "bgbench/bg_gap" once published
    >>> bg_gap.compute(
    ...     predictions=[0, 1, 1, 2],
    ...     references=[0, 1, 1, 1],
    ...     variants=["mixed_same", "mixed_same", "mixed_rand", "mixed_rand"],
    ... )
    {'accuracy_mixed_rand': 0.5, 'accuracy_mixed_same': 1.0, 'bg_gap': 0.5}
"""

_BASE = {
    "predictions": datasets.Value("int64"),
    "references": datasets.Value("int64"),
    "variants": datasets.Value("string"),
}
_CONFIGS = {
    "default": _BASE,
    "with_ids": {**_BASE, "ids": datasets.Value("string")},
}


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class BgGap(CheckedInputs, evaluate.Metric):
    """BG-GAP and per-variant accuracy over long-format IN-9 rows."""

    def _info(self):
        if self.config_name not in _CONFIGS:
            raise ValueError(
                f"Unknown config {self.config_name!r} for bg_gap; use one of {sorted(_CONFIGS)}."
            )
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(_CONFIGS[self.config_name]),
            homepage="https://github.com/MadryLab/backgrounds_challenge",
            reference_urls=["https://arxiv.org/abs/2006.09994"],
        )

    def _compute(self, predictions, references, variants, ids=None):
        return bg_gap_report(
            predictions,
            references,
            variants,
            ids=ids,
            valid_variants=IN9_VARIANTS,
            num_classes=len(IN9_CLASSES),
        )
