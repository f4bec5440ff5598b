"""transformers image classifiers: Hub ids and local ``save_pretrained`` folders.

Always ``trust_remote_code=False``; preprocessing comes from the model's image processor.
"""

from __future__ import annotations

import logging
import os
import pickle
from typing import Any

import torch

from hf_bgbench.hub.errors import HubUnreachableError, is_hub_unreachable
from hf_bgbench.models.errors import (
    ModelLoadError,
    hub_unreachable,
    is_remote_code_request,
    remote_code_refused,
    unsafe_checkpoint,
)
from hf_bgbench.models.registry import ModelLoader, ModelRef, read_local_config, register_loader

logger = logging.getLogger(__name__)


def translate_error(model_id: str, exc: Exception) -> Exception:
    """The user-facing error for an exception transformers raised loading ``model_id``."""
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
            f"{model_id!r} is neither an image classifier (AutoModelForImageClassification) nor "
            "an image-text model scored zero-shot (AutoModelForZeroShotImageClassification: "
            "CLIP, SigLIP, ALIGN, ...) nor a generative vision-language model "
            "(AutoModelForImageTextToText: LLaVA, Qwen2-VL, PaliGemma, ...); a text-only or "
            "other model cannot classify images. Use a model with an image-classification "
            "head, an image and a text tower, or an image-text-to-text head."
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
        raise translate_error(model_id, e) from e
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


def is_zero_shot_config(cfg: dict) -> bool:
    """True for a transformers config that ``AutoModelForZeroShotImageClassification`` loads
    (CLIP, SigLIP, SigLIP 2, ALIGN, ...) and that carries no trained image-classification
    head (``architectures`` naming ``*ForImageClassification``: then it is a classifier)."""
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_ZERO_SHOT_IMAGE_CLASSIFICATION_MAPPING_NAMES as ZERO_SHOT,
    )

    archs = cfg.get("architectures") or []
    if any(str(a).endswith("ForImageClassification") for a in archs):
        return False
    return cfg.get("model_type") in ZERO_SHOT


class _ImageFeatures(torch.nn.Module):
    """A transformers image-text model's image side as a module: normalised pixels ->
    (N, D) image embeddings (``get_image_features``), the whole model registered so its
    layers keep their names (``model.vision_model...``) for Grad-CAM."""

    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.model = model

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.model.get_image_features(pixel_values=x)
        return out if isinstance(out, torch.Tensor) else out.pooler_output


def _tokenizer_of(model_id: str, location: str, processor: Any, model_type: str):
    tokenizer = getattr(processor, "tokenizer", None)
    if tokenizer is None:
        raise ModelLoadError(
            f"{model_id!r} is an image-text model scored zero-shot, but its processor has no "
            "tokenizer (no tokenizer files beside the model), so the class prompts cannot be "
            "embedded. Save the tokenizer with it: AutoProcessor.from_pretrained(<base>)"
            ".save_pretrained(folder)."
        )
    # SigLIP was trained on prompts padded to the full length (as transformers' pipeline pads)
    padding = "max_length" if model_type in ("siglip", "siglip2") else True

    def tokenize(texts: list[str]):
        return tokenizer(texts, padding=padding, truncation=True, return_tensors="pt")

    return tokenize, type(tokenizer).__name__


def _logit_scale(model: torch.nn.Module) -> float:
    """The factor on the cosine similarities: ``exp(logit_scale)`` (CLIP, SigLIP) or
    ``1 / temperature`` (ALIGN). It moves no argmax; it sets the softmax probabilities."""
    scale = getattr(model, "logit_scale", None)
    if scale is not None:
        return float(torch.as_tensor(scale).detach().float().exp())
    temperature = getattr(model, "temperature", None)
    if temperature is not None:
        return float(1.0 / torch.as_tensor(temperature).detach().float())
    raise ModelLoadError(
        f"{type(model).__name__} has neither logit_scale nor temperature, so its zero-shot "
        "logits cannot be formed as the model was trained to."
    )


