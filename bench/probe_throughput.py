"""Linear-probe feature extraction throughput vs raw model forward, same model, same images.

    python bench/probe_throughput.py [--model tf_efficientnet_lite0] [--repeat 4] [--rounds 3]

raw   = model forward only (``classifier.logits``), on tensors decoded, resized, cropped and
        normalised beforehand (the ceiling);
probe = :func:`hf_bgbench.probe.features.extract_features` -- what the probe runs over the train
        split: decode loader (decode + the model's eval resize / centre crop in workers) and
        ModelStep.features (penultimate features, no grad) -- on the same photos.
Target: probe / raw >= 0.9. Rounds alternate raw and probe; each probe round is compared
with the mean of the raw timings just before and just after it (machine drift cancels), and
the median ratio over the rounds is reported.
"""

from __future__ import annotations

import argparse
import time

import datasets
import numpy as np
import torch
from engine_throughput import DEFAULT_DATA, _raw_forward  # same photos, same ceiling

from hf_bgbench.benchmarks import get_benchmark
from hf_bgbench.data.sources import load_variant, resolve_source
from hf_bgbench.inference.allocator import keep_freed_memory
from hf_bgbench.inference.model_step import ModelStep
from hf_bgbench.models import load_classifier
from hf_bgbench.models.devices import CPU_BATCH_SIZE
from hf_bgbench.probe.features import extract_features


def measure(clf, ds: datasets.Dataset, base: datasets.Dataset, args) -> float:
    """Median over ``args.rounds`` of probe / raw."""
    pre = clf.preprocessing
    tensors = torch.stack([pre.full_transform()(row["image"]) for row in base])
    batches = list(torch.split(tensors.repeat(args.repeat, 1, 1, 1), args.batch_size))
    step = ModelStep(clf, device="cpu")
    ratios = []
    raw_after = _raw_forward(clf, batches)
    for i in range(args.rounds):
        raw_before = raw_after
        t0 = time.perf_counter()
        feats, _, skipped = extract_features(
            step,
            ds,
            pre.full_transform(normalize=False),
            args.batch_size,
            args.workers,
            False,
            "probe",
        )
        probe = (len(feats) + len(skipped)) / (time.perf_counter() - t0)
        raw_after = _raw_forward(clf, batches)
        raw = (raw_before + raw_after) / 2
        ratios.append(probe / raw)
        print(
            f"round {i + 1}: raw {raw:6.2f} img/s (before {raw_before:.2f}, after "
            f"{raw_after:.2f}), probe features {probe:6.2f} img/s ({feats.shape[1]}-d), "
            f"ratio {probe / raw:.3f}"
        )
    median = float(np.median(ratios))
    print(f"ratio probe-features/raw = {median:.3f} (median of {args.rounds}; target >= 0.9)")
    return median


def main() -> None:
    keep_freed_memory()  # as every bgbench command does: the raw forward must not page-fault
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--model", default="tf_efficientnet_lite0")
    ap.add_argument("--data", default=str(DEFAULT_DATA), help="folder of labelled photos")
    ap.add_argument("--benchmark", default="in9", help="whose class names the photos carry")
    ap.add_argument(
        "--repeat",
        type=int,
        default=4,
        help="pass over the photos this many times (as distinct ids, decoded anew)",
    )
    ap.add_argument("--rounds", type=int, default=3, help="alternating raw/probe rounds")
    ap.add_argument(
        "--batch-size", type=int, default=CPU_BATCH_SIZE, help="the probe's default on a CPU"
    )
    ap.add_argument("--workers", type=int, default=None, help="decode workers (default: engine's)")
    args = ap.parse_args()

    spec = get_benchmark(args.benchmark)
    clf = load_classifier(args.model, device="cpu")
    base = load_variant(resolve_source(args.data, spec), spec.reference_variant, spec)
    ds = datasets.concatenate_datasets(
        [base.map(lambda r, k=k: {"id": f"{r['id']}#{k}"}) for k in range(args.repeat)]
    )
    print(
        f"{args.model}, batch {args.batch_size}, {torch.get_num_threads()} torch threads, "
        f"{len(ds)} photos ({len(base)} x {args.repeat}), model's eval resize + centre crop"
    )
    measure(clf, ds, base, args)


if __name__ == "__main__":
    main()
