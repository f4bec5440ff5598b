"""Saliency throughput: ``run_saliency`` images/s over the model's raw forward+backward, one run.

    python bench/saliency_throughput.py [--model tf_efficientnet_lite0] [--images 64]
        [--batch-size N (the task's default: 8 on a CPU)] [--device cpu] [--workers 1]
        [--rounds 2]

raw       = the classifier's module on already-decoded, already-normalised tensors in memory:
            forward, then backward of the predicted logits to every weight (what a naive
            Grad-CAM costs: one training-style forward+backward per image), batch
            ``--batch-size``. Also shown: the same with the backward cut at the Grad-CAM
            layer (the least any Grad-CAM computes; saliency over it = the cost of
            decoding, grad-cam and the scores) and a forward pass alone (inference mode).
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
from challenge_throughput import DEFAULT_PHOTOS, release_from_photos  # noqa: E402

from hf_bgbench.inference.allocator import keep_freed_memory  # noqa: E402
from hf_bgbench.inference.cam import choose_target_layer  # noqa: E402
from hf_bgbench.models import load_classifier  # noqa: E402
from hf_bgbench.models.devices import default_batch_size  # noqa: E402
from hf_bgbench.tasks.saliency import ACCELERATOR_BATCH_SIZE, run_saliency  # noqa: E402


def _forward_backward(model: torch.nn.Module, x_all: torch.Tensor, batch: int) -> float:
    """Images/s of forward + backward of the predicted logits."""
    t0 = time.perf_counter()
    for start in range(0, len(x_all), batch):
        logits = model(x_all[start : start + batch])
        logits.gather(1, logits.argmax(1, keepdim=True)).sum().backward()
        model.zero_grad(set_to_none=True)
    return len(x_all) / (time.perf_counter() - t0)


def raw_rates(clf, images: torch.Tensor, batch: int, device: torch.device) -> dict[str, float]:
    """Images/s of ``clf.model`` on ``images`` (normalised once, in memory): forward+backward
    to every weight, forward+backward cut at the Grad-CAM layer (weights frozen, the layer's
    output the graph's leaf: the least any Grad-CAM must compute), forward alone."""
    model = clf.model
    x_all = clf.preprocessing.normalize_batch(images).to(device)
    rates = {"full": _forward_backward(model, x_all, batch)}
    with torch.no_grad():
        layer = choose_target_layer(model, lambda: model(x_all[:1])).module
    flags = [(p, p.requires_grad) for p in model.parameters()]
    for p, _ in flags:
        p.requires_grad_(False)
    handle = layer.register_forward_hook(lambda _m, _a, out: out.detach().requires_grad_(True))
    try:
        rates["cut"] = _forward_backward(model, x_all, batch)
    finally:
        handle.remove()
        for p, flag in flags:
            p.requires_grad_(flag)
    t0 = time.perf_counter()
    with torch.inference_mode():
        for start in range(0, len(x_all), batch):
            model(x_all[start : start + batch])
    rates["forward"] = len(x_all) / (time.perf_counter() - t0)
    return rates


def _decoded(release: Path) -> torch.Tensor:
    from torchvision.io import read_image

    files = sorted((release / "bg_challenge" / "original" / "val").rglob("*.JPEG"))
    return torch.stack([read_image(str(f)) for f in files])


def main() -> None:
    keep_freed_memory()  # as every bgbench command does: the raw forward must not page-fault
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--model", default="tf_efficientnet_lite0")
    ap.add_argument("--data", default=str(DEFAULT_PHOTOS), help="folder of labelled photos")
    ap.add_argument("--images", type=int, default=64)
    ap.add_argument("--batch-size", type=int, default=None, help="the task's default")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--workers", type=int, default=1, help="decode workers of run_saliency")
    ap.add_argument("--rounds", type=int, default=2, help="alternating timed rounds (best kept)")
    args = ap.parse_args()

    device = torch.device(args.device)
    if args.batch_size is None:
        args.batch_size = default_batch_size(device, ACCELERATOR_BATCH_SIZE)
    clf = load_classifier(args.model, device=str(device))
    clf.to(device)
    print(
        f"{args.model} on {device}, {torch.get_num_threads()} torch threads, "
        f"{args.images} images, batch {args.batch_size}, {args.workers} decode worker(s)"
    )
    with tempfile.TemporaryDirectory() as tmp:
        release = release_from_photos(Path(args.data), Path(tmp), args.images, 0)
        images = _decoded(release)
        raw_rates(clf, images[: args.batch_size], args.batch_size, device)  # warm-up
        raw = {"full": 0.0, "cut": 0.0, "forward": 0.0}
        sal = 0.0
        for _ in range(args.rounds):  # alternate, keep each one's best: machine drift cancels
            for key, rate in raw_rates(clf, images, args.batch_size, device).items():
                raw[key] = max(raw[key], rate)
            doc = run_saliency(
                clf,
                str(release),
                batch_size=args.batch_size,
                device=device,
                num_workers=args.workers,
                progress=False,
            )
            sal = max(sal, doc["timing"]["images_per_second"])
    rows = [
        ("raw forward+backward", raw["full"], ""),
        ("raw forward+backward, cut", raw["cut"], " (backward stops at the Grad-CAM layer)"),
        ("raw forward only", raw["forward"], " (inference mode)"),
        ("saliency", sal, f" ({doc['n_images']} images, layer {doc['target_layer']['name']})"),
    ]
    for label, rate, note in rows:
        print(f"{label:<26}: {rate:8.2f} images/s{note}")
    verdict = "meets" if sal / raw["full"] >= 0.8 else "MISSES"
    print(f"saliency / raw forward+backward = {sal / raw['full']:.2f} ({verdict} the 0.8 target)")
    print(
        f"saliency / cut forward+backward = {sal / raw['cut']:.2f} (what decoding, grad-cam and "
        "the scores cost on top of the model)"
    )


if __name__ == "__main__":
    main()
