"""One run's decode pipeline: the worker processes are started once and serve every pass of
the run (each variant of an evaluate run, the challenge's backgrounds then its foregrounds,
a linear probe's held-out pass and each training epoch),
where a ``DataLoader`` per pass started its workers anew each time -- on 2 cores the decode
ceiling of a 186-image variant was 2,540 images/s in the main process and 950 with two fresh
workers (``bench/engine_throughput.py``), the workers' start costing more than the decoding.

Where the decoding runs is measured, not assumed, unless ``--workers`` says: the first
batches of a run are decoded in the main process while the pipeline times their decoding
and the caller's use of each batch (the forward); :func:`workers_for` then sizes the workers
so decoding keeps pace, within the cores the forward leaves free, or keeps decoding in the
main process where it leaves none. On a CPU whose cores the forward's threads all use, the
cap is 0: there, a decode
process or thread took the forward's CPU (it ran at 0.81 and 0.72 of its raw speed against
0.93 decoding serially, ``bench/decode_overlap.py``). The choice is recorded
(:meth:`DecodePipeline.record`). In the main process, batches are decoded a few at a time
(:data:`BURST_IMAGES`), so a forward's data does not evict the decoder's between every two.
"""

from __future__ import annotations

import math
import pickle
import signal
import time
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import torch
import torch.multiprocessing  # noqa: F401  (tensors from the workers travel in shared memory)

from hf_bgbench.data.loader import Batch, DataError, DecodedRows, Pending, collate_rows

PILOT_BATCHES = 3  # batches decoded in the main process and timed before the choice
IN_FLIGHT_PER_WORKER = 2  # batches each worker may decode ahead of the caller
HEADROOM = 1.25  # workers sized for decoding a quarter slower than the pilot measured
# decoding in the main process: batches decoded together, then used, at least this many
# images at a time. Right after a forward has filled the caches with its own data, decoding
# cost 0.42-0.45 ms per 224x224 JPEG one batch of 8 at a time, against 0.37-0.39 in bursts of
# 4 batches and 0.35-0.37 of 8 (0.34-0.42 with no forward between; 2 cores,
# tf_efficientnet_lite0; bench/decode_overlap.py).
BURST_IMAGES = 32


def workers_for(decode_seconds: float, use_seconds: float, cap: int) -> int:
    """Decode workers for batches that take ``decode_seconds`` to decode and ``use_seconds``
    for the caller to use (the forward), at most ``cap`` -- the cores the forward leaves
    free: none when it leaves none (decoding then runs in the main process, between
    forwards), else as many as keep decoding ahead of the forward with :data:`HEADROOM`,
    at least one (on a free core a worker's decoding costs the forward nothing)."""
    if cap <= 0:
        return 0
    needed = math.ceil(HEADROOM * decode_seconds / max(use_seconds, 1e-9))
    return min(cap, max(1, needed))


