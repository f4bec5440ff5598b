"""open_clip models (LAION, DataComp, MetaCLIP, OpenAI CLIP, SigLIP ...) scored zero-shot.

Three ways to name one: a folder in open_clip's Hub layout (``open_clip_config.json`` with
``model_cfg`` + ``preprocess_cfg``, and the weights), a Hub repo with those files, or open_clip's
own ``ARCH/pretrained-tag`` (``ViT-B-32/laion2b_s34b_b79k``). Weights are read only from
safetensors or with ``torch.load(weights_only=True)`` (open_clip's default, which bgbench
passes explicitly); a folder or repo without weights is refused, never scored with the random
weights open_clip would otherwise build.
"""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

import torch

from hf_bgbench.hub.errors import HubUnreachableError, is_hub_unreachable
from hf_bgbench.models.classifier import (
    Classifier,
    state_dict_digest,
)
from hf_bgbench.models.errors import ModelLoadError, UnknownModelError, hub_unreachable
from hf_bgbench.models.preprocessing import Preprocessing
from hf_bgbench.models.registry import OPEN_CLIP_CONFIG, ModelLoader, ModelRef, register_loader
from hf_bgbench.models.zero_shot import (
    Prompts,
    TextTower,
    last_token_norm,
    zero_shot_classifier,
)

CONFIG = OPEN_CLIP_CONFIG
WEIGHTS = (
    "open_clip_model.safetensors",
    "open_clip_pytorch_model.safetensors",
    "open_clip_pytorch_model.bin",
    "open_clip_pytorch_model.pth",
)


@lru_cache(maxsize=1)
def _pretrained_names() -> frozenset[str]:
    import open_clip

    return frozenset(f"{arch}/{tag}" for arch, tag in open_clip.list_pretrained())


def is_open_clip_name(name: str) -> bool:
    """True for open_clip's own ``ARCH/pretrained-tag`` names (``ViT-B-32/openai``)."""
    return name in _pretrained_names()


@lru_cache(maxsize=1)
def _open_clip_archs() -> frozenset[str]:
    """open_clip's architecture names (its ``model_configs/*.json``), read from the installed
    package's files without importing it (an import costs seconds; the Space checks every id)."""
    try:
        found = importlib.util.find_spec("open_clip")
    except (ImportError, ValueError):
        found = None
    if found is None:
        return frozenset()
    return frozenset(
        p.stem
        for folder in found.submodule_search_locations or ()
        for p in (Path(folder) / "model_configs").glob("*.json")
    )


def is_open_clip_arch(name: str) -> bool:
    """True when ``name``'s part before ``/`` is an open_clip architecture (``ViT-B-32``)."""
    return name.partition("/")[0] in _open_clip_archs()


def unknown_open_clip_name(model_id: str, name: str) -> str:
    """The message for an ``ARCH/tag`` open_clip does not know, with the tags it has."""
    import open_clip

    arch = name.partition("/")[0]
    tags = [t for a, t in open_clip.list_pretrained() if a == arch]
    known = f" Its pretrained tags: {', '.join(tags)}." if tags else ""
    return (
        f"{model_id!r} is not one of open_clip's pretrained names (ARCH/tag, see "
        f"`open_clip.list_pretrained()`).{known} Or pass a folder or Hub repo with {CONFIG}."
    )


def preprocessing_of(cfg: dict[str, Any]) -> Preprocessing:
    """open_clip's ``preprocess_cfg`` (size, mean, std, interpolation, resize_mode) as a
    :class:`Preprocessing`: 'shortest' = shorter side to size then centre crop (CLIP's),
    'squash' = resize exactly; 'longest' (resize then pad) is refused, not approximated."""
    size = cfg.get("size", 224)
    hw = (int(size), int(size)) if isinstance(size, (int, float)) else tuple(int(v) for v in size)
    mode = cfg.get("resize_mode", "shortest")
    common = dict(
        input_size=hw,
        interpolation=cfg.get("interpolation", "bicubic"),
        mean=tuple(cfg.get("mean", (0.48145466, 0.4578275, 0.40821073))),
        std=tuple(cfg.get("std", (0.26862954, 0.26130258, 0.27577711))),
    )
    if mode == "shortest":
        return Preprocessing(resize=min(hw) if hw[0] == hw[1] else hw, crop=hw, **common)
    if mode == "squash":
        return Preprocessing(resize=hw, crop=None, **common)
    raise ModelLoadError(
        f"open_clip resize_mode {mode!r} (resize the longest side, then pad) is not supported: "
        "bgbench would have to approximate it, and the numbers would not be the model's."
    )


