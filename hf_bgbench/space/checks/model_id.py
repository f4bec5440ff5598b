"""Whether a model id a visitor typed may be loaded, checked before anything loads.

:func:`check_model_id`: a model id is a Hub repo id (``owner/name``, optionally written
``hf-hub:owner/name``) or a bundled model name, checked against the Hub's grammar; paths,
URLs, ``local-dir:``/``file:`` ids, weight files and odd characters are refused, and so are
open_clip's own ``ARCH/tag`` names, pointing to the Hub repo that holds the weights
(:func:`open_clip_name`). Pure functions, no Gradio.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from hf_bgbench.models.bundled import bundled_variant
from hf_bgbench.models.open_clip_models import is_open_clip_arch, is_open_clip_name
from hf_bgbench.space.checks.messages import SpaceRefusal
from hf_bgbench.space.checks.model_weights import PICKLE_SUFFIXES

MAX_ID_LENGTH = 96 * 2 + 1
_PART = r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9])?"
HUB_ID = re.compile(rf"^({_PART})/({_PART})$")
"""A Hub repo id: ``owner/name``, each 1-96 ASCII letters, digits, ``.``, ``_``, ``-``,
starting and ending with a letter or digit (``huggingface_hub.utils.validate_repo_id``)."""
_FILE_EXTS = (".safetensors", *PICKLE_SUFFIXES, ".zip", ".json", ".onnx")
MODEL_HINT = (
    "Enter a model repository from the Hugging Face Hub as owner/name (for example "
    "timm/resnet50.a1_in1k, microsoft/resnet-50 or, scored zero-shot, "
    "openai/clip-vit-base-patch32), or the bundled tf_efficientnet_lite0."
)


@dataclass(frozen=True)
class SafeModel:
    """A checked model id: ``model_id`` is what the loader gets; ``repo_id`` the Hub repo
    (None for a bundled model)."""

    model_id: str
    repo_id: str | None


def check_model_id(text: str) -> SafeModel:
    """The model a visitor typed, checked before anything loads; :class:`SpaceRefusal` if it
    is not a Hub repo id or a bundled model name."""
    mid = (text or "").strip()
    if not mid:
        raise SpaceRefusal(f"No model entered. {MODEL_HINT}")
    if len(mid) > MAX_ID_LENGTH:
        raise SpaceRefusal(f"That model id is too long ({len(mid)} characters). {MODEL_HINT}")
    if any(c.isspace() or not c.isprintable() for c in mid) or not mid.isascii():
        raise SpaceRefusal(
            f"A model id contains only letters, digits, '.', '_', '-' and one '/'. {MODEL_HINT}"
        )
    n = bundled_variant(mid)
    if n is not None:
        return SafeModel(f"tf_efficientnet_lite{n}", None)
    for prefix in ("hf-hub:", "hf_hub:"):
        if mid.startswith(prefix):
            mid = mid[len(prefix) :]
            break
    if _looks_like_path(mid):
        raise SpaceRefusal(
            "This Space loads models from the Hugging Face Hub only, not files or folders on "
            f"its server, so paths and links are refused. {MODEL_HINT}"
        )
    if mid.lower().endswith(_FILE_EXTS):
        raise SpaceRefusal(
            "That looks like a weights file, which this Space does not load (weights come from "
            f"a Hub repository's safetensors files). {MODEL_HINT}"
        )
    if "/" not in mid:
        raise _bare_name_refusal(mid)
    if not HUB_ID.match(mid) or "--" in mid or ".." in mid or mid.endswith(".git"):
        raise SpaceRefusal(f"{mid!r} is not a valid Hub repository id. {MODEL_HINT}")
    if os.path.lexists(mid):  # the loader would read a relative folder of the same name
        raise SpaceRefusal(
            f"{mid!r} names a folder on this Space's server, which is never loaded. {MODEL_HINT}"
        )
    named = open_clip_name(mid)
    if named is not None:
        raise SpaceRefusal(_open_clip_name_message(mid, named))
    return SafeModel(mid, mid)


def _bare_name_refusal(mid: str) -> SpaceRefusal:
    """Why a name without an owner (``resnet50``, ``timm``) is no Hub repo id, saying what to
    write instead."""
    if not re.fullmatch(_PART, mid) or ".." in mid or "--" in mid:
        return SpaceRefusal(f"{mid!r} is not a valid Hub repository id. {MODEL_HINT}")
    if mid.lower().replace("-", "_") in _library_names():
        return SpaceRefusal(
            f"{mid!r} names a model library, not a model; give one model's Hub "
            f"repository as owner/name. {MODEL_HINT}"
        )
    return SpaceRefusal(
        f"{mid!r} is not a Hub repository id (owner/name). For a timm model, write it as "
        f"timm/{mid}. {MODEL_HINT}"
    )


def _library_names() -> set[str]:
    """The model libraries the loaders know (timm, transformers, open_clip, ...): a bare
    one of them is no model, and ``timm/timm`` no suggestion."""
    from hf_bgbench.models.loader import LOADERS

    return {loader.family.lower() for loader in LOADERS} | {"openclip", "open_clip"}


def open_clip_name(mid: str) -> str | None:
    """For open_clip's own ``ARCH/tag`` name of a pretrained model
    (``ViT-B-32/laion2b_s34b_b79k``, ``ViT-B-32/openai``): the Hub repo open_clip downloads
    its weights from ("" if it names none). None for any other id.

    Such a name has a Hub id's shape, but the loader reads it as open_clip's name *before* it
    would read it as a Hub repo (:func:`hf_bgbench.models.loader.load_classifier`): the
    Space's checks, which look the id up as a Hub repo, would check a repo that is not the one
    loaded (online: "no such repository"; offline: "not cached"), and open_clip would pick the
    weights file itself. So the Space refuses these names, deliberately, and names the Hub repo
    instead: that repo normally holds the same weights beside an ``open_clip_config.json``, so
    it loads the same model, and it goes through the same checks as any Hub id (size,
    safetensors only, cached when offline) on the files the loader reads; one model also keeps
    one id on the leaderboard."""
    if not is_open_clip_arch(mid):
        return None
    arch, _, tag = mid.partition("/")

    if not is_open_clip_name(mid):  # the loader's own test: it then reads a Hub repo
        return None
    from open_clip import get_pretrained_cfg

    # hf_hub is "owner/name/" or "owner/name/<weights file>"
    hub = str((get_pretrained_cfg(arch, tag) or {}).get("hf_hub") or "").strip("/")
    repo = "/".join(hub.split("/")[:2])
    return repo if HUB_ID.match(repo) else ""


def _open_clip_name_message(mid: str, repo: str) -> str:
    said = (
        f"{mid!r} is open_clip's own name for a pretrained model, not a Hugging Face Hub "
        "repository; this Space loads a model by its Hub repository, which it checks before "
        "anything downloads."
    )
    if repo:
        return f"{said} Enter the repository that holds its weights instead: {repo}."
    return f"{said} open_clip names no Hub repository for it. {MODEL_HINT}"


def _looks_like_path(mid: str) -> bool:
    return (
        mid.startswith(("/", ".", "~", "\\"))
        or "\\" in mid
        or ":" in mid  # local-dir:, file:, transformers:, https:, C:...
        or mid.count("/") > 1
        or ".." in mid.split("/")
        or mid.endswith("/")
    )
