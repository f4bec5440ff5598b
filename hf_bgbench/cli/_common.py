"""Arguments shared by the sub-commands that run a model."""

from __future__ import annotations

import argparse

MODEL_HELP = (
    "timm name (resnet50.a1_in1k), hf-hub:timm/..., transformers Hub id, local folder, "
    "local-dir:..., or the bundled tf_efficientnet_lite0/1/2 (default: %(default)s)"
)


def add_model_arguments(p: argparse.ArgumentParser, *, batch_size: int) -> None:
    """MODEL, --benchmark, --checkpoint, --batch-size, --workers, --device, --quiet,
    --resize-to-model-input."""
    p.add_argument("model", nargs="?", default="tf_efficientnet_lite0", help=MODEL_HELP)
    from hf_bgbench.benchmarks import list_benchmarks

    p.add_argument(
        "--benchmark",
        default="in9",
        metavar="NAME",
        help=f"benchmark: {', '.join(list_benchmarks())} (default: %(default)s; `bgbench list` "
        "shows each one's variants, tasks and metrics)",
    )
    p.add_argument("--checkpoint", default=None, help="weights file for a timm architecture")
    p.add_argument("--batch-size", type=int, default=batch_size)
    p.add_argument("--workers", type=int, default=None, help="image-decoding worker processes")
    p.add_argument("--device", default=None, help="cuda / mps / cpu (default: best available)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument(
        "--restrict-to-benchmark-classes",
        action="store_true",
        help="argmax only over the model classes that map to the benchmark (NOT the published "
        "protocol, which takes the argmax over all classes and counts unmapped ones as wrong)",
    )
    p.add_argument(
        "--resize-to-model-input",
        action="store_true",
        help="resize the benchmark's images to the model's input size (a protocol deviation, "
        "recorded); by default they are fed at their own size, as published, and resized only "
        "when the model cannot take that size",
    )
