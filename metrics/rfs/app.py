"""Space for this metric: a form that computes it on a table of inputs, above its card."""

from hf_bgbench.metric_widget import launch_metric_space

launch_metric_space(__file__)
