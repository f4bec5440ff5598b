"""Space for this metric: a form that computes it on a table of inputs, above its card.

The widget code (``hf_bgbench.evaluate_metrics.widget``) is inlined below, so the Space needs only
evaluate, numpy and gradio.
"""

from __future__ import annotations

from hf_bgbench.evaluate_metrics.widget import launch_metric_space

if __name__ == "__main__":
    launch_metric_space(__file__)
