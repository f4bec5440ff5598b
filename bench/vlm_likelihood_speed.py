"""The likelihood rule's key/value cache: images/s against one full forward per class.

    python bench/vlm_likelihood_speed.py [--rounds 3] [--images 4] [--device cpu]
        [--only tiny real-shaped]

cached   = bgbench's ``likelihood`` rule: the prompt (image included) run once per image,
           its key/value cache copied for the class strings' continuations, batched;
uncached = the same scores computed with one forward of prompt + class string per class
           and image (image encoder included every time), as a reader would check them.

Both score IN-9's 9 class strings on the same random images; their scores must agree
(<= 1e-4, checked every round). Rounds alternate cached, uncached, cached, ... and the
ratio is taken per round (a shared host's speed drifts), then its median [min, max].

Models (random weights, built here, nothing downloaded): ``tiny`` = the tests' LLaVA
(hidden 32, 2 layers); ``real-shaped`` = SmolVLM-256M's shape (Idefics3: a SigLIP tower of
12 layers x 768 at 512 px, patch 16, pixel shuffle 4 -> 64 image tokens; a 30-layer, 576-wide
Llama with 9 heads and 3 key/value heads; image splitting off).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hf_bgbench.models import load_classifier  # noqa: E402
from hf_bgbench.models.vlm import VlmSettings  # noqa: E402
from hf_bgbench.models.zero_shot import ClassNames  # noqa: E402
from tests.vlm_fixtures import (  # noqa: E402
    likelihood_without_cache,
    write_idefics3,
    write_llava,
)

IN9 = ClassNames(
    ("dog", "bird", "vehicle", "reptile", "carnivore", "insect", "instrument", "primate", "fish"),
    "IN-9's classes",
)


def write_smolvlm_shaped(folder: Path) -> Path:
    text = dict(
        hidden_size=576,
        intermediate_size=1536,
        num_hidden_layers=30,
        num_attention_heads=9,
        num_key_value_heads=3,
        max_position_embeddings=8192,
    )
    vision = dict(
        hidden_size=768,
        intermediate_size=3072,
        num_hidden_layers=12,
        num_attention_heads=12,
        image_size=512,
        patch_size=16,
    )
    return write_idefics3(
        folder,
        text=text,
        vision=vision,
        longest_edge=(512, 512),
        image_seq_len=64,
        scale_factor=4,
        splitting=False,
    )


def timed(fn) -> tuple[float, torch.Tensor]:
    start = time.perf_counter()
    with torch.inference_mode():
        out = fn()
    return time.perf_counter() - start, out


def bench(name: str, folder: Path, args) -> None:
    clf = load_classifier(str(folder), vlm=VlmSettings(classes=IN9), device=args.device)
    head = clf.model  # the rule asking the in-process backend
    backend = head.backend
    images = torch.rand(args.images, 3, 224, 224, generator=torch.Generator().manual_seed(0))
    images = images.to(args.device)
    timed(lambda: clf.logits(images[:1]))  # warm up
    ratios, fast, slow = [], [], []
    for r in range(args.rounds):
        t_cached, a = timed(lambda: clf.logits(images))
        t_full, b = timed(
            lambda: likelihood_without_cache(
                backend.model,
                backend.processor,
                head.rule.prompt,
                list(head.rule.choices),
                "mean",
                images,
                # as the backend tokenises: a template that writes <bos> gets no second one
                backend.text_kwargs.get("add_special_tokens", True),
            )
        )
        err = (a.cpu() - b).abs().max().item()
        tolerance = 1e-4 if a.dtype == torch.float32 else 5e-2  # bf16 on a GPU
        assert err <= tolerance, f"{name}: cached and uncached scores differ by {err}"
        fast.append(len(images) / t_cached)
        slow.append(len(images) / t_full)
        ratios.append(t_full / t_cached)
        print(
            f"{name} round {r}: cached {fast[-1]:.2f} img/s, one forward per class "
            f"{slow[-1]:.2f} img/s, gain {ratios[-1]:.2f}x (max |diff| {err:.1e})"
        )
    print(
        f"{name}: cached {statistics.median(fast):.2f} img/s, uncached "
        f"{statistics.median(slow):.2f} img/s; gain median {statistics.median(ratios):.2f}x "
        f"[{min(ratios):.2f}, {max(ratios):.2f}] over {args.rounds} rounds, "
        f"{args.images} images, 9 classes, {torch.get_num_threads()} threads, {args.device}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--images", type=int, default=4)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--only", nargs="*", default=["tiny", "real-shaped"])
    args = parser.parse_args()
    writers = {"tiny": write_llava, "real-shaped": write_smolvlm_shaped}
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.only:
            bench(name, writers[name](Path(tmp) / name), args)


if __name__ == "__main__":
    main()
