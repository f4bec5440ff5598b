"""Space for the `bg_challenge` metric: a form that computes it on a table of inputs."""

from pathlib import Path

import evaluate
import gradio as gr
from evaluate.utils import launch_gradio_widget

HERE = Path(__file__).resolve().parent
# Load the script next to this file, so the Space works under any namespace (and offline).
module = evaluate.load(str(HERE / "bg_challenge.py"))

if hasattr(gr, "inputs"):  # Gradio 3.x: evaluate's own widget
    launch_gradio_widget(module)
else:  # Gradio >= 4 removed gr.inputs, which launch_gradio_widget still uses
    from hf_bgbench.metric_widget import launch_metric_widget

    launch_metric_widget(module, HERE / "README.md")
