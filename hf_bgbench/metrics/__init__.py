"""The functional core: pure metric functions over predictions (no model code).

The CLI, the ``evaluate`` modules in ``metrics/`` and the Space all call these; every
definition follows SPEC.md and every bad input raises a ValueError naming the argument.
The core knows no benchmark: variant names, gaps and label counts come from the caller (which
takes them from the benchmark's spec).
"""

from hf_bgbench.metrics.backgrounds import (
    CATEGORIES,
    CATEGORY_ROLES,
    accuracy_by_variant,
    background_gaps,
    bg_gap,
    bg_gap_report,
    prediction_categories,
    prediction_categories_by_id,
)
from hf_bgbench.metrics.challenge import (
    FoolingMatrix,
    attack_success_rates,
    challenge_accuracy,
    challenge_accuracy_per_class,
    challenge_report,
    foolable_into_rates,
    fooled_into_background_class_rate,
    max_attack_success_rate_per_class,
    vulnerable_foregrounds,
)
from hf_bgbench.metrics.classification import accuracy, per_class_accuracy
from hf_bgbench.metrics.edits import (
    dropped_accuracy,
    dropped_accuracy_report,
    mean_dropped_accuracy,
)
from hf_bgbench.metrics.intervals import (
    newcombe_interval,
    paired_bootstrap_difference,
    wilson_interval,
)
from hf_bgbench.metrics.noise import (
    instance_rfs,
    irfs,
    relative_foreground_sensitivity,
    rfs_per_class,
    rfs_per_noise_level,
    rfs_report,
)
from hf_bgbench.metrics.saliency import (
    delta_density,
    saliency_alignment,
    saliency_fraction_inside,
    saliency_iou,
)

__all__ = [
    "CATEGORIES",
    "CATEGORY_ROLES",
    "FoolingMatrix",
    "accuracy",
    "accuracy_by_variant",
    "attack_success_rates",
    "background_gaps",
    "bg_gap",
    "bg_gap_report",
    "challenge_accuracy",
    "challenge_accuracy_per_class",
    "challenge_report",
    "delta_density",
    "dropped_accuracy",
    "dropped_accuracy_report",
    "foolable_into_rates",
    "fooled_into_background_class_rate",
    "instance_rfs",
    "irfs",
    "max_attack_success_rate_per_class",
    "mean_dropped_accuracy",
    "paired_bootstrap_difference",
    "per_class_accuracy",
    "prediction_categories",
    "prediction_categories_by_id",
    "relative_foreground_sensitivity",
    "rfs_per_class",
    "rfs_per_noise_level",
    "rfs_report",
    "saliency_alignment",
    "saliency_fraction_inside",
    "wilson_interval",
    "newcombe_interval",
    "saliency_iou",
    "vulnerable_foregrounds",
]