def _weights_in(folder: Path) -> Path | None:
    return next((folder / w for w in WEIGHTS if (folder / w).is_file()), None)


def _hub_snapshot(model_id: str, repo_id: str) -> Path:
    """The repo's config and weights in the local Hub cache (downloaded if need be); the
    snapshot folder, which open_clip then reads as ``local-dir:``."""
    from huggingface_hub import hf_hub_download

    try:
        config = Path(hf_hub_download(repo_id, CONFIG))
    except Exception as e:
        if is_hub_unreachable(e):
            raise hub_unreachable(model_id, e) from e
        raise ModelLoadError(f"{model_id!r}: no {CONFIG} in Hub repo {repo_id!r} ({e}).") from e
    found = None
    for name in WEIGHTS:
        try:
            found = hf_hub_download(repo_id, name)
            break
        except Exception as e:
            if is_hub_unreachable(e) and not type(e).__name__.startswith("LocalEntry"):
                raise hub_unreachable(model_id, e) from e
    if found is None:
        raise ModelLoadError(
            f"Hub repo {repo_id!r} has {CONFIG} but none of {', '.join(WEIGHTS)} (or they are "
            "not in the local cache while offline); bgbench will not score a model with "
            "random weights."
        )
    return config.parent


def _tokenizer_files(model_id: str, folder: Path, model_cfg: dict) -> None:
    """A Hub model whose tokenizer is a Hugging Face one (SigLIP) names it in its config;
    open_clip reads it from the snapshot folder, so fetch it there."""
    name = (model_cfg.get("text_cfg") or {}).get("hf_tokenizer_name")
    if not name:
        return
    from huggingface_hub import snapshot_download

    try:
        got = snapshot_download(
            name, allow_patterns=["tokenizer*", "special_tokens_map.json", "*.model", "vocab*"]
        )
    except Exception as e:
        if is_hub_unreachable(e):
            raise hub_unreachable(model_id, e) from e
        raise ModelLoadError(f"{model_id!r}: cannot fetch its tokenizer {name!r}: {e}") from e
    for f in Path(got).iterdir():
        target = folder / f.name
        if not target.exists():
            os.symlink(f.resolve(), target)


def _encode_cut(model: Any, tokens: torch.Tensor) -> torch.Tensor:
    """open_clip's ``CLIP.encode_text`` on the tokens up to the longest prompt's end: the same
    modules, with the position embeddings and the causal mask cut to that length."""
    from open_clip.transformer import text_global_pool

    n = max(int((tokens != 0).sum(1).max()), 1)
    tokens = tokens[:, :n]
    cast = model.transformer.get_cast_dtype()
    x = model.token_embedding(tokens).to(cast) + model.positional_embedding[:n].to(cast)
    x = model.ln_final(model.transformer(x, attn_mask=model.attn_mask[:n, :n]))
    x = text_global_pool(x, tokens, model.text_pool_type, getattr(model, "text_eos_id", None))
    if model.text_projection is None:
        return x
    if isinstance(model.text_projection, torch.nn.Linear):
        return model.text_projection(x)
    return x @ model.text_projection


def text_encoder(model: Any, tokenizer: Any) -> tuple[Callable[[Any], torch.Tensor], str]:
    """(encode, how): open_clip's ``encode_text``, or -- for a CLIP text tower whose
    attention is causal and whose output is read at the end-of-text token, where the
    padding after the longest prompt can change nothing -- the same computation on the
    tokens cut there, about 5x faster on CPU (prompts end by token ~14 of 77). The cut is
    checked against the full computation on this model before it is used."""
    import open_clip

    full = model.encode_text
    cuttable = (
        type(model) is open_clip.CLIP
        and getattr(model, "attn_mask", None) is not None
        and getattr(model, "text_pool_type", None) == "argmax"
        and isinstance(tokenizer, open_clip.SimpleTokenizer)
    )
    if not cuttable:
        return full, "full-context"
    probe = tokenizer(["a photo of a tench.", "a sculpture of the great white shark in the sea."])
    probe = probe.to(model.token_embedding.weight.device)
    with torch.no_grad():
        same = torch.allclose(_encode_cut(model, probe), full(probe), rtol=1e-4, atol=1e-5)
    if not same:  # pragma: no cover - a tower this rule does not describe
        return full, "full-context"
    return (lambda tokens: _encode_cut(model, tokens)), "cut-padding"


