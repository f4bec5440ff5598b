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
