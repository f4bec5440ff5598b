"""What the ``evaluate`` metric modules pass to the core besides the rows: their benchmark's
facts, read from the registry's specs as the generator reads them. Tests that compare a module
with the core call the core with these."""

from __future__ import annotations

from hf_bgbench.evaluate_metrics.facts import benchmark_facts, category_variants, paired_gaps

# bg_gap: IN-9's gaps (BG-GAP first) and the views of the prediction categories.
BG_GAP_ARGS = {"gaps": paired_gaps("bg_gap"), "category_roles": category_variants("bg_gap")}

_EDITS = benchmark_facts("dropped_accuracy")
# dropped_accuracy: ImageNet-E's unedited reference and its edit names.
DROPPED_ACCURACY_ARGS = {
    "reference_edit": _EDITS["reference_variant"],
    "known_edits": _EDITS["variants"],
}
