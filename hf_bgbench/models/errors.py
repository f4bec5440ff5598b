"""Errors raised while loading a classifier.

Every error names the problem *and* what to do about it. All of them subclass
``ValueError``, so the CLI can print them without a traceback. A Hub that cannot be reached
is the package-wide :class:`hf_bgbench.hub.errors.HubUnreachableError` (a ``ValueError`` and a
``ConnectionError``), built here with a model-loading hint by :func:`hub_unreachable`.
"""

from __future__ import annotations

import os
import re

from hf_bgbench.hub.errors import HubUnreachableError, error_chain

HUB_OFFLINE_HINT = (
    "The Hugging Face Hub could not be reached (or HF_HUB_OFFLINE=1 is set) and the files "
    "are not in the local cache. Either connect to the Hub (and unset HF_HUB_OFFLINE), "
    "or load the model from disk: a folder written by `timm.models.save_for_hf` "
    "(pass 'local-dir:<folder>' or the folder path), a folder written by transformers' "
    "`save_pretrained` (pass the folder path), a folder in open_clip's Hub layout "
    "(open_clip_config.json + open_clip_model.safetensors), or an architecture plus a weights file "
    "(e.g. `bgbench evaluate resnet50 --checkpoint weights.safetensors`)."
)


class ModelLoadError(ValueError):
    """A model could not be loaded; the message says why and what to do."""


class UnknownModelError(ModelLoadError):
    """The model id is neither a timm model, a local path, nor a Hub repo id."""


class RemoteCodeRefusedError(ModelLoadError):
    """The model needs custom Python code from its repo (trust_remote_code); refused."""


class UnsafeCheckpointError(ModelLoadError):
    """A checkpoint pickles arbitrary Python objects; refused (only weights are loaded)."""


def is_remote_code_request(exc: BaseException) -> bool:
    return any("trust_remote_code" in str(e) for e in error_chain(exc))


def hub_unreachable(model_id: str, exc: BaseException | None = None) -> HubUnreachableError:
    detail = ""
    if exc is not None:
        lines = str(exc).strip().splitlines()
        first = lines[0].split(". ")[0].rstrip(".")[:200] if lines else ""
        detail = f" ({type(exc).__name__}: {first}.)" if first else f" ({type(exc).__name__})"
    return HubUnreachableError(
        f"Cannot load {model_id!r} from the Hugging Face Hub.{detail} " + HUB_OFFLINE_HINT
    )


def remote_code_refused(model_id: str, where: str = "") -> RemoteCodeRefusedError:
    return RemoteCodeRefusedError(
        f"{model_id!r} needs custom Python code from its repository{where} "
        "(trust_remote_code / auto_map). hf_bgbench never runs remote code. Use a model whose "
        "architecture ships with transformers or timm, or port the weights to one (save a "
        "state dict / safetensors file and pass it with an architecture name and --checkpoint)."
    )


def unsafe_checkpoint(path: str, exc: BaseException | None = None) -> UnsafeCheckpointError:
    detail = ""
    if exc is not None:
        first = str(exc).strip().splitlines()
        detail = f" (torch said: {first[0][:200]})" if first else ""
    return UnsafeCheckpointError(
        f"Refusing to load {path!r}: it pickles arbitrary Python objects (e.g. a whole "
        f"nn.Module), which could run code when loaded{detail}. Only weights are loaded "
        "(torch.load(weights_only=True) or safetensors). Re-save it as a state dict, "
        "`torch.save(model.state_dict(), 'weights.pth')`, or convert it to safetensors: "
        "`safetensors.torch.save_file(model.state_dict(), 'weights.safetensors')`."
    )


_MODEL_ID_CHARACTERS = re.compile(r"[A-Za-z0-9_.\-/:@+]")


def malformed_model_id(model_id: str) -> UnknownModelError | None:
    """The error for a model id that no accepted form can hold -- a character outside timm
    names, Hub repo ids and the ``hf-hub:`` / ``local-dir:`` prefixes, and no such path --
    said before any library loads (None: it may be a model)."""
    if not isinstance(model_id, str) or model_id.startswith("local-dir:"):
        return None  # a folder, whatever its name: the loader says whether it is there
    if os.path.exists(os.path.expanduser(model_id)):
        return None
    bad = sorted({c for c in model_id if not _MODEL_ID_CHARACTERS.fullmatch(c)})
    if not bad and model_id.strip():
        return None
    shown = ", ".join(repr(c) for c in bad) if bad else "nothing"
    return UnknownModelError(
        f"Unknown model {model_id!r}: it holds {shown}, which no timm name, Hub repo id "
        "('org/name') or model folder here holds. Accepted forms: a timm name "
        "('resnet50.a1_in1k'), 'hf-hub:timm/<name>' or 'timm/<name>', a transformers Hub id "
        "('microsoft/resnet-50'), a local folder (save_for_hf / save_pretrained; or "
        "'local-dir:<folder>'), or a timm architecture plus --checkpoint <weights>."
    )
