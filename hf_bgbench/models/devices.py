"""The one place that picks a torch device when the user names none."""

from __future__ import annotations

import torch


def default_device() -> torch.device:
    """The best available device: CUDA, then Apple MPS, then the CPU."""
    if torch.cuda.is_available():
        return torch.device("cuda")
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def resolve_device(device: str | torch.device | None) -> torch.device:
    """``device`` as a ``torch.device``; ``None`` or ``"auto"`` means :func:`default_device`."""
    if device is None or str(device) == "auto":
        return default_device()
    return torch.device(device)


# Batch size on a CPU when the user gives none. lite0 on 2 cores forwards ~50 images/s in
# batches of 8 against ~22 in batches of 64 (activations stay in cache); `bgbench evaluate`
# of 768 images ran 1.3-1.5x faster end to end at 8 than at 32, noise 1.6x faster than at 64
# (bench/noise_throughput.py), saliency 2.0x faster than at 32 (bench/saliency_throughput.py),
# linear-probe features 1.9x faster than at 64 (bench/probe_throughput.py),
# and the challenge's schedule learns after every batch (bench/challenge_throughput.py).
CPU_BATCH_SIZE = 8


def default_batch_size(device: str | torch.device | None, accelerator: int) -> int:
    """The batch size on ``device`` (``None``: :func:`default_device`) when none is given:
    ``CPU_BATCH_SIZE`` on a CPU, ``accelerator`` on a GPU, which needs full batches."""
    return CPU_BATCH_SIZE if resolve_device(device).type == "cpu" else accelerator
