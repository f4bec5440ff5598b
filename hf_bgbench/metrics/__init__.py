"""The functional core: pure metric functions over predictions (no model code).

The CLI, the ``evaluate`` modules in ``metrics/`` and the Space all call these.
"""

from hf_bgbench.metrics.backgrounds import (
    CATEGORIES,
    GAPS,
    accuracy_by_variant,
    background_gaps,
    bg_gap,
    prediction_categories,
)
from hf_bgbench.metrics.classification import accuracy, per_class_accuracy

__all__ = [
    "CATEGORIES",
    "GAPS",
    "accuracy",
    "accuracy_by_variant",
    "background_gaps",
    "bg_gap",
    "per_class_accuracy",
    "prediction_categories",
]
