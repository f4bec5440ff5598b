"""Engine throughput vs raw model forward, same model, same images, one run.

    python bench/engine_throughput.py [--model tf_efficientnet_lite0] [--repeat 4] [--batch-size 32]

raw    = model forward only, on tensors decoded and transformed beforehand (the ceiling);
engine = hf_bgbench.inference.engine.predict (decode loader + model step) on the same
         images (decode, transform, forward, label mapping, no cache). Target: engine / raw >= 0.9.

Two workloads: the benchmark's own input (224x224 release JPEGs made from the photos, the
"precropped" path bgbench evaluate takes on IN-9 variants) and the raw photos (resize +
centre crop, the path for a plain photo folder).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import datasets
import numpy as np
import torch
from torchvision import transforms

from hf_bgbench.benchmarks import get_benchmark
from hf_bgbench.data.sources import load_variant, resolve_source
from hf_bgbench.inference.engine import predict
from hf_bgbench.inference.mapping import LabelMapper
from hf_bgbench.inference.model_step import ModelStep
from hf_bgbench.models import load_classifier

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "in9_samples"


def _raw_forward(clf, batches: list[torch.Tensor]) -> float:
    """images/s of the model alone on ready-made tensors."""
    with torch.inference_mode():
        clf.logits(batches[0])  # warm-up
        t0 = time.perf_counter()
        for b in batches:
            clf.logits(b)
        return sum(len(b) for b in batches) / (time.perf_counter() - t0)


def _release_from_photos(photos: datasets.Dataset, root: Path) -> Path:
    """The benchmark's real input format: 224x224 JPEGs in the official release layout
    (resize 256, centre crop 224, as the published variants were made)."""
    crop = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224)])
    names = get_benchmark("in9").classes
    for row in photos:
        folder = (
            root / "bg_challenge" / "original" / "val" / f"{row['label']:02d}_{names[row['label']]}"
        )
        folder.mkdir(parents=True, exist_ok=True)
        crop(row["image"].convert("RGB")).save(folder / f"{row['id']}.JPEG", quality=90)
    for y, name in enumerate(names):  # every class folder must exist
        (root / "bg_challenge" / "original" / "val" / f"{y:02d}_{name}").mkdir(
            parents=True, exist_ok=True
        )
    return root


def measure(
    clf, spec, data: str, repeat: int, rounds: int, batch_size: int, workers: int | None
) -> float:
    """Median over ``rounds`` of engine / raw, each raw timed right before and after."""
    source = resolve_source(data, spec)
    base = load_variant(source, "original", spec)
    ds = datasets.concatenate_datasets(
        [base.map(lambda r, k=k: {"id": f"{r['id']}#{k}"}) for k in range(repeat)]
    )
    pre = clf.preprocessing
    kind = "precropped" if source.precropped else "full"
    per_image = getattr(pre, f"{kind}_transform")
    mapper = LabelMapper.for_model(clf.label_space, spec)
    tensors = torch.stack([per_image()(row["image"]) for row in base])
    batches = list(torch.split(tensors.repeat(repeat, 1, 1, 1), batch_size))
    print(f"\n[{source.kind}, {kind} transform] {len(ds)} images ({len(base)} x {repeat})")
    ratios = []
    raw_after = _raw_forward(clf, batches)
    for i in range(rounds):
        raw_before = raw_after
        t0 = time.perf_counter()
        run = predict(
            ModelStep(clf, mapper, "cpu"),
            ds,
            image_transform=per_image(normalize=False),
            batch_size=batch_size,
            num_workers=workers,
            progress=False,
        )
        engine = len(run.predictions) / (time.perf_counter() - t0)
        raw_after = _raw_forward(clf, batches)
        raw = (raw_before + raw_after) / 2  # neighbours in time, to cancel machine drift
        ratios.append(engine / raw)
        print(
            f"round {i + 1}: raw {raw:6.2f} img/s (before {raw_before:.2f}, after "
            f"{raw_after:.2f}), engine {engine:6.2f} img/s, ratio {engine / raw:.3f}"
        )
    median = float(np.median(ratios))
    print(f"ratio engine/raw = {median:.3f} (median of {rounds}; target >= 0.9)")
    return median


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--model", default="tf_efficientnet_lite0")
    ap.add_argument("--data", default=str(DEFAULT_DATA), help="folder of labelled photos")
    ap.add_argument(
        "--repeat",
        type=int,
        default=4,
        help="pass over the images this many times "
        "(as distinct ids, decoded anew) so start-up is amortised as in a real run",
    )
    ap.add_argument("--rounds", type=int, default=3, help="alternating raw/engine rounds")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--workers", type=int, default=None)
    args = ap.parse_args()

    spec = get_benchmark("in9")
    clf = load_classifier(args.model, device="cpu")
    print(f"{args.model}, batch {args.batch_size}, {torch.get_num_threads()} torch threads")
    photos = load_variant(resolve_source(args.data, spec), "original", spec)
    with tempfile.TemporaryDirectory() as tmp:
        release = _release_from_photos(photos, Path(tmp))
        measure(clf, spec, str(release), args.repeat, args.rounds, args.batch_size, args.workers)
    measure(clf, spec, args.data, args.repeat, args.rounds, args.batch_size, args.workers)


if __name__ == "__main__":
    main()
