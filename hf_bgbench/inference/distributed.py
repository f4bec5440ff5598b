"""Work spread over the processes ``accelerate launch`` starts, through accelerate's
:class:`~accelerate.PartialState` (bgbench has no launcher of its own).

One process per GPU::

    accelerate launch --multi_gpu --num_processes 4 -m hf_bgbench evaluate MODEL --data DIR

Several processes on a CPU (they talk over gloo; ``accelerate launch --cpu`` alone starts a
single process unless MPI is set up, so the torchrun-based ``--multi_gpu`` launcher is the one
that works on a machine without GPUs)::

    accelerate launch --multi_gpu --num_processes 2 -m hf_bgbench evaluate MODEL --data DIR \\
        --device cpu

Tasks ask :func:`processes` for the run's :class:`Processes`: its share of the work
(:meth:`Processes.shard`, contiguous, so gathering the shards in process order restores the
dataset order), the device of this process, and :meth:`Processes.together` to run a share on
every process and collect all of them (``gather_object``) -- or, when any process failed,
the same error on every process instead of one process waiting forever for the others.
Launched without accelerate (or with one process) everything is one process and no
``torch.distributed`` group is made.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import torch

T = TypeVar("T")

# Environment variables a multi-process launcher sets (torchrun, mpirun flavours).
WORLD_SIZE_VARIABLES = ("WORLD_SIZE", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MV2_COMM_WORLD_SIZE")


class ProcessFailed(RuntimeError):
    """Another process of the run failed; its message is this error's message."""


def launched_processes() -> int:
    """How many processes the launcher started (1 when run directly)."""
    for name in WORLD_SIZE_VARIABLES:
        value = os.environ.get(name, "")
        if value.isdigit() and int(value) > 1:
            return int(value)
    return 1


def wants_cpu(device: str | torch.device | None) -> bool:
    """Whether the processes of this run compute on the CPU (and so talk over gloo)."""
    if device is not None and str(device) != "auto":
        return torch.device(device).type == "cpu"
    if os.environ.get("ACCELERATE_USE_CPU", "").lower() in ("1", "true", "yes"):
        return True
    return not torch.cuda.is_available()


class Processes:
    """The processes of one run: ``num`` of them, this one is ``index`` (0 = main)."""

    def __init__(self, state: Any | None = None):
        self.state = state  # accelerate's PartialState, None when there is one process
        self.num = int(state.num_processes) if state is not None else 1
        self.index = int(state.process_index) if state is not None else 0

    @property
    def is_main(self) -> bool:
        """The process that writes the outputs and shows progress."""
        return self.index == 0

    def device(self, requested: str | torch.device | None) -> str | torch.device | None:
        """The device this process computes on: with several processes each takes its own
        accelerator (``cuda:<local rank>``) unless the CPU or a device index was asked for."""
        if self.state is None or (requested is not None and str(requested) not in ("auto", "cuda")):
            return requested
        device = torch.device(self.state.device)
        return torch.device("cpu") if device.type == "cpu" else device

    def shard(self, items: Sequence[T]) -> list[T]:
        """This process's contiguous share of ``items`` (the first processes take one more
        when they do not divide evenly); the shards in process order are ``items``."""
        items = list(items)
        if self.state is None:
            return items
        with self.state.split_between_processes(items) as mine:
            return list(mine)

    def together(self, work: Callable[[], T]) -> list[T]:
        """Run ``work`` on every process; the results of all of them, in process order.

        An error on any process is raised on every process (the failing ones raise their
        own, the others :class:`ProcessFailed` with its message), so none is left waiting."""
        if self.state is None:
            return [work()]
        from accelerate.utils import gather_object

        error: Exception | None = None
        try:
            result: Any = work()
        except Exception as err:  # reported to every process below
            error, result = err, None
        message = None if error is None else f"{error}"
        gathered = gather_object([(self.index, message, None if error else result)])
        failed = [(i, m) for i, m, _ in gathered if m is not None]
        if error is not None:
            raise error
        if failed:
            index, text = failed[0]
            raise ProcessFailed(f"process {index} of {self.num} failed: {text}")
        return [r for _, _, r in sorted(gathered, key=lambda g: g[0])]

    @contextmanager
    def main_first(self) -> Iterator[None]:
        """The main process runs the block first (it fills the caches: downloaded weights,
        the datasets Arrow cache, a fitted probe), the others after it, from those caches."""
        if self.state is None:
            yield
            return
        if not self.is_main:
            self.state.wait_for_everyone()
            yield
            return
        try:
            yield
        finally:
            # Also when the main process failed: the others then run the block and, on the
            # same data, stop with the same plain error instead of a lost-connection one.
            self.state.wait_for_everyone()


def processes(device: str | torch.device | None = None) -> Processes:
    """The processes of this run (accelerate's PartialState when several were launched)."""
    if launched_processes() == 1:
        return Processes(None)
    from accelerate import PartialState

    return Processes(PartialState(cpu=wants_cpu(device)))
