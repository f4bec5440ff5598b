"""The one place that picks a torch device when the user names none. torch is imported
when a device is asked for, not with the module: the command line reads
:data:`CPU_BATCH_SIZE` for its help without loading torch."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch


def default_device() -> torch.device:
    """The best available device: CUDA, then Apple MPS, then the CPU."""
    import torch

    if torch.cuda.is_available():
        return torch.device("cuda")
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def resolve_device(device: str | torch.device | None) -> torch.device:
    """``device`` as a ``torch.device``; ``None`` or ``"auto"`` means :func:`default_device`."""
    import torch

    if device is None or str(device) == "auto":
        return default_device()
    return torch.device(device)


# Batch size on a CPU when the user gives none. Measured before freed memory was kept
# (hf_bgbench.inference.allocator), lite0 on 2 cores forwarded ~50 images/s in batches of 8
# against ~22 in batches of 64, and end to end evaluate, noise, saliency and probe features
# ran 1.3-2.0x faster at 8 (bench/*_throughput.py): the larger batches' activations were
# page-faulted anew on every batch. With the memory kept the batch size barely matters on a
# CPU (raw forward, 256 images: 41, 45, 41, 41 images/s at 8, 16, 32, 64), and 8 stays: the
# challenge's schedule learns after every batch (bench/challenge_throughput.py).
CPU_BATCH_SIZE = 8


def default_batch_size(device: str | torch.device | None, accelerator: int) -> int:
    """The batch size on ``device`` (``None``: :func:`default_device`) when none is given:
    ``CPU_BATCH_SIZE`` on a CPU, ``accelerator`` on a GPU, which needs full batches."""
    return CPU_BATCH_SIZE if resolve_device(device).type == "cpu" else accelerator


PRECISIONS = ("fp32", "bf16", "fp16")
"""The numerics a model step can run in (:class:`hf_bgbench.inference.model_step.ModelStep`)."""


def checked_precision(precision: str, device_type: str) -> str:
    """``precision`` if a ``device_type`` device can run it, else a ValueError that says what
    to do."""
    if precision not in PRECISIONS:
        raise ValueError(f"--precision {precision!r}: choose one of {', '.join(PRECISIONS)}.")
    if precision != "fp32" and device_type != "cuda":
        raise ValueError(
            f"--precision {precision} runs on a CUDA GPU only; on {device_type} the model runs "
            "in fp32. Leave --precision out, or add --device cuda on a machine with a GPU."
        )
    return precision
