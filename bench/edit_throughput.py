"""CPU edit throughput (hf_bgbench.edits) next to tf_efficientnet_lite0's forward, same run.

    python bench/edit_throughput.py --data /tmp/in9_edit_src [--images 64] [--rounds 2]

--data: an IN-9 build (Hub layout; its ``original`` config and ``mask``), e.g. from
``bgbench build in9 --images ../shared/data/in9_samples/images --metadata
../shared/data/in9_samples/metadata.csv --no-boxes --output /tmp/in9_edit_src``.

Per image, as ``bgbench build imagenet-e`` does it, in ONE process (a build runs one such
process per core): ``inpaint`` = stage 1 (object removal + L_c + GLCM of the background, once
per image, shared by all edits); each edit = ``apply_edit`` + JPEG/PNG encoding of image and
mask (stage 2). ``forward`` = the classifier alone on ready 224x224 tensors (batch 32, torch
on all cores). Target: every edit (and inpaint) at least as fast as the forward.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import cv2
import numpy as np
import torch

from hf_bgbench.benchmarks import all_specs
from hf_bgbench.benchmarks.imagenet_e.edit_set import CPU_EDITS, apply_edit
from hf_bgbench.benchmarks.imagenet_e.sources import from_hub, hub_sources
from hf_bgbench.benchmarks.imagenet_e.work import decode_image, encode_image, fit
from hf_bgbench.data.schema import encode_mask
from hf_bgbench.edits import seeded_rng
from hf_bgbench.edits.complexity import complexity
from hf_bgbench.edits.inpaint import remove_object
from hf_bgbench.inference.allocator import keep_freed_memory
from hf_bgbench.models import load_classifier


def load_images(data: Path, n: int) -> list[tuple[str, np.ndarray, np.ndarray]]:
    items = from_hub("in9", data, hub_sources(all_specs())).items[:n]
    out = []
    for item in items:
        image, mask = fit(decode_image(item.image, "RGB"), decode_image(item.mask, "L"), 224)
        if mask.any() and mask.mean() < 0.95:
            out.append((item.id, image, mask))
    return out


def forward_rate(images, rounds: int) -> float:
    clf = load_classifier("tf_efficientnet_lite0", device="cpu")
    tensors = torch.stack(
        [torch.from_numpy(im.copy()).permute(2, 0, 1).float() / 255 for _, im, _ in images]
    )
    batches = list(torch.split(tensors, 32))
    rates = []
    with torch.inference_mode():
        clf.logits(batches[0])
        for _ in range(rounds):
            t0 = time.perf_counter()
            for b in batches:
                clf.logits(b)
            rates.append(len(tensors) / (time.perf_counter() - t0))
    return float(np.median(rates))


def main() -> None:
    keep_freed_memory()  # as every bgbench command does: the raw forward must not page-fault
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--data", type=Path, required=True, help="an IN-9 build (Hub layout)")
    p.add_argument("--images", type=int, default=64)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--format", choices=("jpeg", "png"), default="jpeg")
    args = p.parse_args()
    images = load_images(args.data, args.images)
    n = len(images)
    print(
        f"{n} real photos with masks from {args.data} (224x224); torch threads "
        f"{torch.get_num_threads()}, edits on 1 process (OpenCV 1 thread)"
    )
    forward = forward_rate(images, args.rounds)
    cv2.setNumThreads(1)
    t0 = time.perf_counter()
    clean = {}
    for image_id, image, mask in images:
        clean[image_id] = remove_object(image, mask).image
        complexity(clean[image_id])
    inpaint = n / (time.perf_counter() - t0)
    ids = [i for i, _, _ in images]
    rates = {}
    for edit in CPU_EDITS:
        best = 0.0
        for _ in range(args.rounds):
            t0 = time.perf_counter()
            for k, (image_id, image, mask) in enumerate(images):
                result = apply_edit(
                    edit,
                    image,
                    mask,
                    clean=clean[image_id],
                    rng=seeded_rng(0, image_id, edit),
                    other=clean[ids[(k + 1) % n]],
                )
                encode_image(result.image, args.format)
                encode_mask(result.mask)
            best = max(best, n / (time.perf_counter() - t0))
        rates[edit] = best
    print(f"{'step':<12} {'img/s':>8}  vs forward")
    print(f"{'forward':<12} {forward:8.1f}  (tf_efficientnet_lite0, batch 32)")
    for name, rate in {"inpaint": inpaint, **rates}.items():
        verdict = "ok" if rate >= forward else "SLOWER"
        print(f"{name:<12} {rate:8.1f}  {rate / forward:5.2f}x {verdict}")
    full = 1 / (1 / inpaint + sum(1 / r for r in rates.values()))
    print(
        f"whole edit set ({len(rates)} configs + inpaint) per source image: {full:.1f} img/s "
        f"= {full * len(rates):.1f} edited images/s on one process"
    )


if __name__ == "__main__":
    main()
