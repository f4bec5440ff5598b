"""bgbench Space: score a Hub image classifier on the background-reliance benchmarks.

A thin shell over the library: the benchmarks and their tasks come from the registry
(:mod:`hf_bgbench.benchmarks`, :mod:`hf_bgbench.tasks`), the numbers from the tasks, the
report from the one renderer. On a GPU Space the model step runs CUDA with AMP.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import gradio as gr

from hf_bgbench.benchmarks import get_benchmark, list_benchmarks
from hf_bgbench.render import render_markdown
from hf_bgbench.tasks import get_task
from hf_bgbench.tasks.challenge import run_challenge
from hf_bgbench.tasks.evaluate import evaluate_model

DEFAULT_VARIANTS = ["original", "only_bg_t", "mixed_same", "mixed_rand", "mixed_next"]
# Shared hardware: the challenge runs on a seeded subset (recorded in the results).
CHALLENGE_FOREGROUNDS = 100
CHALLENGE_BACKGROUNDS = 200


def score(
    model_id: str,
    dataset: str,
    variants: list[str],
    restrict: bool,
    benchmark: str = "in9",
    task: str = "evaluate",
    progress=gr.Progress(),  # noqa: B008 (gradio idiom)
):
    """Run ``task`` of ``benchmark``; return the Markdown report, the plot and the JSON file."""
    if not model_id.strip():
        raise gr.Error("Enter a model id, e.g. timm/resnet50.a1_in1k or microsoft/resnet-50.")
    spec = get_benchmark(benchmark)
    if task == "evaluate" and not variants:
        raise gr.Error("Pick at least one variant.")
    out = Path(tempfile.mkdtemp(prefix="bgbench-space-"))
    progress(0, desc=f"loading {model_id}")
    common = dict(
        data=dataset.strip() or spec.hub_repo,
        benchmark=benchmark,
        output_dir=out,
        restrict_to_benchmark=restrict,
        progress=False,
    )
    try:
        spec.check_task(task)
        if task == "challenge":
            results = run_challenge(
                model_id.strip(),
                max_foregrounds=CHALLENGE_FOREGROUNDS,
                max_backgrounds=CHALLENGE_BACKGROUNDS,
                **common,
            )
        else:
            results = evaluate_model(model_id.strip(), variants=variants, **common)
    except (ValueError, OSError, RuntimeError) as err:
        raise gr.Error(str(err)) from err
    stem = "challenge" if task == "challenge" else "results"
    plot = out / results["report"]["figures"][0]["file"]
    return render_markdown(results), str(plot), str(out / f"{stem}.json")


def build_demo() -> gr.Blocks:
    benchmarks = list_benchmarks()
    with gr.Blocks(title="bgbench: background reliance of image classifiers") as demo:
        gr.Markdown(
            "# How much does your classifier lean on the background?\n"
            "Scores a timm or transformers ImageNet classifier on the background-reliance "
            "benchmarks. **BG-GAP** (ImageNet-9) = accuracy on *mixed_same* − *mixed_rand*: "
            "the points a model loses when the object's background stops matching its class."
        )
        with gr.Row():
            model_id = gr.Textbox(
                label="Model (Hub id or timm name)", value="tf_efficientnet_lite0"
            )
            dataset = gr.Textbox(label="Dataset (Hub id)", value=get_benchmark("in9").hub_repo)
        with gr.Row():
            benchmark = gr.Dropdown(benchmarks, value="in9", label="Benchmark")
            task = gr.Radio(
                [(get_task(t).description, t) for t in get_benchmark("in9").tasks],
                value="evaluate",
                label="Task",
            )
        variants = gr.CheckboxGroup(
            list(get_benchmark("in9").variants), value=DEFAULT_VARIANTS, label="Variants"
        )
        restrict = gr.Checkbox(
            label="Argmax only over the benchmark's ImageNet classes (not the published protocol)"
        )

        def on_benchmark(name: str):
            spec = get_benchmark(name)
            return (
                gr.update(choices=[(get_task(t).description, t) for t in spec.tasks]),
                gr.update(choices=list(spec.variants), value=list(spec.variants)),
                gr.update(value=spec.hub_repo),
            )

        benchmark.change(on_benchmark, benchmark, [task, variants, dataset])
        run = gr.Button("Score", variant="primary")
        report = gr.Markdown()
        plot = gr.Image(label="Plot", type="filepath")
        raw = gr.File(label="results (JSON)")
        run.click(
            score, [model_id, dataset, variants, restrict, benchmark, task], [report, plot, raw]
        )
    return demo


demo = build_demo()

if __name__ == "__main__":
    demo.launch()
