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
    IDEFICS_TEMPLATE,
    _appended,
    byte_level_tokenizer,
    write_llava,  # noqa: E402
)

IN9 = ClassNames(
    ("dog", "bird", "vehicle", "reptile", "carnivore", "insect", "instrument", "primate", "fish"),
    "IN-9's classes",
)


def write_smolvlm_shaped(folder: Path) -> Path:
    from transformers import (
        Idefics3Config,
        Idefics3ForConditionalGeneration,
        Idefics3ImageProcessor,
        Idefics3Processor,
    )

    specials = ["<|endoftext|>", "<|im_start|>", "<end_of_utterance>"]
    specials += ["<fake_token_around_image>", "<image>", "<global-img>"]
    tok = byte_level_tokenizer(
        specials,
        bos_token="<|im_start|>",
        eos_token="<end_of_utterance>",
        pad_token="<|endoftext|>",
    )
    text = dict(
        model_type="llama",
        vocab_size=len(tok),
        hidden_size=576,
        intermediate_size=1536,
        num_hidden_layers=30,
        num_attention_heads=9,
        num_key_value_heads=3,
        max_position_embeddings=8192,
        pad_token_id=0,
    )
    vision = dict(
        hidden_size=768,
        intermediate_size=3072,
        num_hidden_layers=12,
        num_attention_heads=12,
        image_size=512,
        patch_size=16,
    )
    cfg = Idefics3Config(
        text_config=text,
        vision_config=vision,
        image_token_id=tok.convert_tokens_to_ids("<image>"),
        scale_factor=4,
    )
    torch.manual_seed(0)
    Idefics3ForConditionalGeneration(cfg).eval().save_pretrained(folder)
    image_processor = Idefics3ImageProcessor(
        size={"longest_edge": 512}, max_image_size={"longest_edge": 512}, do_image_splitting=False
    )
    Idefics3Processor(
        image_processor=image_processor,
        tokenizer=tok,
        image_seq_len=64,
        chat_template=IDEFICS_TEMPLATE,
    ).save_pretrained(folder)
    return folder


def uncached(head, images: torch.Tensor) -> torch.Tensor:
    """One full forward of prompt + class string per image and class (no cache)."""
    prompt, out = head.prompts[0], torch.zeros(len(images), len(head.answer_ids))
    for i in range(len(images)):
        inputs = head.inputs(images[i : i + 1], prompt)
        start = inputs["input_ids"].shape[1]
        for c, ids in enumerate(head.answer_ids):
            full = _appended(dict(inputs), ids)
            logp = head.model(**full).logits[0].float().log_softmax(-1)
            out[i, c] = sum(float(logp[start - 1 + j, t]) for j, t in enumerate(ids)) / len(ids)
    return out


def timed(fn) -> tuple[float, torch.Tensor]:
    start = time.perf_counter()
    with torch.inference_mode():
        out = fn()
    return time.perf_counter() - start, out


def bench(name: str, folder: Path, args) -> None:
    clf = load_classifier(str(folder), vlm=VlmSettings(classes=IN9), device=args.device)
    head = clf.model
    images = torch.rand(args.images, 3, 224, 224, generator=torch.Generator().manual_seed(0))
    images = images.to(args.device)
    timed(lambda: clf.logits(images[:1]))  # warm up
    ratios, fast, slow = [], [], []
    for r in range(args.rounds):
        t_cached, a = timed(lambda: clf.logits(images))
        t_full, b = timed(lambda: uncached(head, images))
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
