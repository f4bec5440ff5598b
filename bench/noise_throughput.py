"""Noise-analysis throughput: noisy images evaluated per second by ``run_noise`` over the raw
forward images per second of the same model (target >= 0.9), one run.

    python bench/noise_throughput.py [--model tf_efficientnet_lite0] [--images 8]
        [--trials 10] [--levels 30 60 90 120 150 180 210] [--batch-size N]
        [--device cpu]   (--batch-size: the task's default, 8 on a CPU)

raw forward = ``ModelStep.predict`` on batches of ``--batch-size`` real 224x224 photos already
              decoded on the device (normalisation, mapping, the forward; nothing else);
noise       = ``hf_bgbench.tasks.noise.run_noise`` over the same photos: decoding each photo
              and its mask once, drawing the seeded noise on the device, compositing the
              object and background copies of every trial, the clean forwards, the noisy
              forwards (counted: images x levels x 2 x trials). ``timing.noise_seconds`` is the
              whole loop; the summary (bootstrap, tables) and the model load are reported apart.

Data: ``--data`` (any IN-9 folder with masks, e.g. one from ``bgbench build in9``), or by
default a release built in a temp dir from ../shared/data/in9_samples (224 crops as
``original`` with a centre-ellipse ``fg_mask``; the content does not change the cost).
The two measurements alternate for ``--rounds`` rounds and each keeps its best, so machine
drift (other jobs on the cores) cancels.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from torchvision import transforms

from hf_bgbench.benchmarks import get_benchmark
from hf_bgbench.data.loader import decode_loader, iterate
from hf_bgbench.data.sources import load_variant, resolve_source
from hf_bgbench.inference.allocator import keep_freed_memory
from hf_bgbench.inference.mapping import LabelMapper
from hf_bgbench.inference.model_step import ModelStep
from hf_bgbench.models import load_classifier
from hf_bgbench.models.devices import default_batch_size
from hf_bgbench.tasks.noise import ACCELERATOR_BATCH_SIZE, run_noise

PHOTOS = Path(__file__).resolve().parents[2] / "shared" / "data" / "in9_samples"


def ellipse_release(photos_dir: Path, root: Path, n: int) -> Path:
    """``n`` seeded photos as 224 crops in the official layout (original + fg_mask)."""
    spec = get_benchmark("in9")
    photos = load_variant(resolve_source(str(photos_dir), spec), "original", spec)
    crop = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224)])
    yy, xx = np.mgrid[:224, :224]
    ellipse = (((xx - 112) / 70.0) ** 2 + ((yy - 112) / 85.0) ** 2 <= 1).astype(np.uint8)
    base = root / "bg_challenge"
    for y, name in enumerate(spec.classes):  # every class folder must exist
        for part in ("original", "fg_mask"):
            (base / part / "val" / f"{y:02d}_{name}").mkdir(parents=True, exist_ok=True)
    for j in np.random.default_rng(0).permutation(len(photos))[:n].tolist():
        row = photos[j]
        folder = f"{row['label']:02d}_{spec.classes[row['label']]}"
        image = crop(row["image"].convert("RGB"))
        image.save(base / "original" / "val" / folder / f"{row['id']}.JPEG", quality=90)
        np.save(base / "fg_mask" / "val" / folder / f"{row['id']}.npy", ellipse)
    return root


def raw_forward_rate(step: ModelStep, images: torch.Tensor, labels: torch.Tensor, n: int, bs: int):
    """Images per second of ``step.predict`` alone over ``n`` images in batches of ``bs``."""
    reps = -(-n // len(images))
    pool, pool_labels = images.repeat(reps, 1, 1, 1)[:n], labels.repeat(reps)[:n]
    if step.cuda:
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    for start in range(0, n, bs):
        step.predict(pool[start : start + bs], pool_labels[start : start + bs])
    if step.cuda:
        torch.cuda.synchronize()
    return n / (time.perf_counter() - t0)


def main() -> None:
    keep_freed_memory()  # as every bgbench command does: the raw forward must not page-fault
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--model", default="tf_efficientnet_lite0")
    ap.add_argument("--data", default=None, help="an IN-9 folder with masks (default: built)")
    ap.add_argument("--photos", default=str(PHOTOS), help="photos to build the default from")
    ap.add_argument("--images", type=int, default=8, help="images (a seeded subset of --data)")
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--levels", type=float, nargs="+", default=None)
    ap.add_argument("--batch-size", type=int, default=None, help="the task's default")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()

    device = torch.device(args.device)
    if args.batch_size is None:
        args.batch_size = default_batch_size(device, ACCELERATOR_BATCH_SIZE)
    clf = load_classifier(args.model, device=str(device))
    spec = get_benchmark("in9")
    step = ModelStep(clf, LabelMapper.for_model(clf.label_space, spec), device)
    print(
        f"{args.model} on {device}, {torch.get_num_threads()} torch threads, {args.images} "
        f"images, {args.trials} trials, batch {args.batch_size}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        release = args.data or str(ellipse_release(Path(args.photos), Path(tmp), args.images))
        ds = resolve_source(release, spec).load("original")
        rows = np.random.default_rng(0).permutation(len(ds))[: args.images].tolist()
        batches = list(iterate(decode_loader(ds, rows, batch_size=len(rows))))
        images = batches[0].images.to(device)
        labels = batches[0].labels
        with torch.inference_mode():  # warm-up: neither side pays the first-call cost
            step.predict(
                images[:1].repeat(args.batch_size, 1, 1, 1), labels[:1].repeat(args.batch_size)
            )
        raw = noisy = 0.0
        for _ in range(args.rounds):
            t0 = time.perf_counter()
            doc = run_noise(
                clf,
                release,
                max_images=args.images if args.data else None,
                levels=args.levels,
                trials=args.trials,
                batch_size=args.batch_size,
                device=device,
                num_workers=0,
                progress=False,
            )
            wall = time.perf_counter() - t0
            timing = doc["timing"]
            noisy = max(noisy, timing["noisy_images_per_second"])
            raw = max(
                raw, raw_forward_rate(step, images, labels, timing["noisy_images"], args.batch_size)
            )
    print(
        f"raw forward : {raw:8.1f} images/s (ModelStep.predict on decoded 224x224 photos)\n"
        f"noise       : {noisy:8.1f} noisy images/s ({timing['noisy_images']} noisy + "
        f"{doc['n_images']} clean forwards in {timing['noise_seconds']:.1f} s; whole call "
        f"{wall:.1f} s incl. summary and bootstrap)\n"
        f"ratio noise/raw = {noisy / raw:.3f} (target >= 0.9); RFS {doc['rfs']:+.3f}, "
        f"a_fg {doc['a_fg']:.3f}, a_bg {doc['a_bg']:.3f}"
    )


if __name__ == "__main__":
    main()
