"""Generative vision-language models (``AutoModelForImageTextToText`` + ``AutoProcessor``),
by Hub id or ``save_pretrained`` folder, as classifiers scored by a named rule
(:mod:`hf_bgbench.models.vlm.head`). Weights from safetensors only; never remote code."""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

import torch

from hf_bgbench.hub.snapshots import cached_commit
from hf_bgbench.models.classifier import Classifier, make_fingerprint
from hf_bgbench.models.errors import ModelLoadError
from hf_bgbench.models.preprocessing import Preprocessing, interpolation_name
from hf_bgbench.models.registry import ModelLoader, ModelRef, register_loader
from hf_bgbench.models.vlm.backends.hf_transformers import TransformersBackend
from hf_bgbench.models.vlm.head import build_head
from hf_bgbench.models.vlm.settings import VlmSettings

NO_ANSWER_STOP = 64
"""Images in a row without an answer after which a rule that leaves such images out of its
accuracy (ImageNet-D's two-way question) stops the run."""
DYNAMIC_CANVAS = 448
"""The square a photo is centre-cropped to for a processor without one fixed input size
(Qwen2-VL's pixel budget, Idefics3's longest edge): the benchmarks' own images go at their
own size, and the processor resizes them as it always does."""


def is_vlm_config(cfg: dict) -> bool:
    """True for a transformers config that ``AutoModelForImageTextToText`` loads."""
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES as IMAGE_TEXT_TO_TEXT,
    )

    return cfg.get("model_type") in IMAGE_TEXT_TO_TEXT


class VlmClassifier(Classifier):
    """A :class:`Classifier` whose ``model`` is a :class:`VlmHead`; ``vlm`` is its record."""

    kind = "generative"
    vlm: dict[str, Any]
    _unanswered_run = 0  # images in a row without an answer, for a rule that drops them
    # the (mean, std) its processor normalises with; a sentence where it is out of sight
    normalisation: tuple[tuple[float, ...], tuple[float, ...]] | str | None = None
    gradient_refusal = (
        "A generative VLM's class scores come from its text output (answer likelihoods, "
        "option letters or generated words), and bgbench defines no gradient map of such a "
        "decision; saliency and attribution need a classifier or a zero-shot model. Score "
        "the VLM with evaluate, challenge, noise or graying."
    )

    @property
    def autocast_refusal(self) -> str:
        """Why ``--precision`` autocast does not apply (its numerics are its backend's)."""
        dtype = self.vlm.get("dtype")
        if dtype is not None:
            return (
                f"a generative VLM runs in its weights' dtype ({dtype}, recorded), not under "
                "autocast."
            )
        return f"a VLM run by {self.vlm.get('backend')} runs as that engine runs it."

    def take_extras(self) -> dict[str, list[Any]]:
        return self.model.take_extras()

    @property
    def row_columns(self) -> tuple[str, ...]:
        """The data columns its rule asks each image about (a two-way question's negative)."""
        return self.model.rule.row_columns

    def scored(self, batch: torch.Tensor, rows: Any) -> tuple[torch.Tensor, dict[str, list]]:
        """(scores, per-image records) of ``batch`` whose first ``len(rows)`` images have
        ``rows`` (id, true label and the :attr:`row_columns` values). A rule that leaves
        unanswered images out of the accuracy is stopped once :data:`NO_ANSWER_STOP` images
        in a row got none: every further image would be computed for no number."""
        scores, extras = self.model.answer(batch, rows)
        if self.vlm.get("drops_unanswered") and len(rows):
            answered = scores[: len(rows)].argmax(1) < scores.shape[1] - 1
            self._unanswered_run = 0 if answered.any() else self._unanswered_run + len(rows)
            if self._unanswered_run >= NO_ANSWER_STOP:
                raise ValueError(
                    f"The model answered none of {self._unanswered_run} images in a row with "
                    "exactly one of its question's two classes, and this protocol leaves such "
                    "answers out of the accuracy: it does not follow the question, so the run "
                    "stops here instead of computing every image for no number (the answers "
                    "of the batches before are kept in the prediction cache). Score it under "
                    "another --protocol."
                )
        return scores, extras

    def usage(self) -> dict[str, Any]:
        return self.model.backend.usage()

    def describe(self) -> dict:
        return {**super().describe(), "head": "vlm", "vlm": self.vlm}


def canvas(image_processor: Any) -> Preprocessing:
    """[0, 1] pixels at the processor's own fixed size (else :data:`DYNAMIC_CANVAS`), never
    normalised: the processor normalises them as it always does."""
    d = image_processor.to_dict()
    crop, size = d.get("crop_size") or {}, d.get("size") or {}
    if d.get("do_center_crop") and "height" in crop:
        hw = (int(crop["height"]), int(crop["width"]))
    elif set(size) == {"height", "width"}:
        hw = (int(size["height"]), int(size["width"]))
    elif set(size) == {"shortest_edge"}:
        hw = (int(size["shortest_edge"]),) * 2
    else:
        hw = (DYNAMIC_CANVAS, DYNAMIC_CANVAS)
    return Preprocessing(
        input_size=hw,
        resize=hw[0] if hw[0] == hw[1] else hw,
        crop=hw,
        interpolation=interpolation_name(d.get("resample", 3)),
        mean=(0.0, 0.0, 0.0),
        std=(1.0, 1.0, 1.0),
    )


