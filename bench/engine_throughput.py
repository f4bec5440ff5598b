"""Engine throughput vs raw model forward, same model, same images, one run.

    python bench/engine_throughput.py [--model tf_efficientnet_lite0] [--images N] [--batch-size 32]

raw   = model forward only, on tensors decoded and transformed beforehand (the ceiling);
engine = hf_bgbench.engine.predict on the same images from a datasets.Dataset (decode,
transform, forward, label mapping, no cache). Target: engine / raw >= 0.9.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch

from hf_bgbench.benchmarks import get_benchmark
from hf_bgbench.data.sources import load_variant, resolve_source
from hf_bgbench.engine import predict
from hf_bgbench.mapping import LabelMapper
from hf_bgbench.models import load_classifier

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "in9_samples"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--model", default="tf_efficientnet_lite0")
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--images", type=int, default=186)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--workers", type=int, default=None)
    args = ap.parse_args()

    spec = get_benchmark("in9")
    source = resolve_source(args.data, spec)
    ds = load_variant(source, "original", spec)
    ds = ds.select(range(min(args.images, len(ds))))
    clf = load_classifier(args.model, device="cpu")
    transform = clf.preprocessing.full_transform()
    mapper = LabelMapper.for_model(clf.label_space, spec)
    print(
        f"{len(ds)} images, {args.model}, batch {args.batch_size}, "
        f"{torch.get_num_threads()} torch threads"
    )

    tensors = torch.stack([transform(row["image"]) for row in ds])
    batches = list(torch.split(tensors, args.batch_size))
    with torch.inference_mode():
        clf.logits(batches[0])  # warm-up
        t0 = time.perf_counter()
        for b in batches:
            clf.logits(b)
        raw = len(ds) / (time.perf_counter() - t0)

    t0 = time.perf_counter()
    run = predict(
        clf,
        ds,
        mapper,
        transform,
        batch_size=args.batch_size,
        num_workers=args.workers,
        device="cpu",
        progress=False,
    )
    engine = len(run.predictions) / (time.perf_counter() - t0)
    print(f"raw forward : {raw:7.2f} images/s")
    print(f"engine      : {engine:7.2f} images/s (decode + transform + forward + mapping)")
    print(f"ratio engine/raw = {engine / raw:.3f} (target >= 0.9)")


if __name__ == "__main__":
    main()
