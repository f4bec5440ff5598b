"""What several tabs share on the page: the model box's label, and the dataset menu that
follows the benchmark shown."""

from __future__ import annotations

from typing import Any

import gradio as gr

from hf_bgbench.space.checks.allowlist import datasets_for
from hf_bgbench.space.settings import allowed

MODEL_LABEL = "Model (Hub repo owner/name, or the bundled tf_efficientnet_lite0)"


def offer_datasets(trigger: Any, benchmark: gr.Dropdown, dataset: gr.Dropdown) -> None:
    """When ``trigger`` fires (``benchmark.change``, ``demo.load``), ``dataset`` offers the
    allow-listed datasets of the benchmark ``benchmark`` shows, the first picked."""
    trigger(_datasets_update, benchmark, dataset, queue=False)


def _datasets_update(benchmark: str) -> Any:
    offered = datasets_for(allowed(), benchmark)
    return gr.update(choices=offered, value=offered[0] if offered else None)
