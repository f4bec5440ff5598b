"""Arguments shared by the sub-commands that run a model."""

from __future__ import annotations

import argparse
from typing import Any

MODEL_HELP = (
    "timm name (resnet50.a1_in1k), hf-hub:timm/..., transformers Hub id, local folder, "
    "local-dir:..., or the bundled tf_efficientnet_lite0/1/2"
)


def variant_list(values: list[str] | None) -> list[str] | None:
    """``--variants a b`` and ``--variants a,b`` (and a mix) -> [a, b]."""
    if values is None:
        return None
    return [v for value in values for v in value.split(",") if v]


def add_variants_argument(p: argparse.ArgumentParser, what: str = "variants to score") -> None:
    from hf_bgbench.benchmarks import get_benchmark

    p.add_argument(
        "--variants",
        nargs="+",
        default=None,
        metavar="VARIANT",
        help=f"{what}, space- or comma-separated (default: all the data has; IN-9: "
        f"{', '.join(get_benchmark('in9').variants)})",
    )


def add_progress_argument(p: argparse.ArgumentParser) -> None:
    """``--quiet`` (alias ``--no-progress``): no progress bars."""
    p.add_argument(
        "--quiet", "--no-progress", dest="quiet", action="store_true", help="no progress bars"
    )


def add_workers_argument(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument(
        "--workers",
        type=non_negative_int,
        default=None,
        help=f"{what} (0: none, work in the main process; default: one per CPU, at most 4)",
    )


def human_size(n: float) -> str:
    """``n`` bytes as B / KB / MB / GB (what the publish commands list)."""
    for unit in ("B", "KB", "MB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


def non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value


def model_options(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments every task takes from :func:`add_model_arguments` (the model
    itself and ``--benchmark`` excepted): one place maps the flags to the task's names."""
    return {
        "checkpoint": args.checkpoint,
        "batch_size": args.batch_size,
        "num_workers": args.workers,
        "device": args.device,
        "progress": not args.quiet,
        "restrict_to_benchmark": args.restrict_to_benchmark_classes,
        "label_map": args.label_map,
        "resize_to_model_input": args.resize_to_model_input,
    }


def add_model_arguments(
    p: argparse.ArgumentParser, *, gpu_batch_size: int, batch_note: str = ""
) -> None:
    """MODEL, --benchmark, --checkpoint, --batch-size (none given: the task picks by device,
    :func:`hf_bgbench.inference.devices.default_batch_size` with ``gpu_batch_size``; ``batch_note``
    says why, if it needs saying), --workers, --device, --quiet, --resize-to-model-input."""
    p.add_argument("model", nargs="?", default="tf_efficientnet_lite0", help=MODEL_HELP)
    from hf_bgbench.benchmarks import list_benchmarks

    p.add_argument(
        "--benchmark",
        default="in9",
        metavar="NAME",
        help=f"benchmark: {', '.join(list_benchmarks())} (`bgbench list` shows each one's "
        "variants, tasks and metrics)",
    )
    p.add_argument(
        "--checkpoint",
        default=None,
        help="weights file (.safetensors, or a .pth/.pt read with weights_only) for a timm "
        "architecture given as MODEL",
    )
    from hf_bgbench.inference.devices import CPU_BATCH_SIZE

    p.add_argument(
        "--batch-size",
        type=positive_int,
        default=None,
        help=f"images per forward pass (default: {CPU_BATCH_SIZE} on a CPU, {gpu_batch_size} "
        f"on a GPU){batch_note}",
    )
    add_workers_argument(p, "image-decoding worker processes")
    p.add_argument("--device", default=None, help="cuda / mps / cpu (default: the best available)")
    add_progress_argument(p)
    p.add_argument(
        "--restrict-to-benchmark-classes",
        action="store_true",
        help="argmax only over the model classes that map to the benchmark (NOT the published "
        "protocol, which takes the argmax over all classes and counts unmapped ones as wrong)",
    )
    p.add_argument(
        "--label-map",
        choices=("auto", "model", "imagenet", "probe"),
        default="auto",
        help="how the model's outputs become benchmark labels: auto = the benchmark's "
        "protocol (IN-9: the model's ImageNet classes mapped; RIVAL10: a linear probe on "
        "frozen features); model / imagenet = the model's own classes mapped (imagenet: "
        "zero-shot from ImageNet-1k); probe = a linear head fitted on the train split",
    )
    p.add_argument(
        "--resize-to-model-input",
        action="store_true",
        help="resize the benchmark's images to the model's input size (a protocol deviation, "
        "recorded); by default they are fed at their own size, as published, and resized only "
        "when the model cannot take that size",
    )
