"""The Backgrounds Challenge schedule alone (no model): milliseconds per ``next_batch`` and a
digest of every pick, on seeded synthetic verdicts (2% of composites fool).

    python bench/schedule_speed.py [--cases 63x63x64 4050x300x64 4050x200x8 166x166x8]

A case is BACKGROUNDSxFOREGROUNDSxBATCH. The digest must not change when the schedule is made
faster: it is every (foreground, background) pair in the order evaluated. On a GPU the
schedule's time per batch adds to the forward's (5 ms for a batch of 64 of
tf_efficientnet_lite0 on an H100).

Measured on one core of this 2-core machine (one run each, digests equal):
``Schedule.next_batch`` took 3.1 -> 0.9 ms per batch (63x63x64), 3.7 -> 2.2 ms (4050x300x64),
1.5 -> 0.9 ms (4050x200x8) and 0.42 -> 0.29 ms (166x166x8) when the per-pick rescoring of one
background stopped indexing ``FoolingStats.scores`` with a one-element array (an int index:
one column, the same values). Folding that path back into ``scores`` itself (it had first been
a separate copy of the formula) measured the same within this host's noise: 0.93-1.72 against
1.57-1.65 ms and 2.07-2.60 against 2.23-2.62 ms, two alternating runs each.
"""

from __future__ import annotations

import argparse
import hashlib
import time

import numpy as np

from hf_bgbench.tasks.challenge.schedule import FoolingStats, Schedule


def run(n_bg: int, n_fg: int, batch: int, seed: int = 0) -> tuple[int, float, str]:
    """(batches, ms per next_batch, digest of the picks)."""
    rng = np.random.default_rng(seed)
    schedule = Schedule(np.arange(n_bg), batch, stats=FoolingStats(9, n_bg, seed))
    labels = rng.integers(0, 9, n_fg)
    fools = rng.random((n_fg, n_bg)) < 0.02
    prob_true = rng.random((n_fg, n_bg))
    admitted, batches, seconds, digest = 0, 0, 0.0, hashlib.sha256()
    while True:
        while schedule.wants() and admitted < n_fg:
            schedule.admit(admitted, labels[admitted])
            admitted += 1
        if not len(schedule):
            break
        t0 = time.perf_counter()
        keys, positions = schedule.next_batch()
        seconds += time.perf_counter() - t0
        digest.update(keys.tobytes() + positions.tobytes())
        wrong = (labels[keys] + 1) % 9
        preds = np.where(fools[keys, positions], wrong, labels[keys])
        schedule.record(keys, positions, preds, prob_true[keys, positions])
        batches += 1
    return batches, seconds / batches * 1e3, digest.hexdigest()[:16]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument(
        "--cases", nargs="+", default=["63x63x64", "4050x300x64", "4050x200x8", "166x166x8"]
    )
    args = ap.parse_args()
    for case in args.cases:
        n_bg, n_fg, batch = (int(v) for v in case.split("x"))
        batches, ms, digest = run(n_bg, n_fg, batch)
        print(
            f"{case:>12}: {batches:5d} batches, next_batch {ms:6.2f} ms per batch, picks {digest}"
        )


if __name__ == "__main__":
    main()
