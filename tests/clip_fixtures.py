"""Tiny, randomly initialised CLIP models written to disk the way each library publishes them:
a transformers CLIP (``save_pretrained``, with CLIP's real BPE vocabulary converted from the
file open_clip ships) and an open_clip CLIP in open_clip's Hub layout
(``open_clip_config.json`` + ``open_clip_model.safetensors``). Nothing is downloaded."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import torch

SIZE = 64  # input size of the tiny towers (patch 16: a 4x4 grid and a class token)
TEMPLATE = "a photo of a {}."


def clip_bpe_files(folder: Path) -> int:
    """vocab.json + merges.txt (what transformers' CLIPTokenizer reads) from open_clip's
    ``bpe_simple_vocab_16e6.txt.gz``: the 256 byte characters, the same with ``</w>``, the
    first 48,894 merges, then the two special tokens (49,408 entries, CLIP's ids)."""
    from open_clip.tokenizer import bytes_to_unicode, default_bpe

    lines = gzip.open(default_bpe()).read().decode("utf-8").split("\n")
    merges = [tuple(m.split()) for m in lines[1 : 49152 - 256 - 2 + 1]]
    chars = list(bytes_to_unicode().values())
    vocab = chars + [c + "</w>" for c in chars] + ["".join(m) for m in merges]
    vocab += ["<|startoftext|>", "<|endoftext|>"]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vocab.json").write_text(json.dumps({v: i for i, v in enumerate(vocab)}))
    body = "\n".join(" ".join(m) for m in merges)
    (folder / "merges.txt").write_text(f"#version: 0.2\n{body}\n")
    return len(vocab)


def write_transformers_clip(folder: Path, seed: int = 0, *, tokenizer: bool = True) -> Path:
    """A tiny transformers CLIPModel + CLIPProcessor, saved with ``save_pretrained``."""
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPProcessor, CLIPTokenizer

    torch.manual_seed(seed)
    layers = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2)
    config = CLIPConfig(
        text_config=dict(layers, vocab_size=49408, max_position_embeddings=77),
        vision_config=dict(layers, image_size=SIZE, patch_size=16),
        projection_dim=16,
    )
    model = CLIPModel(config).eval()
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    images = CLIPImageProcessor(
        size={"shortest_edge": SIZE}, crop_size={"height": SIZE, "width": SIZE}
    )
    if not tokenizer:
        images.save_pretrained(folder)
        return folder
    vocab = folder / "_bpe"
    clip_bpe_files(vocab)
    tok = CLIPTokenizer(str(vocab / "vocab.json"), str(vocab / "merges.txt"))
    CLIPProcessor(image_processor=images, tokenizer=tok).save_pretrained(folder)
    shutil.rmtree(vocab)
    return folder


def write_transformers_siglip(folder: Path, seed: int = 0) -> Path:
    """A tiny transformers SigLIP (sigmoid loss: a logit bias, prompts padded to the full
    length) + SiglipProcessor, saved with ``save_pretrained``. Its tokenizer is CLIP's
    (SigLIP's own is a SentencePiece model no package here ships): the recipe is the same."""
    from transformers import (
        CLIPTokenizerFast,
        SiglipConfig,
        SiglipImageProcessor,
        SiglipModel,
        SiglipProcessor,
    )

    torch.manual_seed(seed)
    layers = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2)
    config = SiglipConfig(
        text_config=dict(layers, vocab_size=49408, max_position_embeddings=64),
        vision_config=dict(layers, image_size=SIZE, patch_size=16),
    )
    model = SiglipModel(config).eval()
    with torch.no_grad():
        model.logit_bias.fill_(-3.0)  # nonzero, so a test sees the bias recorded
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    vocab = folder / "_bpe"
    clip_bpe_files(vocab)
    tok = CLIPTokenizerFast(str(vocab / "vocab.json"), str(vocab / "merges.txt"))
    tok.model_max_length = 64
    images = SiglipImageProcessor(size={"height": SIZE, "width": SIZE})
    SiglipProcessor(image_processor=images, tokenizer=tok).save_pretrained(folder)
    shutil.rmtree(vocab)
    return folder


OPEN_CLIP_CFG = dict(
    embed_dim=16,
    vision_cfg=dict(image_size=SIZE, layers=2, width=32, patch_size=16, head_width=16),
    text_cfg=dict(context_length=77, vocab_size=49408, width=32, heads=2, layers=2),
)
OPEN_CLIP_PREPROCESS = {
    "mean": [0.48145466, 0.4578275, 0.40821073],
    "std": [0.26862954, 0.26130258, 0.27577711],
    "interpolation": "bicubic",
    "resize_mode": "shortest",
    "size": SIZE,
}


def write_open_clip(folder: Path, seed: int = 0, *, weights: bool = True) -> Path:
    """A tiny open_clip CLIP in open_clip's Hub layout."""
    import open_clip
    from safetensors.torch import save_file

    torch.manual_seed(seed)
    model = open_clip.CLIP(**OPEN_CLIP_CFG).eval()
    folder.mkdir(parents=True, exist_ok=True)
    config = {"model_cfg": OPEN_CLIP_CFG, "preprocess_cfg": OPEN_CLIP_PREPROCESS}
    (folder / "open_clip_config.json").write_text(json.dumps(config))
    if weights:
        save_file(model.state_dict(), str(folder / "open_clip_model.safetensors"))
    return folder


def as_hub_cache(folder: Path, cache: Path, repo_id: str, commit: str = "a" * 40) -> Path:
    """``folder``'s files in the local Hub cache, in the layout huggingface_hub keeps
    (``models--owner--name/{refs/main, snapshots/<commit>/...}``), so an offline
    ``hf_hub_download(repo_id, ...)`` finds them."""
    repo = cache / f"models--{repo_id.replace('/', '--')}"
    snap = repo / "snapshots" / commit
    snap.mkdir(parents=True, exist_ok=True)
    for f in folder.iterdir():
        if f.is_file():
            shutil.copy(f, snap / f.name)
    (repo / "refs").mkdir(exist_ok=True)
    (repo / "refs" / "main").write_text(commit)
    return snap