def load_open_clip(
    model_id: str,
    *,
    folder: str | None = None,
    repo_id: str | None = None,
    name: str | None = None,
    prompts: Prompts | None,
    progress: bool = True,
    device: Any = None,
) -> Classifier:
    """An open_clip model from a ``folder``, a Hub ``repo_id`` or an ``ARCH/tag`` ``name``,
    with a zero-shot head over ``prompts``."""
    import open_clip

    commit = None
    if repo_id is not None:
        snap = _hub_snapshot(model_id, repo_id)
        commit = snap.name
        folder = str(snap)
    if folder is not None:
        path = Path(folder)
        try:
            cfg = json.loads((path / CONFIG).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as e:
            raise ModelLoadError(f"{model_id!r}: cannot read {path / CONFIG}: {e}") from e
        if not isinstance(cfg, dict) or not isinstance(cfg.get("model_cfg"), dict):
            raise ModelLoadError(
                f"{path / CONFIG} has no 'model_cfg': it is not open_clip's Hub layout "
                "(open_clip_config.json with model_cfg and preprocess_cfg, beside the weights)."
            )
        if "vision_cfg" not in cfg["model_cfg"]:
            raise ModelLoadError(
                f"{model_id!r} has no image tower (no vision_cfg in {CONFIG}): a text-only "
                "model cannot classify images."
            )
        if _weights_in(path) is None:
            raise ModelLoadError(
                f"{model_id!r}: {path} holds {CONFIG} but no weights ({' / '.join(WEIGHTS)}); "
                "bgbench will not score a model with random weights."
            )
        if repo_id is not None:
            _tokenizer_files(model_id, path, cfg["model_cfg"])
        spec, pretrained = f"local-dir:{path}", None
        resolved = (
            f"open_clip:hf-hub:{repo_id}@{commit}"
            if repo_id
            else f"open_clip:local-dir:{path.resolve()}"
        )
    else:
        arch, _, pretrained = str(name).partition("/")
        spec = arch
        resolved = f"open_clip:{name}"
    try:
        model, _, _ = open_clip.create_model_and_transforms(
            spec, pretrained=pretrained, weights_only=True
        )
        tokenizer = open_clip.get_tokenizer(spec)
    except (ModelLoadError, HubUnreachableError):
        raise
    except Exception as e:
        if is_hub_unreachable(e):
            raise hub_unreachable(model_id, e) from e
        first = (str(e).splitlines() or [""])[0][:300]
        raise ModelLoadError(
            f"open_clip could not load {model_id!r}: {type(e).__name__}: {first}"
        ) from e
    model.eval().to(device or "cpu")  # the text side runs where the model will
    pre = preprocessing_of(dict(getattr(model.visual, "preprocess_cfg", {}) or {}))
    weights = state_dict_digest(model)
    encode, how = text_encoder(model, tokenizer)
    text = TextTower(
        encode=encode,
        tokenize=tokenizer,
        weights=weights,
        tokenizer=f"{type(tokenizer).__name__}/{getattr(tokenizer, 'context_length', '')}/{how}",
    )
    bias = getattr(model, "logit_bias", None)
    visual = model.visual
    clf = zero_shot_classifier(
        visual,
        text,
        prompts,
        model_id=model_id,
        resolved=resolved,
        source="open_clip",
        library=f"open_clip {open_clip.__version__}",
        preprocessing=pre,
        logit_scale=float(model.logit_scale.detach().exp()),
        logit_bias=None if bias is None else float(bias.detach()),
        cam_layer=last_token_norm(visual, "transformer.resblocks", "ln_1", "tower"),
        features_source="the image tower's embedding (open_clip encode_image, before L2 norm)",
        progress=progress,
        device=device,
    )
    del model, text  # the text tower is spent: its embeddings are the head's buffer
    return clf


# --------------------------------------------------------------------------- its loader


def _load_open_clip(ref: ModelRef) -> Classifier:
    f = ref.files
    if f is None:
        if not is_open_clip_name(ref.target):
            raise UnknownModelError(unknown_open_clip_name(ref.model_id, ref.target))
        return load_open_clip(
            ref.model_id,
            name=ref.target,
            prompts=ref.prompts(),
            progress=ref.progress,
            device=ref.device,
        )
    return load_open_clip(
        ref.model_id,
        folder=f.folder,
        repo_id=f.repo_id,
        prompts=ref.prompts(),
        progress=ref.progress,
        device=ref.device,
    )


# before timm's files: timm's CLIP repos hold both
register_loader(
    ModelLoader(
        "open_clip",
        "open_clip",
        f"open_clip models scored zero-shot: ARCH/tag names, folders and Hub repos with {CONFIG}",
        _load_open_clip,
        kind="zero-shot",
        names=is_open_clip_name,
        files=lambda f: f.has(CONFIG),
        priority=20,
    )
)
