"""Dropped accuracy under ImageNet-E attribute edits (Li et al., CVPR 2023) as an `evaluate`
metric.

Every number comes from the hf_bgbench metric core (``dropped_accuracy_report``); the
published module carries that core inlined and the benchmark's facts written in, so it needs
only numpy and evaluate.
"""

from __future__ import annotations

import datasets
import evaluate

from hf_bgbench.evaluate_metrics.facts import benchmark_facts
from hf_bgbench.evaluate_metrics.wrappers._common import CheckedInputs
from hf_bgbench.metrics.edits import dropped_accuracy_report

# From the spec of the benchmark that lists this metric (ImageNet-E, SPEC §3), written in as
# values when the module is generated: names, citation, the edit names (its variants, the
# unedited reference first) and its classes (ImageNet-1k's).
BENCHMARK = benchmark_facts("dropped_accuracy")

_SHORT = BENCHMARK["short_name"]
_REFERENCE = BENCHMARK["reference_variant"]
_EDITS = ", ".join(BENCHMARK["variants"])
_EDIT = BENCHMARK["variants"][-1]  # an edit for the example

_DESCRIPTION = f"""\
Dropped accuracy (DA) = accuracy on the {_REFERENCE} images minus accuracy on an edited copy
of them, per {_SHORT} edit, and its mean over the edits.

{BENCHMARK["title"]}: {BENCHMARK["description"]}
"""

_KWARGS_DESCRIPTION = f"""
Args:
    predictions (`list` of `int`): predicted class per row (whole numbers only).
    references (`list` of `int`): true class per row.
    edits (`list` of `str`): the edit of each row; "{_REFERENCE}" rows are required. Default
        names: {_EDITS}.
    reference_edit (`str`, compute keyword, default "{_REFERENCE}"): the unedited rows' name.
    known_edits (`list` of `str` or `None`, compute keyword): accepted edit names (default
        the {_SHORT} names above); `None` accepts any name (e.g. custom texture edits).
    num_classes (`int` or `None`, compute keyword, default {BENCHMARK["num_classes"]}): classes
        must lie in [0, num_classes); None lifts the upper bound.
Returns:
    accuracy (`dict`): edit -> accuracy, in [0, 1], "{_REFERENCE}" included.
    dropped_accuracy (`dict`): edit -> acc({_REFERENCE}) - acc(edit), in [-1, 1].
    mean_dropped_accuracy (`float`): unweighted mean of `dropped_accuracy` over the edits.
Examples:
    >>> da = evaluate.load("path/to/dropped_accuracy")  # "bgbench/dropped_accuracy" once published
    >>> da.compute(
    ...     predictions=[3, 7, 3, 0],
    ...     references=[3, 7, 3, 7],
    ...     edits=["{_REFERENCE}", "{_REFERENCE}", "{_EDIT}", "{_EDIT}"],
    ... )
    {{'accuracy': {{'{_REFERENCE}': 1.0, '{_EDIT}': 0.5}},
     'dropped_accuracy': {{'{_EDIT}': 0.5}}, 'mean_dropped_accuracy': 0.5}}
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class DroppedAccuracy(CheckedInputs, evaluate.Metric):
    """Per-edit and mean dropped accuracy over long-format rows, one edit name per row."""

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=BENCHMARK["citation"],
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "predictions": datasets.Value("int64"),
                    "references": datasets.Value("int64"),
                    "edits": datasets.Value("string"),
                }
            ),
            homepage=BENCHMARK["homepage"],
            reference_urls=[BENCHMARK["paper_url"]],
        )

    def _compute(
        self,
        predictions,
        references,
        edits,
        reference_edit=_REFERENCE,
        known_edits=BENCHMARK["variants"],
        num_classes=BENCHMARK["num_classes"],
    ):
        return dropped_accuracy_report(
            predictions,
            references,
            edits,
            reference_edit=reference_edit,
            known_edits=known_edits,
            num_classes=num_classes,
        )
