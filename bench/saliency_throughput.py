"""Saliency throughput: ``run_saliency`` images/s over the model's raw forward+backward, one run.

    python bench/saliency_throughput.py [--model tf_efficientnet_lite0] [--images 64]
        [--batch-size 32] [--device cpu] [--workers 1] [--rounds 2]

raw       = the classifier's module on already-decoded, already-normalised tensors in memory:
            forward, then backward of the predicted logits to every weight (what a naive
            Grad-CAM costs: one training-style forward+backward per image), batch
            ``--batch-size``. Also shown: a forward pass alone (inference mode).
saliency  = hf_bgbench.tasks.saliency.run_saliency on the same images: JPEG + mask decoding
            in the decode loader, Grad-CAM (grad-cam) at the automatically chosen layer,
            the three alignment scores per image and the gallery selection; timed over its
            image loop (``timing.saliency_seconds``: no model loading or data opening).

target: saliency / raw >= 0.8. The saliency task cuts the backward pass at the target layer
(the weights need no gradients), so on a CNN it costs about a forward pass plus the head's
backward, and the ratio can exceed 1.

Data: the first ``--images`` photos of ../shared/data/in9_samples as 224x224 ``original``
images with a centre-ellipse ``fg_mask`` in the official release layout (the mask's content
does not change the cost), built in a temp dir as bench/challenge_throughput.py does.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from challenge_throughput import DEFAULT_DATA, build_release  # noqa: E402

from hf_bgbench.models import load_classifier  # noqa: E402
from hf_bgbench.tasks.saliency import run_saliency  # noqa: E402


def raw_rates(clf, images: torch.Tensor, batch: int, device: torch.device) -> tuple[float, float]:
    """(forward+backward images/s, forward-only images/s) of ``clf.model`` on ``images``."""
    model = clf.model
    x_all = clf.preprocessing.normalize_batch(images).to(device)
    t0 = time.perf_counter()
    for start in range(0, len(x_all), batch):
        x = x_all[start : start + batch]
        logits = model(x)
        logits.gather(1, logits.argmax(1, keepdim=True)).sum().backward()
        model.zero_grad(set_to_none=True)
    fb = len(x_all) / (time.perf_counter() - t0)
    t0 = time.perf_counter()
    with torch.inference_mode():
        for start in range(0, len(x_all), batch):
            model(x_all[start : start + batch])
    fwd = len(x_all) / (time.perf_counter() - t0)
    return fb, fwd


def _decoded(release: Path) -> torch.Tensor:
    from torchvision.io import read_image

    files = sorted((release / "bg_challenge" / "original" / "val").rglob("*.JPEG"))
    return torch.stack([read_image(str(f)) for f in files])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--model", default="tf_efficientnet_lite0")
    ap.add_argument("--data", default=str(DEFAULT_DATA), help="folder of labelled photos")
    ap.add_argument("--images", type=int, default=64)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--workers", type=int, default=1, help="decode workers of run_saliency")
    ap.add_argument("--rounds", type=int, default=2, help="alternating timed rounds (best kept)")
    args = ap.parse_args()

    device = torch.device(args.device)
    clf = load_classifier(args.model, device=str(device))
    clf.to(device)
    print(
        f"{args.model} on {device}, {torch.get_num_threads()} torch threads, "
        f"{args.images} images, batch {args.batch_size}, {args.workers} decode worker(s)"
    )
    with tempfile.TemporaryDirectory() as tmp:
        release = build_release(Path(args.data), Path(tmp), args.images, 0)
        images = _decoded(release)
        raw_rates(clf, images[: args.batch_size], args.batch_size, device)  # warm-up
        fb = fwd = sal = 0.0
        for _ in range(args.rounds):  # alternate, keep each one's best: machine drift cancels
            round_fb, round_fwd = raw_rates(clf, images, args.batch_size, device)
            fb, fwd = max(fb, round_fb), max(fwd, round_fwd)
            doc = run_saliency(
                clf,
                str(release),
                batch_size=args.batch_size,
                device=device,
                num_workers=args.workers,
                progress=False,
            )
            sal = max(sal, doc["timing"]["images_per_second"])
    print(f"raw forward+backward : {fb:8.1f} images/s")
    print(f"raw forward only     : {fwd:8.1f} images/s (inference mode)")
    print(
        f"saliency             : {sal:8.1f} images/s ({doc['n_images']} images, layer "
        f"{doc['target_layer']['name']}, delta density {doc['delta_density']:.3f})"
    )
    verdict = "meets" if sal / fb >= 0.8 else "MISSES"
    print(f"saliency / raw forward+backward = {sal / fb:.2f} ({verdict} the 0.8 target)")


if __name__ == "__main__":
    main()
