"""Freed memory kept for the next batch (hf_bgbench.inference.allocator): without it glibc
maps and unmaps every large block, and each batch's activations page-fault anew."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

from hf_bgbench.inference import allocator

glibc = pytest.mark.skipif(
    sys.platform != "linux" or platform.libc_ver()[0] != "glibc", reason="glibc's mallopt"
)

# A fresh interpreter: 10 blocks of 64 MiB (above glibc's largest mmap threshold, like a
# CNN's activations at batch 8) written and freed in turn; the page faults of the last 9.
FAULTS = """
import resource, numpy as np
from hf_bgbench.inference.allocator import keep_freed_memory
print(keep_freed_memory())
def faults(): return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
block = np.ones(1 << 23); del block  # the first one faults whatever the setting
before = faults()
for _ in range(9):
    block = np.ones(1 << 23)  # 64 MiB of float64, every page written
    del block
print(faults() - before)
"""


def _faults(setting: str) -> tuple[str, int]:
    env = {**os.environ, allocator.ENV: setting}
    out = subprocess.run(
        [sys.executable, "-c", FAULTS], env=env, capture_output=True, text=True, check=True
    )
    kept, faults = out.stdout.split()
    return kept, int(faults)


@glibc
def test_freed_blocks_are_reused_instead_of_page_faulted_anew():
    kept, with_setting = _faults("1")
    default, without = _faults("0")
    assert (kept, default) == ("True", "False")
    huge_pages = 9 * (64 << 20) // (2 << 20)  # numpy asks for 2 MiB pages where it can
    assert without >= huge_pages  # glibc's default: each block mapped and faulted again
    assert with_setting < 9  # kept: the same memory, already mapped (not one per block)
