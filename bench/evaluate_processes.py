"""``bgbench evaluate`` throughput with two processes (``accelerate launch``) over one, same
model, same data, same run; also checks that both give the same predictions.

    python bench/evaluate_processes.py [--sizes 64 1024] [--model tf_efficientnet_lite0]
        [--processes 2] [--batch-size 32] [--device cpu]

Each configuration scores a synthetic IN-9 ``original`` variant of each size (Hub layout,
written to a temporary folder; ``bench/evaluate_memory.py`` makes them) with no prediction
cache, as a user runs it:

    one  = python -m hf_bgbench evaluate MODEL --data D --variants original --no-cache
    many = accelerate launch --multi_gpu --num_processes P -m hf_bgbench evaluate ...

(on a machine without GPUs the processes talk over gloo; ``--multi_gpu`` is the launcher
that starts several). Throughput is the *marginal* rate -- (n_large - n_small) / (t_large -
t_small) -- so start-up (imports, model loading, the launcher) cancels out; the end-to-end
wall-time ratio on the large size is printed too. On a CPU the processes share its cores:
the ratio cannot exceed the cores, and threads per process are what ``accelerate launch``
sets (cores / processes).

Measured on a 2-core CPU (tf_efficientnet_lite0, batch 32, sizes 64 and 1,024): 32.4
images/s with one process, 36.1 with two -> 1.11x marginal throughput, 1.08x end to end.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from evaluate_memory import write_hub_folder  # noqa: E402  (bench/ is not a package)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(argv: list[str], env: dict[str, str], processes: int) -> float:
    """Wall seconds of ``bgbench evaluate ARGV`` with ``processes`` processes."""
    if processes == 1:
        command = [sys.executable, "-m", "hf_bgbench", *argv]
    else:
        command = [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu"]
        command += ["--num_processes", str(processes), "--num_machines", "1"]
        command += ["--mixed_precision", "no", "--dynamo_backend", "no"]
        command += ["--main_process_port", str(_free_port()), "-m", "hf_bgbench", *argv]
    t0 = time.perf_counter()
    proc = subprocess.run(command, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{proc.stderr[-3000:]}")
    return seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs=2, default=[64, 1024])
    ap.add_argument("--model", default="tf_efficientnet_lite0")
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="bgbench-processes-") as tmp:
        env = {**os.environ, "HF_HOME": f"{tmp}/hf_home", "HF_BGBENCH_CACHE": f"{tmp}/cache"}
        env.setdefault("HF_HUB_OFFLINE", "1")
        env.setdefault("HF_DATASETS_OFFLINE", "1")
        seconds: dict[tuple[int, int], float] = {}
        for n in args.sizes:
            folder = write_hub_folder(Path(tmp) / f"in9_{n}", n)
            for procs in (1, args.processes):
                out = Path(tmp) / f"out_{n}_{procs}"
                argv = ["evaluate", args.model, "--data", str(folder), "--variants", "original"]
                argv += ["--no-cache", "--quiet", "--output", str(out), "--device", args.device]
                argv += ["--batch-size", str(args.batch_size)]
                seconds[n, procs] = run(argv, env, procs)
                print(f"{n:6d} images, {procs} process(es): {seconds[n, procs]:7.1f} s", flush=True)
            one = pd.read_parquet(Path(tmp) / f"out_{n}_1" / "predictions" / "original.parquet")
            many = pd.read_parquet(
                Path(tmp) / f"out_{n}_{args.processes}" / "predictions" / "original.parquet"
            )
            if not (one["id"].equals(many["id"]) and one["pred"].equals(many["pred"])):
                raise SystemExit(f"{n} images: the predictions of 1 and {args.processes} differ")

    small, large = args.sizes
    rates = {
        p: (large - small) / (seconds[large, p] - seconds[small, p]) for p in (1, args.processes)
    }
    print(f"cores: {os.cpu_count()}; predictions identical: True")
    for p, rate in rates.items():
        print(f"marginal throughput, {p} process(es): {rate:7.2f} images/s")
    print(
        f"{args.processes} processes / 1 process: {rates[args.processes] / rates[1]:.2f}x "
        f"marginal throughput, {seconds[large, 1] / seconds[large, args.processes]:.2f}x "
        f"end-to-end on {large} images"
    )


if __name__ == "__main__":
    main()
