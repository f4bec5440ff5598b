"""The ``evaluate`` shells of the four metrics, as ordinary (lintable) modules.

They import their numbers from :mod:`hf_bgbench.metrics` and their benchmark facts from
:mod:`hf_bgbench.evaluate_metrics.facts`; the generator
(:mod:`hf_bgbench.evaluate_metrics.generate`) replaces the first with the inlined core and the
second with the facts' values, so that the published modules need only numpy and evaluate.
They are never loaded by ``evaluate`` directly.
"""

METRIC_NAMES = ("bg_gap", "bg_challenge", "rfs", "dropped_accuracy")
"""The metric modules: a wrapper ``<name>.py`` here and a card ``../cards/<name>.md`` each."""