def load_transformers_zero_shot(
    model_id: str,
    location: str,
    *,
    local: bool,
    prompts,
    progress: bool = True,
    device: Any = None,
):
    """``location`` (Hub repo id or local folder) as a zero-shot classifier over ``prompts``
    (:class:`hf_bgbench.models.zero_shot.Prompts`)."""
    from hf_bgbench.models.classifier import state_dict_digest
    from hf_bgbench.models.preprocessing import Preprocessing
    from hf_bgbench.models.zero_shot import TextTower, last_token_norm, zero_shot_classifier

    if local:
        cfg = read_local_config(location)
        if "auto_map" in cfg:
            raise remote_code_refused(model_id, f" ({os.path.join(location, 'config.json')})")
    import transformers
    from transformers import AutoModelForZeroShotImageClassification, AutoProcessor

    try:
        model = AutoModelForZeroShotImageClassification.from_pretrained(
            location, trust_remote_code=False
        )
    except Exception as e:
        raise translate_error(model_id, e) from e
    try:
        processor = AutoProcessor.from_pretrained(location, trust_remote_code=False)
    except Exception as e:
        if is_remote_code_request(e):
            raise remote_code_refused(model_id) from e
        if is_hub_unreachable(e):
            raise hub_unreachable(model_id, e) from e
        raise ModelLoadError(
            f"{model_id!r}: its processor (image processor + tokenizer) cannot be loaded "
            f"({type(e).__name__}: {(str(e).splitlines() or [''])[0][:200]}). Save it beside "
            "the model: AutoProcessor.from_pretrained(<base>).save_pretrained(folder)."
        ) from e
    image_processor = getattr(processor, "image_processor", None)
    if image_processor is None:
        raise ModelLoadError(
            f"{model_id!r} has no image processor config (preprocessor_config.json), so its "
            "preprocessing is unknown. Save the processor beside the model."
        )
    model.eval().to(device or "cpu")  # the text side runs where the model will
    config = model.config
    model_type = str(getattr(config, "model_type", ""))
    tokenize, tokenizer_name = _tokenizer_of(model_id, location, processor, model_type)
    pre = Preprocessing.from_hf_image_processor(
        image_processor, model_config=getattr(config, "vision_config", None)
    )
    if local:
        resolved = f"transformers:{os.path.abspath(location)}"
    else:
        commit = getattr(config, "_commit_hash", None)
        resolved = f"transformers:{location}" + (f"@{commit}" if commit else "")
    weights = state_dict_digest(model)

    def encode(tokens) -> torch.Tensor:
        out = model.get_text_features(**tokens)
        return out if isinstance(out, torch.Tensor) else out.pooler_output

    text = TextTower(encode=encode, tokenize=tokenize, weights=weights, tokenizer=tokenizer_name)
    bias = getattr(model, "logit_bias", None)
    tower = _ImageFeatures(model)
    return zero_shot_classifier(
        tower,
        text,
        prompts,
        model_id=model_id,
        resolved=resolved,
        source="transformers",
        library=f"transformers {transformers.__version__}",
        preprocessing=pre,
        logit_scale=_logit_scale(model),
        logit_bias=None if bias is None else float(torch.as_tensor(bias).detach().float()),
        cam_layer=last_token_norm(
            tower, "model.vision_model.encoder.layers", "layer_norm1", "tower"
        ),
        features_source="the image tower's embedding (transformers get_image_features)",
        progress=progress,
        device=device,
    )


# --------------------------------------------------------------------------- its loaders


def _load_transformers(ref: ModelRef) -> Any:
    return load_transformers(ref.model_id, ref.location, local=ref.is_local)


def _load_transformers_zero_shot(ref: ModelRef) -> Any:
    return load_transformers_zero_shot(
        ref.model_id,
        ref.location,
        local=ref.is_local,
        prompts=ref.prompts(),
        progress=ref.progress,
        device=ref.device,
    )


register_loader(
    ModelLoader(
        "transformers-zero-shot",
        "transformers",
        "transformers image-text models scored zero-shot (AutoModelForZeroShotImageClassification"
        ": CLIP, SigLIP, SigLIP 2, ALIGN, ...)",
        _load_transformers_zero_shot,
        files=lambda f: is_zero_shot_config(f.config()),
        kind="zero-shot",
        priority=40,
    )
)
register_loader(  # last: any other model_type (the generative VLMs' are tried before it)
    ModelLoader(
        "transformers",
        "transformers",
        "transformers image classifiers (AutoModelForImageClassification)",
        _load_transformers,
        files=lambda f: "model_type" in f.config(),
        priority=60,
    )
)
