"""transformers image classifiers: Hub ids and local ``save_pretrained`` folders.

Always ``trust_remote_code=False``; preprocessing comes from the model's image processor.
"""

from __future__ import annotations

import json
import logging
import os
import pickle

from hf_bgbench.hub.errors import HubUnreachableError, is_hub_unreachable
from hf_bgbench.models.errors import (
    ModelLoadError,
    hub_unreachable,
    is_remote_code_request,
    remote_code_refused,
    unsafe_checkpoint,
)

logger = logging.getLogger(__name__)


def read_local_config(folder: str) -> dict:
    path = os.path.join(folder, "config.json")
    try:
        with open(path, encoding="utf-8") as f:
            cfg = json.load(f)
    except FileNotFoundError:
        raise ModelLoadError(
            f"Folder {folder!r} has no config.json, so it is neither a timm `save_for_hf` folder "
            "nor a transformers `save_pretrained` folder. For a bare weights file pass an "
            "architecture and --checkpoint <file>."
        ) from None
    except (OSError, json.JSONDecodeError) as e:
        raise ModelLoadError(f"Could not read {path!r}: {e}") from e
    if not isinstance(cfg, dict):
        raise ModelLoadError(f"{path!r} is not a JSON object.")
    return cfg


def _translate(model_id: str, exc: Exception) -> Exception:
    if isinstance(exc, (ModelLoadError, HubUnreachableError)):
        return exc
    if is_remote_code_request(exc):
        return remote_code_refused(model_id)
    if is_hub_unreachable(exc):
        return hub_unreachable(model_id, exc)
    msg = str(exc)
    if isinstance(exc, pickle.UnpicklingError) or "weights_only" in msg:
        return unsafe_checkpoint(model_id, exc)
    if "Unrecognized configuration class" in msg:
        return ModelLoadError(
            f"{model_id!r} is not an image-classification model "
            "(AutoModelForImageClassification does not support its config). Use a model with "
            "an image-classification head."
        )
    if "Unrecognized model" in msg or "model_type" in msg:
        return ModelLoadError(
            f"transformers does not know the architecture of {model_id!r} ({msg.splitlines()[0]})."
            " Upgrade transformers, or use a model whose architecture it ships."
        )
    if type(exc).__name__ in ("RepositoryNotFoundError", "GatedRepoError", "RevisionNotFoundError"):
        return ModelLoadError(
            f"{model_id!r}: {msg.splitlines()[0] if msg else type(exc).__name__}. Check the repo "
            "id, or log in with `hf auth login` if the repo is private or gated."
        )
    first = msg.splitlines()[0] if msg else ""
    return ModelLoadError(
        f"transformers could not load {model_id!r}: {type(exc).__name__}: {first}"
    )


def load_transformers(model_id: str, location: str, *, local: bool):
    """Load ``location`` (Hub repo id or local folder) as an image classifier."""
    from hf_bgbench.models.classifier import Classifier, infer_label_space
    from hf_bgbench.models.preprocessing import Preprocessing

    if local:
        cfg = read_local_config(location)
        if "auto_map" in cfg:
            raise remote_code_refused(model_id, f" ({os.path.join(location, 'config.json')})")
    try:
        from transformers import AutoImageProcessor, AutoModelForImageClassification
    except ImportError as e:  # pragma: no cover
        raise ModelLoadError(f"transformers is needed to load {model_id!r}: {e}") from e
    try:
        model = AutoModelForImageClassification.from_pretrained(location, trust_remote_code=False)
    except Exception as e:
        raise _translate(model_id, e) from e
    try:
        processor = AutoImageProcessor.from_pretrained(location, trust_remote_code=False)
    except Exception as e:
        if is_remote_code_request(e):
            raise remote_code_refused(model_id) from e
        # Preprocessing must come from the model's own config, never from guessed defaults.
        raise ModelLoadError(
            f"{model_id!r} has no image processor config (preprocessor_config.json), so its "
            "preprocessing is unknown. Save it beside the model with "
            "AutoImageProcessor.from_pretrained(<base>).save_pretrained(folder)."
        ) from e
    config = model.config
    pre = Preprocessing.from_hf_image_processor(processor, model_config=config)
    num = int(getattr(config, "num_labels", 0) or 0)
    id2label = getattr(config, "id2label", None) or {}
    try:
        names = [str(id2label[i] if i in id2label else id2label[str(i)]) for i in range(num)]
    except KeyError:
        names = None
    if local:
        resolved = f"transformers:{os.path.abspath(location)}"
    else:
        commit = getattr(config, "_commit_hash", None)
        resolved = f"transformers:{location}" + (f"@{commit}" if commit else "")
    return Classifier(
        model_id=model_id,
        resolved=resolved,
        source="transformers",
        model=model,
        preprocessing=pre,
        label_space=infer_label_space(num, names),
    )
