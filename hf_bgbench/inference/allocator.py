"""Keep the memory a forward frees inside the process (glibc on Linux).

glibc's ``malloc`` serves every block above its mmap threshold (at most 32 MiB) with a fresh
``mmap`` and returns it to the system on ``free``, and trims the top of its heap once more than
the trim threshold is free there. A CNN's activations are exactly such blocks, allocated and
freed on every batch: tf_efficientnet_lite0 at batch 8 page-faulted about 10,800 times per
image on a 2-core machine, and the kernel's time for that (42 ms of system CPU per image) made
the forward half as fast as it is with the memory kept (the forward stage of
``bench/engine_throughput.py``: 45 against 22 ms per image). Which run paid it depended on
where its heap happened to end, so the same forward ran at different speeds in different
processes.

:func:`keep_freed_memory` turns both off for the process, through ``mallopt``: every block
then comes from the heap, and what a batch frees is reused by the next one. The cost is that
the process keeps its peak memory until it ends (a command does; the Space runs each job in
its own process). Numbers do not depend on it. ``BGBENCH_KEEP_FREED_MEMORY=0`` leaves glibc's
defaults; another C library (macOS, musl) is left as it is.
"""

from __future__ import annotations

import ctypes
import functools
import logging
import os
import platform
import sys

logger = logging.getLogger(__name__)

ENV = "BGBENCH_KEEP_FREED_MEMORY"
# mallopt parameters, from glibc's <malloc.h>
M_TRIM_THRESHOLD = -1
M_MMAP_MAX = -4
TRIM_THRESHOLD = 2**31 - 1  # the largest an int holds: the heap's top is never trimmed


def wanted() -> bool:
    """Whether ``$BGBENCH_KEEP_FREED_MEMORY`` asks for it (unset: yes); another value than 0
    or 1 is refused, naming the variable."""
    value = os.environ.get(ENV, "1")
    if value.strip() not in ("0", "1"):
        raise ValueError(
            f"the environment variable {ENV}={value!r} is not 0 or 1: set it to 1 (freed memory "
            "kept for the next batch, the default) or 0 (glibc's defaults), or unset it."
        )
    return value.strip() == "1"


def keep_freed_memory() -> bool:
    """Make glibc keep freed memory for reuse (see the module's text), unless
    ``$BGBENCH_KEEP_FREED_MEMORY`` is 0 (checked on every call). True when the setting is in
    force for this process. It is process-wide and lasts: a later 0 does not undo it."""
    return wanted() and _apply()


@functools.cache
def _apply() -> bool:
    """mallopt once per process; False when the C library is not glibc."""
    if sys.platform != "linux" or platform.libc_ver()[0] != "glibc":
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the process's own symbols: glibc's
        return mallopt(M_MMAP_MAX, 0) == 1 and mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1
    except (OSError, AttributeError) as err:  # a libc without mallopt: its defaults stay
        logger.debug("mallopt unavailable: %s", err)
        return False
