"""BG-GAP and per-variant accuracy on ImageNet-9 (Xiao et al., ICLR 2021) as an `evaluate`
metric.

Every number comes from the hf_bgbench metric core (``bg_gap_report``); the published module
carries that core inlined and the benchmark's facts written in, so it needs only numpy and
evaluate.
"""

from __future__ import annotations

import datasets
import evaluate

from hf_bgbench.evaluate_metrics.facts import benchmark_facts, category_variants, paired_gaps
from hf_bgbench.evaluate_metrics.wrappers._common import CheckedInputs
from hf_bgbench.metrics.backgrounds import bg_gap_report

# From the spec of the benchmark that lists this metric (IN-9, SPEC §1), written in as values
# when the module is generated: names, citation, variants, classes; the gaps (BG-GAP first)
# and the views of the prediction categories.
BENCHMARK = benchmark_facts("bg_gap")
GAPS = paired_gaps("bg_gap")
CATEGORY_VARIANTS = category_variants("bg_gap")

_SHORT = BENCHMARK["short_name"]
_HEADLINE, (_SAME, _RAND) = next(iter(GAPS.items()))
_OTHER_GAPS = [(name, a, b) for name, (a, b) in GAPS.items() if name != _HEADLINE]
_LAST_CLASS = BENCHMARK["num_classes"] - 1
_VARIANT_NAMES = ", ".join(BENCHMARK["variants"])
_OTHER_DIFFERENCES = ", ".join(f"acc({a}) - acc({b})" for _, a, b in _OTHER_GAPS)
_OTHER_RETURNS = "".join(
    f"    {name} (`float`): accuracy_{a} - accuracy_{b} (when both are present).\n"
    for name, a, b in _OTHER_GAPS
)
_FULL, _FOREGROUND, _BACKGROUND = (
    CATEGORY_VARIANTS[view] for view in ("full", "foreground", "background")
)

_DESCRIPTION = f"""\
BG-GAP = accuracy on {_SHORT} {_SAME} minus accuracy on {_SHORT} {_RAND}: how much a classifier
gains from backgrounds typical of the foreground's class. Also reports the accuracy of every
{_SHORT} variant present, {_OTHER_DIFFERENCES}, and (config "with_ids") the paper's prediction
categories.

{BENCHMARK["title"]}: {BENCHMARK["description"]}
"""

_KWARGS_DESCRIPTION = f"""
Args:
    predictions (`list` of `int`): predicted {_SHORT} class per row, 0-{_LAST_CLASS} (-1 = a
        model class outside {_SHORT}, always wrong). Whole numbers only: 1.7 is an error.
    references (`list` of `int`): the foreground's {_SHORT} class per row, 0-{_LAST_CLASS}.
    variants (`list` of `str`): the {_SHORT} variant of each row: {_VARIANT_NAMES}.
        Rows of {_SAME} and {_RAND} are required.
    ids (`list` of `str`, config "with_ids" only): the source image id of each row, shared by
        the variants of one image; enables `prediction_categories`.
Returns:
    accuracy_<variant> (`float`): accuracy of every variant present, in [0, 1].
    {_HEADLINE} (`float`): accuracy_{_SAME} - accuracy_{_RAND}, in [-1, 1].
{_OTHER_RETURNS}\
    prediction_categories (`dict`, config "with_ids"): fractions of images that are
        bg_required, bg_fg_required, bg_irrelevant, bg_fools, other (they sum to 1), from the
        views full = {_FULL}, foreground = {_FOREGROUND}, background = {_BACKGROUND}.
Examples:
    >>> bg_gap = evaluate.load("path/to/bg_gap")  # this folder; "bgbench/bg_gap" once published
    >>> bg_gap.compute(
    ...     predictions=[0, 1, 1, 2],
    ...     references=[0, 1, 1, 1],
    ...     variants=["{_SAME}", "{_SAME}", "{_RAND}", "{_RAND}"],
    ... )
    {{'accuracy_{_RAND}': 0.5, 'accuracy_{_SAME}': 1.0, '{_HEADLINE}': 0.5}}
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
    """BG-GAP and per-variant accuracy over long-format rows of the benchmark's variants."""

    def _info(self):
        if self.config_name not in _CONFIGS:
            raise ValueError(
                f"Unknown config {self.config_name!r} for bg_gap; use one of {sorted(_CONFIGS)}."
            )
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=BENCHMARK["citation"],
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(_CONFIGS[self.config_name]),
            homepage=BENCHMARK["homepage"],
            reference_urls=[BENCHMARK["paper_url"]],
        )

    def _compute(self, predictions, references, variants, ids=None):
        return bg_gap_report(
            predictions,
            references,
            variants,
            ids=ids,
            gaps=GAPS,
            category_roles=CATEGORY_VARIANTS,
            valid_variants=BENCHMARK["variants"],
            num_classes=BENCHMARK["num_classes"],
        )
