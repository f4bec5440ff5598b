"""How much memory the Backgrounds Challenge may use and did use: how many backgrounds
stay on the device at once, and the peaks reported in the results."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import torch


def background_chunk(
    n: int, hw: Sequence[int], device: torch.device, limit: int | None = None
) -> int:
    """Backgrounds held on the device at once: ``limit`` when given, else all ``n`` when
    they fit in half the device's free memory (uint8, 3 x H x W each), else as many as do."""
    if limit is not None:
        return max(1, min(n, limit))
    free = free_memory(device)
    if free is None:
        return n
    per_background = 3 * int(hw[0]) * int(hw[1])
    return max(1, min(n, free // 2 // per_background))


def free_memory(device: torch.device) -> int | None:
    """Free bytes on ``device`` (CUDA: the driver's count; CPU: MemAvailable), or None."""
    if device.type == "cuda":
        return int(torch.cuda.mem_get_info(device)[0])
    if device.type != "cpu":
        return None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def peak_memory(device: torch.device) -> dict[str, float | None]:
    """Peak resident memory of this process and of its (decode worker) children, in MB
    (``resource.getrusage``; the process's lifetime peak), and on CUDA the peak memory
    torch allocated on the device."""
    rss = children = None
    try:
        import resource

        scale = 1 if sys.platform == "darwin" else 1024  # bytes on macOS, KiB on Linux
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale / 2**20
        children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * scale / 2**20
    except (ImportError, OSError):  # no resource module (Windows)
        pass
    cuda = torch.cuda.max_memory_allocated(device) / 2**20 if device.type == "cuda" else None
    return {
        "peak_rss_mb": None if rss is None else round(rss, 1),
        "peak_rss_workers_mb": None if children is None else round(children, 1),
        "cuda_max_allocated_mb": None if cuda is None else round(cuda, 1),
    }
