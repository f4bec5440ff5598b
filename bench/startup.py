"""Start-up cost of the ``bgbench`` command: wall time and peak memory of commands that load
no model -- ``--version``, ``--help``, a sub-command's ``--help``, a misspelt flag, a
``--data`` that is neither a path nor a Hub id, a model id no accepted form can hold -- and
of an unknown model id refused on a machine without a network (the Hub probed once, then the
local cache only). Each command run ``--rounds`` times in a fresh process; the median.

    python bench/startup.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

COMMANDS = {
    "--version": ["--version"],
    "--help": ["--help"],
    "evaluate --help": ["evaluate", "--help"],
    "a misspelt flag": ["evaluate", "--batchsize", "8"],
    "a --data that can be nothing": ["evaluate", "--data", "/nowhere/x/y", "--quiet"],
    "a model id no form can hold": ["evaluate", "resnet 50!", "--quiet"],
    "unknown model id, no network": [
        "evaluate",
        "someone/unknown-model",
        "--data",
        "nowhere/x",
        "--quiet",
    ],
}


def one(argv: list[str], offline: bool) -> tuple[float, float]:
    """(seconds, peak MB of the child) of ``bgbench argv``."""
    env = dict(os.environ)
    if not offline:
        env.pop("HF_HUB_OFFLINE", None)
    start = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-m", "hf_bgbench", *argv],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _, _, usage = os.wait4(child.pid, 0)  # this child's own peak, not every child's
    child.returncode = 0  # reaped above
    return time.perf_counter() - start, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(f"{'command':34} {'seconds (median)':>17} {'peak MB':>8}")
    for name, argv in COMMANDS.items():
        runs = [one(argv, offline="network" not in name) for _ in range(args.rounds)]
        seconds = statistics.median(s for s, _ in runs)
        peak = max(m for _, m in runs)
        print(f"{name:34} {seconds:17.2f} {peak:8.0f}")


if __name__ == "__main__":
    main()
