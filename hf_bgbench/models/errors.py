"""Errors raised while loading a classifier.

Every error names the problem *and* what to do about it. All of them subclass
``ValueError`` (``HubUnreachableError`` is also an ``OSError``), so the CLI can print
them without a traceback.
"""

from __future__ import annotations

HUB_OFFLINE_HINT = (
    "The Hugging Face Hub could not be reached (or HF_HUB_OFFLINE=1 is set) and the files "
    "are not in the local cache. Either connect to the Hub (and unset HF_HUB_OFFLINE), "
    "or load the model from disk: a folder written by `timm.models.save_for_hf` "
    "(pass 'local-dir:<folder>' or the folder path), a folder written by transformers' "
    "`save_pretrained` (pass the folder path), or an architecture plus a weights file "
    "(e.g. `bgbench evaluate resnet50 --checkpoint weights.safetensors`)."
)


class ModelLoadError(ValueError):
    """A model could not be loaded; the message says why and what to do."""


class UnknownModelError(ModelLoadError):
    """The model id is neither a timm model, a local path, nor a Hub repo id."""


class HubUnreachableError(ModelLoadError, OSError):
    """The model must come from the Hugging Face Hub, which cannot be reached."""


class RemoteCodeRefusedError(ModelLoadError):
    """The model needs custom Python code from its repo (trust_remote_code); refused."""


class UnsafeCheckpointError(ModelLoadError):
    """A checkpoint pickles arbitrary Python objects; refused (only weights are loaded)."""


def _chain(exc: BaseException | None):
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def is_hub_unreachable(exc: BaseException) -> bool:
    """True when ``exc`` (or anything in its cause chain) means 'the Hub cannot be reached'."""
    try:
        from huggingface_hub.errors import LocalEntryNotFoundError, OfflineModeIsEnabled
    except ImportError:  # pragma: no cover - very old huggingface_hub
        from huggingface_hub.utils import LocalEntryNotFoundError, OfflineModeIsEnabled
    network_types: tuple[type, ...] = (LocalEntryNotFoundError, OfflineModeIsEnabled)
    try:
        import httpx

        network_types += (httpx.TransportError,)
    except ImportError:  # pragma: no cover
        pass
    try:
        import requests

        network_types += (requests.ConnectionError, requests.Timeout)
    except ImportError:  # pragma: no cover
        pass
    for e in _chain(exc):
        if isinstance(e, network_types):
            return True
        msg = str(e).lower()
        if isinstance(e, OSError) and (
            "couldn't connect" in msg
            or "offline mode" in msg
            or "cannot find the requested files in the local cache" in msg
        ):
            return True
    return False


def is_remote_code_request(exc: BaseException) -> bool:
    return any("trust_remote_code" in str(e) for e in _chain(exc))


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