def load_vlm(
    model_id: str, location: str, *, local: bool, settings: VlmSettings, device: Any = None
) -> VlmClassifier:
    """``location`` (Hub repo id or local folder) scored by ``settings``: bf16 on a GPU,
    float32 elsewhere (recorded)."""
    from transformers import AutoModelForImageTextToText, AutoProcessor

    from hf_bgbench.models.classifier import state_dict_digest
    from hf_bgbench.models.transformers_models import translate_error

    on_gpu = device is not None and torch.device(device).type == "cuda"
    dtype = torch.bfloat16 if on_gpu else torch.float32
    try:
        model = AutoModelForImageTextToText.from_pretrained(
            location, trust_remote_code=False, dtype=dtype, use_safetensors=True
        )
        processor = AutoProcessor.from_pretrained(location, trust_remote_code=False)
    except Exception as e:
        raise _safetensors_only(model_id, e) or translate_error(model_id, e) from e
    model.eval()
    if getattr(processor, "tokenizer", None) is None:
        raise ModelLoadError(
            "The processor has no tokenizer, so no answer can be scored. Save the model's "
            "processor (tokenizer included) beside it."
        )
    head, space, record = build_head(TransformersBackend(model, processor), settings)
    image_processor = getattr(processor, "image_processor", None)
    if image_processor is None:
        raise ModelLoadError(f"{model_id!r}: its processor has no image processor.")
    pre = canvas(image_processor)
    resolved = _resolved(location, local, model.config)
    rule = hashlib.sha256(json.dumps(record, sort_keys=True).encode()).hexdigest()
    clf = VlmClassifier(
        model_id=model_id,
        resolved=resolved,
        source="transformers",
        model=head,
        preprocessing=pre,
        label_space=space,
        fingerprint=make_fingerprint(
            "transformers-vlm", f"{resolved}|{rule}", state_dict_digest(model), pre
        ),
    )
    clf.vlm = {**record, "canvas": list(pre.input_size)}
    d = image_processor.to_dict()
    if d.get("do_normalize", True):  # the processor normalises the [0, 1] pixels it is given
        clf.normalisation = (tuple(d["image_mean"]), tuple(d["image_std"]))
    return clf


def _resolved(location: str, local: bool, config: Any) -> str:
    """``transformers:<folder>``, or ``transformers:<repo>@<commit>``: the commit of the
    weights (from the Hub cache's snapshot when transformers does not say it)."""
    if local:
        return f"transformers:{os.path.abspath(location)}"
    commit = getattr(config, "_commit_hash", None) or cached_commit(
        location, ("model.safetensors", "model.safetensors.index.json", "config.json")
    )
    return f"transformers:{location}" + (f"@{commit}" if commit else "")


def _safetensors_only(model_id: str, exc: Exception) -> ModelLoadError | None:
    msg = str(exc)
    if "safetensors" in msg and ("does not appear to have" in msg or "no file named" in msg):
        return ModelLoadError(
            f"{model_id!r} has no safetensors weights (only pickled ones, e.g. "
            "pytorch_model.bin). bgbench loads a VLM's weights from safetensors only, since a "
            "pickle can run code; convert them with save_pretrained(safe_serialization=True)."
        )
    return None


def served_canvas() -> Preprocessing:
    """A served model's pixels: the benchmark's own images as they are (any size: the
    server's processor resizes them as it always does); raw photos centre-cropped to
    :data:`DYNAMIC_CANVAS` first. Never normalised (the server normalises)."""
    hw = (DYNAMIC_CANVAS, DYNAMIC_CANVAS)
    return Preprocessing(
        input_size=hw,
        resize=DYNAMIC_CANVAS,
        crop=hw,
        interpolation="bicubic",
        mean=(0.0, 0.0, 0.0),
        std=(1.0, 1.0, 1.0),
    )


def outside_classifier(
    model_id: str, backend: Any, settings: VlmSettings, resolved: str
) -> VlmClassifier:
    """The classifier of a backend whose model bgbench does not hold (served, or in vLLM's
    engine): the images go at the benchmark's own size (:func:`served_canvas`)."""
    try:
        head, space, record = build_head(backend, settings)
    except Exception:
        backend.close()
        raise
    pre = served_canvas()
    rule = hashlib.sha256(json.dumps(record, sort_keys=True).encode()).hexdigest()
    clf = VlmClassifier(
        model_id=model_id,
        resolved=resolved,
        source=backend.name,
        model=head,
        preprocessing=pre,
        label_space=space,
        fingerprint=make_fingerprint(backend.name, f"{resolved}|{rule}", "outside", pre),
    )
    clf.vlm = {**record, "canvas": "the benchmark's own image size"}
    clf.any_input_size = True
    return clf


def _load_vlm(ref: ModelRef) -> VlmClassifier:
    return load_vlm(
        ref.model_id, ref.location, local=ref.is_local, settings=ref.vlm, device=ref.device
    )


register_loader(  # before the transformers classifiers' (any model_type)
    ModelLoader(
        "transformers-vlm",
        "transformers",
        "generative vision-language models (AutoModelForImageTextToText: LLaVA, Qwen2-VL, "
        "PaliGemma, Idefics3/SmolVLM, InternVL, Gemma 3, ...) scored by a named rule",
        _load_vlm,
        files=lambda f: is_vlm_config(f.config()),
        kind="generative",
        priority=50,
    )
)
