"""Can decoding overlap the forward on this CPU? The forward alone against the same forward fed
by decoding serially, by a decode thread, by a decode process and by one at the lowest
scheduling priority (``SCHED_IDLE``), on the JPEGs of an IN-9 build.

    python bench/decode_overlap.py --data IN9_BUILD [--rounds 3] [--batch-size 8]

Each round runs raw, serial, bursts, thread, process, idle process, raw; printed as images/s and
their median over the rounds against the raw forward's. Run it with
``OMP_WAIT_POLICY=PASSIVE`` to see what the forward's threads waiting asleep (instead of
spinning) changes: the overlap, and the forward's own speed.

Then decoding's cost per image alone and right after a forward, by burst (batches decoded
together), and after a 5 ms pause (``GOMP_SPINCOUNT=0`` in the environment: threads that
never spin).

On 2 cores (2026-11-28, an IN-9 build of 63 images per variant, 3 rounds): serial 0.944 of
the raw forward, bursts 0.982, a thread 0.756, a process 0.878, an idle-priority process
0.841 (an earlier run: serial 0.927, thread 0.719, process 0.813, idle 0.812); with
``OMP_WAIT_POLICY=PASSIVE`` the thread reached 0.976 of a raw forward that was itself 27%
slower (108 images/s against 147). Decoding right after a forward (4 runs) cost 0.42-0.45 ms
per image one batch at a time, 0.37-0.39 in bursts of 4 and 0.35-0.37 of 8 (0.34-0.42
alone); a 5 ms pause did not change it (0.44-0.45), nor did ``GOMP_SPINCOUNT=0`` in an
earlier probe: the forward evicts the decoder from the caches.
Hence the engine's CPU default: decode in the main process, between forwards, in bursts
(:mod:`hf_bgbench.data.pipeline`).
"""

from __future__ import annotations

import argparse
import io
import os
import queue
import threading
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
import torch  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
from PIL import Image  # noqa: E402

from hf_bgbench.data.pipeline import BURST_IMAGES  # noqa: E402
from hf_bgbench.inference.allocator import keep_freed_memory  # noqa: E402
from hf_bgbench.inference.model_step import ModelStep  # noqa: E402
from hf_bgbench.models import load_classifier  # noqa: E402


def jpeg_batches(build: Path, batch_size: int) -> list[list[bytes]]:
    """The encoded images of every variant of ``build`` (Hub layout), in batches."""
    blobs: list[bytes] = []
    for part in sorted(build.glob("data/*/*.parquet")):
        blobs += [d["bytes"] for d in pq.read_table(part, columns=["image"])["image"].to_pylist()]
    return [blobs[at : at + batch_size] for at in range(0, len(blobs), batch_size)]


def decode(batch: list[bytes]) -> torch.Tensor:
    arrays = [np.asarray(Image.open(io.BytesIO(b)).convert("RGB")) for b in batch]
    return torch.from_numpy(np.stack(arrays)).permute(0, 3, 1, 2).contiguous()


def _producer(batches, out, idle: bool) -> None:
    """Decode ``batches`` into ``out`` (a queue), then None; in a process, arrays."""
    in_process = idle is not None
    if in_process:
        torch.set_num_threads(1)
        if idle:
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    for batch in batches:
        x = decode(batch)
        out.put(x.numpy() if in_process else x)
    out.put(None)


def fed(step: ModelStep, batches, how: str) -> float:
    """images/s of the forward fed by decoding ``how``: serial (a batch, then its forward),
    bursts (:data:`~hf_bgbench.data.pipeline.BURST_IMAGES` at a time, then their forwards),
    thread, process, idle."""
    n = sum(len(b) for b in batches)
    t0 = time.perf_counter()
    if how == "serial":
        for batch in batches:
            step.logits(decode(batch))
        return n / (time.perf_counter() - t0)
    if how == "bursts":  # as the engine decodes in the main process: a few batches at a time
        per_burst = max(1, BURST_IMAGES // len(batches[0]))
        for at in range(0, len(batches), per_burst):
            for x in [decode(b) for b in batches[at : at + per_burst]]:
                step.logits(x)
        return n / (time.perf_counter() - t0)
    if how == "thread":
        out: queue.Queue = queue.Queue(3)
        worker = threading.Thread(target=_producer, args=(batches, out, None), daemon=True)
    else:
        out = mp.get_context("fork").Queue(3)
        worker = mp.get_context("fork").Process(
            target=_producer, args=(batches, out, how == "idle"), daemon=True
        )
    worker.start()
    while (x := out.get()) is not None:
        step.logits(torch.as_tensor(x))
    worker.join()
    return n / (time.perf_counter() - t0)


def decode_after_forward(step: ModelStep, batches, per_burst: int, pause: float = 0.0) -> float:
    """ms per image of decoding ``per_burst`` batches right after a forward (after ``pause``
    seconds more): what the caches the forward leaves cost the decoder."""
    x, spent = decode(batches[0]), 0.0
    for at in range(0, len(batches), per_burst):
        step.logits(x)
        time.sleep(pause)
        t0 = time.perf_counter()
        for batch in batches[at : at + per_burst]:
            decode(batch)
        spent += time.perf_counter() - t0
    return 1e3 * spent / sum(len(b) for b in batches)


def print_decode_costs(step: ModelStep, batches) -> None:
    """Decoding alone, and right after a forward by burst size (and after a 5 ms pause: the
    forward's threads have stopped spinning by then)."""
    t0 = time.perf_counter()
    for batch in batches:
        decode(batch)
    alone = 1e3 * (time.perf_counter() - t0) / sum(len(b) for b in batches)
    costs = [f"alone {alone:.3f}"]
    for per_burst in (1, 2, 4, 8):
        costs.append(f"{per_burst} batch(es) {decode_after_forward(step, batches, per_burst):.3f}")
    costs.append(f"1 batch after a 5 ms pause {decode_after_forward(step, batches, 1, 0.005):.3f}")
    print("  decoding ms/image, right after a forward: " + ", ".join(costs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="a `bgbench build in9` folder")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=8)
    args = parser.parse_args()
    keep_freed_memory()
    batches = jpeg_batches(args.data, args.batch_size)
    step = ModelStep(load_classifier("tf_efficientnet_lite0", device="cpu"), None, "cpu")
    decoded = [decode(b) for b in batches]
    n = sum(len(b) for b in batches)

    def raw() -> float:
        t0 = time.perf_counter()
        for x in decoded:
            step.logits(x)
        return n / (time.perf_counter() - t0)

    raw()  # warm-up
    feeds = ("serial", "bursts", "thread", "process", "idle")
    rates: dict[str, list[float]] = {k: [] for k in ("raw", *feeds)}
    for _ in range(args.rounds):
        rates["raw"].append(raw())
        for how in feeds:
            rates[how].append(fed(step, batches, how))
        rates["raw"].append(raw())
    base = float(np.median(rates["raw"]))
    print(
        f"{n} images, batch {args.batch_size}, {torch.get_num_threads()} torch threads, "
        f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', '(unset)')}"
    )
    for how, values in rates.items():
        median = float(np.median(values))
        print(
            f"  {how:<8} {median:7.1f} images/s  {median / base:.3f} of raw  "
            f"({' '.join(f'{v:.1f}' for v in values)})"
        )
    print_decode_costs(step, batches)


if __name__ == "__main__":
    main()
