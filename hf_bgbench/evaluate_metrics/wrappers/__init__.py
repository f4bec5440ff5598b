"""The ``evaluate`` shells of the four metrics, as ordinary (lintable) modules.

They import their numbers from :mod:`hf_bgbench.metrics`; the generator
(:mod:`hf_bgbench.evaluate_metrics.generate`) replaces those imports with the inlined core so
that the published modules need only numpy and evaluate. They are never loaded by
``evaluate`` directly.
"""