class DecodePipeline:
    """Decoded batches of :class:`~hf_bgbench.data.loader.DecodedRows`, pass after pass.

    ``workers``: a fixed number of worker processes (0: the main process decodes), or None
    to measure on the first :data:`PILOT_BATCHES` batches and choose at most ``cap`` with
    :func:`workers_for`. Close it (or use it as a context manager) to stop the workers."""

    def __init__(self, workers: int | None, cap: int = 0):
        self.chosen_by = "--workers" if workers is not None else "pilot"
        self.requested = workers
        self.shared = False  # set by shared_pipeline: the runs inside it must not close it
        self.workers = workers
        self.cap = cap
        self.starts = 0  # times worker processes were started (at most 1 per run)
        self.timed: list[tuple[float, float, int]] = []  # pilot: (decode s, use s, images)
        self._executor: ProcessPoolExecutor | None = None
        self._passes = 0

    def __enter__(self) -> DecodePipeline:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None

    def record(self) -> dict[str, Any]:
        """What ran and why (recorded in results' settings). ``pilot_use_ms_per_image`` is what
        the caller spent on each pilot batch: the forward in evaluate and noise, but only
        storing the decoded backgrounds in the challenge (its first pass), which has no
        forward to time."""
        out: dict[str, Any] = {"workers": self.workers or 0, "chosen_by": self.chosen_by}
        if self.timed:
            images = sum(n for _, _, n in self.timed)
            out["pilot_decode_ms_per_image"] = round(1e3 * self._decode_seconds() / images, 3)
            out["pilot_use_ms_per_image"] = round(1e3 * self._use_seconds() / images, 3)
        out["worker_starts"] = self.starts
        return out

    def batches(self, rows: DecodedRows, batch_size: int) -> Iterator[Batch | str | Pending]:
        """The collated batches of ``rows`` (:func:`~hf_bgbench.data.loader.collate_rows`)
        in order, each at most ``batch_size`` rows."""
        chunks = [
            list(range(at, min(at + batch_size, len(rows))))
            for at in range(0, len(rows), batch_size)
        ]
        if self.workers is None:
            chunks = yield from self._pilot(rows, chunks)
        if not self.workers:
            yield from _in_bursts(rows, chunks, batch_size)
        elif chunks:
            yield from self._from_workers(rows, chunks)

    def _pilot(self, rows: DecodedRows, chunks: list[list[int]]):
        """Decode and time batches in this process until the choice can be made; returns the
        chunks still to decode."""
        while chunks and len(self.timed) < PILOT_BATCHES:
            chunk = chunks.pop(0)
            t0 = time.perf_counter()
            batch = collate_rows([rows[i] for i in chunk])
            t1 = time.perf_counter()
            yield batch  # the caller uses it (the forward) before asking for the next one
            self.timed.append((t1 - t0, time.perf_counter() - t1, len(chunk)))
        if len(self.timed) >= PILOT_BATCHES:
            self.workers = workers_for(self._decode_seconds(), self._use_seconds(), self.cap)
        return chunks

    def _decode_seconds(self) -> float:
        return sum(d for d, _, _ in self.timed)

    def _use_seconds(self) -> float:
        # the first use pays one-off costs (a first forward's allocations, cuDNN's plans):
        # each batch counts at the pace of the fastest one
        fastest = min(u / n for _, u, n in self.timed)
        return fastest * sum(n for _, _, n in self.timed)

    def _from_workers(self, rows: DecodedRows, chunks: list[list[int]]):
        executor = self._start()
        self._passes += 1
        blob = pickle.dumps(rows)  # once per pass; each worker unpickles it once
        pending: deque[Future] = deque()
        todo = iter(chunks)
        try:
            while True:
                while len(pending) < self.workers * IN_FLIGHT_PER_WORKER:
                    chunk = next(todo, None)
                    if chunk is None:
                        break
                    pending.append(executor.submit(_decode_chunk, self._passes, blob, chunk))
                if not pending:
                    return
                yield _result(pending.popleft())
        finally:
            for future in pending:
                future.cancel()

    def _start(self) -> ProcessPoolExecutor:
        if self._executor is None:
            context = torch.multiprocessing.get_context("fork")
            self._executor = ProcessPoolExecutor(
                self.workers, mp_context=context, initializer=_worker_setup
            )
            self.starts += 1
        return self._executor


def _in_bursts(rows: DecodedRows, chunks: list[list[int]], batch_size: int):
    """The collated batches of ``chunks``, decoded :data:`BURST_IMAGES` images at a time
    (at least one batch) and then handed out one by one, in order."""
    per_burst = max(1, BURST_IMAGES // max(batch_size, 1))
    for at in range(0, len(chunks), per_burst):
        yield from [collate_rows([rows[i] for i in chunk]) for chunk in chunks[at : at + per_burst]]


_SHARED: ContextVar[DecodePipeline | None] = ContextVar("shared_pipeline", default=None)


@contextmanager
def shared_pipeline(workers: int | None, cap: int = 0) -> Iterator[DecodePipeline]:
    """One pipeline for every run started inside the block that asks for the same
    ``workers`` (a report card's tasks): its workers start once for all of them."""
    pipeline = DecodePipeline(workers, cap)
    pipeline.shared = True
    token = _SHARED.set(pipeline)
    try:
        yield pipeline
    finally:
        _SHARED.reset(token)
        pipeline.close()


def pipeline_for(workers: int | None, cap: int = 0) -> DecodePipeline:
    """The pipeline a run asking for ``workers`` uses: the enclosing
    :func:`shared_pipeline`'s when it asks for the same, else a new one of its own."""
    shared = _SHARED.get()
    if shared is not None and shared.requested == workers:
        return shared
    return DecodePipeline(workers, cap)


def _result(future: Future) -> Any:
    try:
        return future.result()
    except BrokenProcessPool:
        raise DataError(
            "A decode worker process died (killed, or out of memory) before it returned its "
            "batch. Run again with fewer workers (--workers 0 decodes in the main process)."
        ) from None


_ROWS: dict[int, DecodedRows] = {}  # in a worker: the rows of the pass it serves


def _worker_setup() -> None:
    torch.set_num_threads(1)  # decoding is per image; the main process's forward has the cores
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the main process's to handle


def _decode_chunk(key: int, blob: bytes, indices: Sequence[int]) -> Batch | str | Pending:
    """In a worker: rows ``indices`` of the pass ``key`` decoded and collated."""
    rows = _ROWS.get(key)
    if rows is None:
        _ROWS.clear()  # the previous pass is done: keep one pass's rows only
        rows = _ROWS[key] = pickle.loads(blob)
    return collate_rows([rows[i] for i in indices])
