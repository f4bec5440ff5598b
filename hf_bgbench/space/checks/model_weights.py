"""What the Hub says of a model's weights, read before anything downloads: their size
(:func:`check_model_size`, counting the files the loader reads, :func:`weights_read`),
that they are not pickles only, and -- with the Hub switched off (:func:`hub_offline`) --
that they are already in this server's cache (:func:`check_model_cached`). Pure functions,
no Gradio.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from hf_bgbench.hub.errors import is_hub_unreachable
from hf_bgbench.models.open_clip_models import CONFIG as OPEN_CLIP_CONFIG
from hf_bgbench.models.open_clip_models import WEIGHTS as OPEN_CLIP_WEIGHTS
from hf_bgbench.space.checks.messages import HUB_UNREACHABLE_MESSAGE, SpaceRefusal

PICKLE_SUFFIXES = (".bin", ".pth", ".pt", ".ckpt", ".pkl", ".pickle", ".tar", ".h5", ".msgpack")
"""Weight files a loader would unpickle (which can run code)."""


def hub_offline() -> bool:
    """Whether the Hub is switched off for this server (``HF_HUB_OFFLINE``)."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def check_model_size(repo_id: str | None, max_params: int, max_bytes: int) -> str:
    """Refuse a Hub model that is too large, or that has pickled weights only, from its
    metadata (before any download). Returns a note for the report ("" when checked and
    fine); the check is skipped, saying so, for a bundled model or when the Hub is offline."""
    if repo_id is None:
        return ""
    if hub_offline():
        return "Model size not checked: the Hugging Face Hub could not be reached."
    from huggingface_hub import HfApi

    try:
        info = HfApi().model_info(repo_id, files_metadata=True)
    except Exception as err:
        if is_hub_unreachable(err):
            return "Model size not checked: the Hub could not be reached."
        if type(err).__name__ == "RepositoryNotFoundError":
            raise SpaceRefusal(
                f"There is no public model repository {repo_id!r} on the Hugging Face Hub. "
                "Check the spelling (owner/name)."
            ) from None
        if type(err).__name__ == "GatedRepoError":
            raise SpaceRefusal(
                f"{repo_id!r} is gated on the Hub (you must accept its terms), so this Space "
                "cannot download it."
            ) from None
        raise SpaceRefusal(
            f"The Hugging Face Hub did not describe {repo_id!r}, so it is not loaded. Check "
            "the spelling (owner/name), or try again later."
        ) from None
    files = {s.rfilename: s.size or 0 for s in (info.siblings or [])}
    weights = weights_read(repo_id, files)
    params = getattr(getattr(info, "safetensors", None), "total", None)
    if params and params > max_params:
        raise SpaceRefusal(
            f"{repo_id!r} has {params / 1e6:,.0f}M parameters; this Space scores models up to "
            f"{max_params / 1e6:,.0f}M."
        )
    size = sum(weights.values())
    if size > max_bytes:
        raise SpaceRefusal(
            f"{repo_id!r} has {size / 2**30:.1f} GiB of weights; this Space scores models up "
            f"to {max_bytes / 2**30:.1f} GiB."
        )
    if not params and not size:
        return "Model size unknown: the Hub lists no safetensors metadata for this repository."
    return ""


def weights_read(repo_id: str, files: Mapping[str, int]) -> dict[str, int]:
    """The weight files (name -> bytes) the loader reads from a Hub repo of ``files``, refused
    (:class:`SpaceRefusal`) when they are pickles only. A repo with ``open_clip_config.json`` is
    loaded by open_clip (the loader's first choice by files) from its first weights file in
    open_clip's order -- ``open_clip_model.safetensors`` first -- only that one (a repo that
    also holds transformers' ``model.safetensors`` is not counted twice); any other repo: its
    safetensors files."""
    if OPEN_CLIP_CONFIG in files:
        name = next((w for w in OPEN_CLIP_WEIGHTS if w in files), None)
        if name is None:
            raise SpaceRefusal(
                f"{repo_id!r} has an open_clip configuration but no weights file, so there is "
                "no trained model to score."
            )
        if not name.endswith(".safetensors"):
            raise SpaceRefusal(
                f"{repo_id!r} publishes its open_clip weights only as a pickle file ({name}), "
                "which can run code when loaded; this Space loads safetensors weights only."
            )
        return {name: files[name]}
    weights = {f: s for f, s in files.items() if f.endswith(".safetensors")}
    if not weights and any(f.endswith(PICKLE_SUFFIXES) for f in files):
        raise SpaceRefusal(
            f"{repo_id!r} publishes its weights only as pickle files (e.g. pytorch_model.bin), "
            "which can run code when loaded; this Space loads safetensors weights only."
        )
    return weights


def check_model_cached(repo_id: str | None) -> None:
    """With the Hub switched off for this server, a Hub model must already be in its cache:
    refused at once otherwise (a loader would retry for a while, then name its internals).
    In the cache means: ``config.json`` (timm, transformers -- CLIP and SigLIP included), or
    an open_clip repo's ``open_clip_config.json`` with one of its weights files."""
    if repo_id is None or not hub_offline():
        return

    def cached(name: str) -> bool:
        from huggingface_hub import try_to_load_from_cache

        try:
            return isinstance(try_to_load_from_cache(repo_id, name), str)
        except Exception:
            return False

    if cached("config.json"):
        return
    if cached(OPEN_CLIP_CONFIG) and any(cached(w) for w in OPEN_CLIP_WEIGHTS):
        return
    raise SpaceRefusal(HUB_UNREACHABLE_MESSAGE.format(what=repr(repo_id)))
