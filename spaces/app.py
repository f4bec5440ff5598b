"""bgbench Space: score a Hub image classifier on the ImageNet-9 Backgrounds Challenge.

A thin shell over :func:`hf_bgbench.tasks.evaluate.evaluate_model`; the numbers are the
library's. On a GPU Space the engine runs on CUDA with AMP automatically.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import gradio as gr

from hf_bgbench.benchmarks import get_benchmark
from hf_bgbench.render import render_markdown
from hf_bgbench.tasks.evaluate import evaluate_model

IN9 = get_benchmark("in9")
DEFAULT_VARIANTS = ["original", "only_bg_t", "mixed_same", "mixed_rand", "mixed_next"]


def score(model_id: str, dataset: str, variants: list[str], restrict: bool, progress=gr.Progress()):  # noqa: B008 (gradio idiom)
    """Run the benchmark; return the Markdown report, the plot and results.json."""
    if not model_id.strip():
        raise gr.Error("Enter a model id, e.g. timm/resnet50.a1_in1k or microsoft/resnet-50.")
    if not variants:
        raise gr.Error("Pick at least one variant.")
    out = Path(tempfile.mkdtemp(prefix="bgbench-space-"))
    progress(0, desc=f"loading {model_id}")
    try:
        results = evaluate_model(
            model_id.strip(),
            benchmark="in9",
            data=dataset.strip() or IN9.hub_repo,
            variants=variants,
            output_dir=out,
            restrict_to_benchmark=restrict,
            progress=False,
        )
    except (ValueError, OSError, RuntimeError) as err:
        raise gr.Error(str(err)) from err
    return render_markdown(results), str(out / "accuracy.png"), str(out / "results.json")


def build_demo() -> gr.Blocks:
    with gr.Blocks(title="bgbench: background reliance of image classifiers") as demo:
        gr.Markdown(
            "# How much does your classifier lean on the background?\n"
            "Scores a timm or transformers ImageNet classifier on the ImageNet-9 Backgrounds "
            "Challenge variants. **BG-GAP** = accuracy on *mixed_same* − *mixed_rand*: the "
            "points a model loses when the object's background stops matching its class."
        )
        with gr.Row():
            model_id = gr.Textbox(
                label="Model (Hub id or timm name)", value="tf_efficientnet_lite0"
            )
            dataset = gr.Textbox(label="Dataset (Hub id)", value=IN9.hub_repo)
        variants = gr.CheckboxGroup(list(IN9.variants), value=DEFAULT_VARIANTS, label="Variants")
        restrict = gr.Checkbox(
            label="Argmax only over the 370 IN-9 ImageNet classes (not the published protocol)"
        )
        run = gr.Button("Score", variant="primary")
        report = gr.Markdown()
        plot = gr.Image(label="Accuracy per variant", type="filepath")
        raw = gr.File(label="results.json")
        run.click(score, [model_id, dataset, variants, restrict], [report, plot, raw])
    return demo


demo = build_demo()

if __name__ == "__main__":
    demo.launch()
