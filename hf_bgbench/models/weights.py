"""Reading weight files and loading them strictly, with errors that say what went wrong.

Weights are only ever read with safetensors or ``torch.load(weights_only=True)``. When a
state dict does not fit an architecture, the error says which side is bigger and, where a
timm architecture of the same family has exactly the checkpoint's tensors, names it.
"""

from __future__ import annotations

import logging
import os
import pickle
import re
from collections.abc import Mapping
from contextlib import AbstractContextManager, nullcontext

import torch

from hf_bgbench.models.errors import ModelLoadError, unsafe_checkpoint

logger = logging.getLogger(__name__)

_NESTED_KEYS = ("state_dict", "model")
MAX_GUESS_CANDIDATES = 80
"""Architectures of one family instantiated (on the meta device, no memory) when guessing
what a checkpoint is; larger families are not searched."""


_TORCH_SAVE_STARTS = (b"PK\x03\x04", b"\x80")
"""How a file torch.save wrote begins: a zip archive (torch >= 1.6) or a pickle (protocol 2+,
the legacy format)."""


def _head(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read(64)


def _is_safetensors(head: bytes) -> bool:
    """A safetensors file whatever its suffix: an 8-byte header length, then a JSON header."""
    return len(head) > 8 and head[8:9] == b"{"


def load_state_dict_file(path: str) -> dict[str, torch.Tensor]:
    """Read a weights file (safetensors, or .pth/.pt/.bin with ``weights_only=True``).

    Unwraps state dicts nested under ``"state_dict"`` / ``"model"`` and strips a
    ``module.`` (DataParallel) prefix.
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise ModelLoadError(f"Checkpoint file {path!r} does not exist.")
    if os.path.isdir(path):
        raise ModelLoadError(
            f"Checkpoint {path!r} is a folder; pass a weights file (.safetensors/.pth), or pass "
            "the folder itself as the model (timm save_for_hf or transformers save_pretrained)."
        )
    head = _head(path)
    torch_save = head.startswith(_TORCH_SAVE_STARTS)
    if path.endswith(".safetensors") or (not torch_save and _is_safetensors(head)):
        from safetensors.torch import load_file

        try:
            obj: object = load_file(path, device="cpu")
        except Exception as e:
            raise ModelLoadError(
                f"Could not read safetensors file {path!r}: {e}. Is it a complete, valid file?"
            ) from e
    else:
        if not torch_save:
            # before torch.load, whose "invalid load key" would be read as a pickled object
            size = os.path.getsize(path)
            raise ModelLoadError(
                f"{path!r} is not a checkpoint: a {size:,}-byte file that is neither a "
                f"safetensors file nor one torch.save writes (it starts with {head[:16]!r}). "
                "Give the weights file: .safetensors, or a .pth/.pt saved with "
                "torch.save(model.state_dict(), path)."
            )
        try:
            obj = torch.load(path, map_location="cpu", weights_only=True)
        except pickle.UnpicklingError as e:
            raise unsafe_checkpoint(path, e) from e
        except Exception as e:
            if "weights_only" in str(e) or "Unsupported global" in str(e):
                raise unsafe_checkpoint(path, e) from e
            raise ModelLoadError(
                f"Could not read checkpoint {path!r} with torch.load(weights_only=True): {e}. "
                "Expected a state dict saved with torch.save(model.state_dict(), ...) or a "
                ".safetensors file."
            ) from e
    for _ in range(3):
        if isinstance(obj, Mapping):
            key = next((k for k in _NESTED_KEYS if isinstance(obj.get(k), Mapping)), None)
            if key is not None and not all(isinstance(v, torch.Tensor) for v in obj.values()):
                obj = obj[key]
                continue
        break
    if not isinstance(obj, Mapping) or not obj:
        raise ModelLoadError(
            f"{path!r} does not hold a state dict (got {type(obj).__name__}). Save weights with "
            "torch.save(model.state_dict(), path) or safetensors.torch.save_file(...)."
        )
    tensors = {k: v for k, v in obj.items() if isinstance(v, torch.Tensor)}
    if not tensors:
        raise ModelLoadError(
            f"{path!r} holds a dict without tensors (keys: {', '.join(map(str, list(obj)[:8]))}). "
            "Expected a state dict, possibly nested under 'state_dict' or 'model'."
        )
    if all(k.startswith("module.") for k in tensors):
        tensors = {k[len("module.") :]: v for k, v in tensors.items()}
    return tensors


# ---------------------------------------------------------------------- mismatch diagnosis


def _weights(sd: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The tensors that are weights (BatchNorm's ``num_batches_tracked`` counters are not)."""
    return {k: v for k, v in sd.items() if not k.endswith("num_batches_tracked")}


def _size(n: int) -> str:
    return f"{n / 1e6:.1f}M" if n >= 1_000_000 else f"{n:,}"


def architecture_family(arch: str) -> str:
    """The name stem shared by an architecture's siblings in timm: ``resnet`` for
    ``resnet18``, ``tf_efficientnet_lite`` for ``tf_efficientnet_lite0``, ``convnext`` for
    ``convnext_tiny``."""
    stem = re.split(r"\d", arch, maxsplit=1)[0]
    return stem if stem != arch else arch.split("_")[0]


def _signature(sd: Mapping[str, torch.Tensor], heads: tuple[str, ...]) -> dict[str, tuple]:
    """Tensor name -> shape, without the classifier's output size (any class count fits)."""
    out = {}
    for key, value in _weights(sd).items():
        shape = tuple(value.shape)
        out[key] = shape[1:] if any(key.startswith(h + ".") for h in heads) else shape
    return out


def classifier_heads(model: torch.nn.Module) -> tuple[str, ...]:
    """The module names of ``model``'s classifier head (timm's ``pretrained_cfg``)."""
    heads = (getattr(model, "pretrained_cfg", None) or {}).get("classifier") or ()
    return (heads,) if isinstance(heads, str) else tuple(heads)


def guess_architectures(sd: Mapping[str, torch.Tensor], arch: str) -> list[str]:
    """timm architectures of ``arch``'s family whose tensors have exactly the names and
    shapes of ``sd`` (any number of classes). Empty when none does, when the family has more
    than :data:`MAX_GUESS_CANDIDATES` members, or when timm is unavailable."""
    try:
        import timm
    except ImportError:  # pragma: no cover - timm is a dependency
        return []
    family = architecture_family(arch)
    candidates = [name for name in timm.list_models(f"{family}*") if name != arch]
    if len(candidates) > MAX_GUESS_CANDIDATES:
        return []
    found = []
    for name in candidates:
        try:
            # no weight init: only names and shapes are compared (2.1x faster over resnet*)
            with torch.device("meta"), _no_weight_init():
                model = timm.create_model(name, pretrained=False)
        except Exception as e:  # some architectures cannot be built on the meta device
            logger.debug("skipping %s while guessing the checkpoint architecture: %s", name, e)
            continue
        heads = classifier_heads(model)
        if _signature(model.state_dict(), heads) == _signature(sd, heads):
            found.append(name)
    return found


def _no_weight_init() -> AbstractContextManager:
    """transformers' context that makes ``torch.nn.init``'s functions no-ops (on the meta
    device they still ran through torch's Python reference kernels: half the time of a scan);
    nothing where this transformers has no such context."""
    try:
        from transformers.initialization import no_init_weights
    except ImportError:
        try:
            from transformers.modeling_utils import no_init_weights
        except ImportError:
            return nullcontext()
    return no_init_weights()


def mismatch_hint(
    sd: Mapping[str, torch.Tensor], model: torch.nn.Module, arch: str, *, sizes: bool = True
) -> str:
    """Which side is bigger (with ``sizes``; only meaningful once both heads have the same
    class count) and which architecture the checkpoint looks like, in words."""
    theirs, ours = _weights(sd), _weights(model.state_dict())
    n_theirs = sum(v.numel() for v in theirs.values())
    n_ours = sum(v.numel() for v in ours.values())
    counts = (
        f"{_size(n_theirs)} parameters in {len(theirs)} tensors, against {_size(n_ours)} in "
        f"{len(ours)} for {arch!r}"
    )
    direction, kind = "", "the"
    if sizes and n_theirs != n_ours:
        side, kind = ("bigger", "a larger") if n_theirs > n_ours else ("smaller", "a smaller")
        direction = f"The checkpoint is the {side} side ({counts}): it comes from {kind} model. "
    elif sizes:
        direction = f"Both sides hold {_size(n_ours)} parameters, laid out differently. "
    guesses = guess_architectures(sd, arch)
    if guesses:
        names = " or ".join(repr(g) for g in guesses[:3])
        return (
            f"{direction}Its tensor names and shapes match the timm architecture {names}: pass "
            "that as the model together with --checkpoint."
        )
    return (
        f"{direction}Pass {kind} architecture it was trained with (none named "
        f"'{architecture_family(arch)}*' in timm has its tensors), and a plain state dict of "
        "that model."
    )


def load_strict(model: torch.nn.Module, sd: Mapping[str, torch.Tensor], *, what: str) -> None:
    """load_state_dict(strict=True) with a readable ModelLoadError on any mismatch."""
    own = model.state_dict()
    sd = dict(sd)
    # BatchNorm counters are bookkeeping, not weights: tolerate their absence.
    for k, v in own.items():
        if k not in sd and k.endswith("num_batches_tracked"):
            sd[k] = v
    missing = [k for k in own if k not in sd]
    unexpected = [k for k in sd if k not in own]
    mismatched = [
        f"{k}: checkpoint {tuple(sd[k].shape)} vs model {tuple(own[k].shape)}"
        for k in own
        if k in sd and tuple(sd[k].shape) != tuple(own[k].shape)
    ]
    if missing or unexpected or mismatched:
        arch = getattr(model, "pretrained_cfg", {}).get("architecture") or type(model).__name__
        parts = []
        if missing:
            parts.append(f"{len(missing)} missing keys (e.g. {', '.join(missing[:3])})")
        if unexpected:
            parts.append(f"{len(unexpected)} unexpected keys (e.g. {', '.join(unexpected[:3])})")
        if mismatched:
            parts.append(f"{len(mismatched)} shape mismatches (e.g. {'; '.join(mismatched[:3])})")
        raise ModelLoadError(
            f"The weights in {what} do not fit the architecture {arch!r}: {', '.join(parts)}. "
            + mismatch_hint(sd, model, arch)
        )
    model.load_state_dict(sd, strict=True)
