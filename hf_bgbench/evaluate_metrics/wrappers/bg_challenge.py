"""The Backgrounds Challenge (Xiao et al., ICLR 2021) as an `evaluate` metric: challenge
accuracy and, from a full fooling matrix, attack success rates of the backgrounds.

Every number comes from the hf_bgbench metric core (``challenge_accuracy``,
``challenge_accuracy_per_class``, ``FoolingMatrix`` and ``challenge_report``); the published
module carries that core inlined and the benchmark's facts written in, so it needs only numpy
and evaluate.
"""

from __future__ import annotations

import datasets
import evaluate

from hf_bgbench.evaluate_metrics.facts import benchmark_facts
from hf_bgbench.evaluate_metrics.wrappers._common import CheckedInputs
from hf_bgbench.metrics.challenge import (
    FoolingMatrix,
    challenge_accuracy,
    challenge_accuracy_per_class,
    challenge_report,
)

# From the spec of the benchmark that lists this metric (IN-9, SPEC §1), written in as values
# when the module is generated: names, citation and its classes.
BENCHMARK = benchmark_facts("bg_challenge")

_SHORT = BENCHMARK["short_name"]
_NUM_CLASSES = BENCHMARK["num_classes"]

_DESCRIPTION = f"""\
Challenge accuracy = fraction of {_SHORT} test foregrounds that no background (out of every
background-only test image) can make the model misclassify. With the full foreground x
background prediction table (config "fooling_matrix") also each background's attack success
rate, the share of foregrounds foolable into each class, and the share foolable into the
background's class by some background.

{BENCHMARK["title"]}: {BENCHMARK["description"]}
"""

_KWARGS_DESCRIPTION = f"""
Args (config "default"):
    vulnerable (`list` of `bool`): per foreground, whether some background flipped it
        (True/False or 1/0; strings such as "yes" and NaN are errors).
Args (config "per_class"):
    vulnerable (`list` of `bool`) and foreground_labels (`list` of `int`).
Args (config "fooling_matrix"), one row per foreground:
    foreground_labels (`int`): the foreground's class.
    predictions (`list` of `int`): the class predicted for this foreground pasted on each
        background, in one fixed background order shared by all rows (-1 = a class outside
        the benchmark: wrong, but never "fooled into" a background's class).
    background_labels (`list` of `int`, compute keyword, required): the class of each
        background, in that order.
    num_classes (`int` or `None`, compute keyword, default {_NUM_CLASSES} = {_SHORT}): labels
        must lie in [0, num_classes) and predictions also may be -1; None lifts the upper
        bound.
Returns:
    challenge_accuracy (`float`): in [0, 1].
    challenge_accuracy_per_class (`dict`, "per_class" and "fooling_matrix"): class -> value.
    attack_success_rate (`list` of `float`, "fooling_matrix"): per background, fraction of
        other-class foregrounds it flips to its class (NaN if every foreground shares its class).
    max_attack_success_rate_per_class (`dict`): class -> ASR of its most fooling background.
    foolable_into (`dict`): class c -> share of other-class foregrounds that some background
        of class c flips into c.
    fooled_into_background_class (`float`): share of foregrounds that some background of
        another class flips into that background's class.
Examples:
    >>> challenge = evaluate.load("path/to/bg_challenge")  # "bgbench/bg_challenge" once published
    >>> challenge.compute(vulnerable=[True, False, True, True])
    {{'challenge_accuracy': 0.25}}
"""

_CONFIGS = {
    "default": {"vulnerable": datasets.Value("bool")},
    "per_class": {
        "vulnerable": datasets.Value("bool"),
        "foreground_labels": datasets.Value("int64"),
    },
    "fooling_matrix": {
        "foreground_labels": datasets.Value("int64"),
        "predictions": datasets.Sequence(datasets.Value("int64")),
    },
}


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class BgChallenge(CheckedInputs, evaluate.Metric):
    """Challenge accuracy, optionally per class or with the fooling-matrix statistics."""

    def _info(self):
        if self.config_name not in _CONFIGS:
            raise ValueError(
                f"Unknown config {self.config_name!r} for bg_challenge; use one of "
                f"{sorted(_CONFIGS)}."
            )
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=BENCHMARK["citation"],
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(_CONFIGS[self.config_name]),
            homepage=BENCHMARK["homepage"],
            reference_urls=[BENCHMARK["paper_url"]],
        )

    def _compute(
        self,
        vulnerable=None,
        foreground_labels=None,
        predictions=None,
        background_labels=None,
        num_classes=_NUM_CLASSES,
    ):
        if self.config_name == "default":
            return {"challenge_accuracy": challenge_accuracy(vulnerable)}
        if self.config_name == "per_class":
            return {
                "challenge_accuracy": challenge_accuracy(vulnerable),
                "challenge_accuracy_per_class": challenge_accuracy_per_class(
                    vulnerable, foreground_labels, num_classes
                ),
            }
        if background_labels is None:
            raise ValueError(
                "`background_labels` is missing: pass compute(..., background_labels=[...]) "
                "with the class of each background, in the order of the prediction rows."
            )
        matrix = FoolingMatrix.from_rows(
            foreground_labels, predictions, background_labels, num_classes=num_classes
        )
        return challenge_report(matrix)
