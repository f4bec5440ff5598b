"""Relative foreground sensitivity (RIVAL10 noise analysis; Moayeri et al., CVPR 2022) as an
`evaluate` metric.

Every number comes from the hf_bgbench metric core (``rfs_report``); the published module
carries that core inlined and the benchmark's facts written in, so it needs only numpy and
evaluate.
"""

from __future__ import annotations

import datasets
import evaluate

from hf_bgbench.evaluate_metrics.facts import benchmark_facts
from hf_bgbench.evaluate_metrics.wrappers._common import CheckedInputs
from hf_bgbench.metrics.noise import rfs_report

# From the spec of the benchmark that lists this metric (RIVAL10, SPEC §2), written in as
# values when the module is generated: names, citation and its classes (labels outside
# [0, num_classes) are refused unless the num_classes keyword says otherwise).
BENCHMARK = benchmark_facts("rfs")

_DESCRIPTION = f"""\
Relative foreground sensitivity RFS = (a_bg - a_fg) / (2 min(ā, 1 - ā)), where a_fg and a_bg
are the accuracies with Gaussian noise added to the object only and to the background only
and ā their mean. In [-1, 1]; positive = the model depends more on the foreground. Defined as
0 when ā is 0 or 1 (then a_fg = a_bg). Optional inputs (pick them with the config name) add
instance-wise iRFS from true-class probabilities, per-noise-level values and trial grouping.

{BENCHMARK["title"]}: {BENCHMARK["description"]}
"""

_KWARGS_DESCRIPTION = f"""
Args:
    predictions_fg_noise (`list` of `int`): predicted class with noise on the object (-1 = a
        model class outside the benchmark, always wrong). Whole numbers only.
    predictions_bg_noise (`list` of `int`): predicted class with noise on the background.
    references (`list` of `int`): true class. One row per (image, trial[, noise level]).
    probabilities_fg_noise, probabilities_bg_noise (`list` of `float`, config token "irfs"):
        the model's probability of the true class under fg / bg noise, in [0, 1].
    noise_levels (`list` of `float`, config token "noise_levels"): σ (or ε) of each row.
    instance_ids (`list` of `str`, config token "instance_ids", needs "irfs"): image id of
        each row; rows sharing an id (and noise level) are trials whose probabilities are
        averaged before iRFS. Without it every row is one image.
    num_classes (`int` or `None`, compute keyword, default {BENCHMARK["num_classes"]} = \
{BENCHMARK["short_name"]}): labels must lie in [0, num_classes); None lifts the upper bound.
    The config name is "default" or "+"-joined tokens, e.g. "irfs+noise_levels".
Returns:
    rfs (`float`): RFS from the accuracies pooled over all rows, in [-1, 1].
    accuracy_fg_noise, accuracy_bg_noise (`float`): in [0, 1].
    rfs_per_class (`dict`): class -> RFS over that class's rows.
    rfs_per_noise_level (`dict`, "noise_levels"): level -> RFS; rfs_mean_over_noise_levels.
    irfs_mean (`float`, "irfs"): mean iRFS over images, in [-1, 1]; irfs_per_class (`dict`);
        irfs_mean_per_noise_level (`dict`, "irfs+noise_levels").
Examples:
    >>> rfs = evaluate.load("path/to/rfs")  # this folder; "bgbench/rfs" once published
    >>> rfs.compute(
    ...     predictions_fg_noise=[0, 1, 2, 2],
    ...     predictions_bg_noise=[0, 1, 1, 3],
    ...     references=[0, 1, 1, 3],
    ... )
    {{'rfs': 1.0, 'accuracy_fg_noise': 0.5, 'accuracy_bg_noise': 1.0, 'rfs_per_class': \
{{0: 0.0, 1: 1.0, 3: 1.0}}}}
"""

_BASE = {
    "predictions_fg_noise": datasets.Value("int64"),
    "predictions_bg_noise": datasets.Value("int64"),
    "references": datasets.Value("int64"),
}
_TOKENS = {
    "irfs": {
        "probabilities_fg_noise": datasets.Value("float64"),
        "probabilities_bg_noise": datasets.Value("float64"),
    },
    "noise_levels": {"noise_levels": datasets.Value("float64")},
    "instance_ids": {"instance_ids": datasets.Value("string")},
}


def _features(config_name):
    """The input features of a config: "default", or "+"-joined tokens of _TOKENS."""
    tokens = [] if config_name == "default" else config_name.split("+")
    unknown = [t for t in tokens if t not in _TOKENS]
    if unknown or len(set(tokens)) != len(tokens):
        raise ValueError(
            f"Bad rfs config {config_name!r}: use 'default' or '+'-joined tokens out of "
            f"{sorted(_TOKENS)}, each at most once (e.g. 'irfs+noise_levels')."
        )
    if "instance_ids" in tokens and "irfs" not in tokens:
        raise ValueError(
            "The rfs config token 'instance_ids' needs 'irfs' (it groups iRFS trials)."
        )
    spec = dict(_BASE)
    for token in sorted(tokens, key=list(_TOKENS).index):
        spec.update(_TOKENS[token])
    return datasets.Features(spec)


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Rfs(CheckedInputs, evaluate.Metric):
    """RFS (and optionally iRFS, per noise level) over fg-noise / bg-noise prediction rows."""

    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=BENCHMARK["citation"],
            inputs_description=_KWARGS_DESCRIPTION,
            features=_features(self.config_name),
            homepage=BENCHMARK["homepage"],
            reference_urls=[BENCHMARK["paper_url"]],
        )

    def _compute(
        self,
        predictions_fg_noise,
        predictions_bg_noise,
        references,
        probabilities_fg_noise=None,
        probabilities_bg_noise=None,
        noise_levels=None,
        instance_ids=None,
        num_classes=BENCHMARK["num_classes"],
    ):
        return rfs_report(
            predictions_fg_noise,
            predictions_bg_noise,
            references,
            probabilities_fg_noise=probabilities_fg_noise,
            probabilities_bg_noise=probabilities_bg_noise,
            noise_levels=noise_levels,
            instance_ids=instance_ids,
            num_classes=num_classes,
        )
