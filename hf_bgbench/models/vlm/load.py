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
from hf_bgbench.labels import LabelSpace, imagenet_label_space
from hf_bgbench.models.classifier import Classifier, infer_label_space, make_fingerprint
from hf_bgbench.models.errors import ModelLoadError
from hf_bgbench.models.preprocessing import Preprocessing, interpolation_name
from hf_bgbench.models.vlm.answers import synonym_table
from hf_bgbench.models.vlm.head import VlmHead, generation_settings
from hf_bgbench.models.vlm.prompts import answer_tokens, letter_tokens, template_sha256
from hf_bgbench.models.vlm.settings import (
    NO_ANSWER,
    PAIR,
    PROTOCOL_SUMMARY,
    VlmSettings,
    class_string,
)
from hf_bgbench.models.zero_shot import ClassNames, prompts_for

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

    vlm: dict[str, Any]
    normalisation: tuple[tuple[float, ...], tuple[float, ...]] | None = None
    gradient_refusal = (
        "A generative VLM's class scores come from its text output (answer likelihoods, "
        "option letters or generated words), and bgbench defines no gradient map of such a "
        "decision; saliency and attribution need a classifier or a zero-shot model. Score "
        "the VLM with evaluate, challenge, noise or graying."
    )

    def take_extras(self) -> dict[str, list[Any]]:
        return self.model.take_extras()

    @property
    def row_columns(self) -> tuple[str, ...]:
        """The data columns its rule asks each image about (a two-way question's negative)."""
        question = self.model.settings.question
        return (question.column,) if question is not None else ()

    def set_row_data(self, values: dict[str, int]) -> None:
        """Image id -> the :attr:`row_columns` value of the images about to be scored."""
        self.model.set_negatives(values)

    def see_rows(self, ids: Any, labels: Any) -> None:
        self.model.see_rows(ids, labels)

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


def _classes(settings: VlmSettings) -> tuple[ClassNames, LabelSpace]:
    if settings.classes == "imagenet":
        if settings.protocol != "likelihood":
            raise ModelLoadError(
                f"--vlm-protocol {settings.protocol} lists or matches the classes themselves, "
                "which does not work for ImageNet's 1000: use --vlm-classes benchmark (the "
                "benchmark's own classes), or --vlm-protocol likelihood."
            )
        imagenet = prompts_for("imagenet", ["{}"])
        return ClassNames(imagenet.classnames, imagenet.class_source), imagenet_label_space()
    names = settings.classes
    if settings.may_abstain:
        return names, LabelSpace("custom", (*names.names, NO_ANSWER))
    return names, infer_label_space(len(names.names), names.names)


def _record(head: VlmHead, settings: VlmSettings, classes: ClassNames, dtype: torch.dtype):
    import transformers

    s = settings
    record: dict[str, Any] = {
        "protocol": s.protocol,
        "rule": PROTOCOL_SUMMARY[s.protocol],
        "prompt": head.prompts[0],
        "prompt_source": s.prompt_source,
        "rule_source": s.rule_source,
        "drops_unanswered": s.protocol == PAIR,
        "add_special_tokens": head.text_kwargs.get("add_special_tokens", True),
        "choices": list(head.choices),
        "classes_source": classes.source,
        "chat_template_sha256": template_sha256(head.processor),
        "transformers": transformers.__version__,
        "dtype": str(dtype).removeprefix("torch."),
    }
    if s.protocol == "likelihood":
        record.update(score=s.score, choice_tokens=head.answer_ids)
    if s.protocol == "choice":
        record.update(
            letters=[chr(65 + i) for i in range(len(head.choices))],
            letter_tokens=head.letter_ids,
            rotations=s.circular,
            rotation_orders=head.rotations(),
            prompts=head.prompts,
        )
    if s.protocol in (PAIR, "open"):  # the rules that generate an answer
        settings = generation_settings(s).items()
        record["generation"] = {k: v for k, v in settings if v is not None}
    if s.protocol == PAIR:
        q = s.question
        record.update(
            question=q.prompt,
            negative_column=q.column,
            answer_words={k: list(v) for k, v in q.answer_words.items()},
            outer_first=[list(x) for x in q.outer_first],
            matching="substring of the lower-cased answer (the authors' compute_accuracy.py)",
            unanswered="left out of the accuracy (answers naming both classes or neither)",
            question_source=q.source,
            deviations=list(q.deviations),
        )
    if s.protocol == "open":
        record.update(
            synonyms=[list(x) for x in s.synonyms],
            synonyms_source=s.synonyms_source,
        )
    return record


def _open_synonyms(settings: VlmSettings, classes: ClassNames) -> VlmSettings:
    if settings.protocol != "open" or settings.synonyms is not None:
        return settings
    from dataclasses import replace

    table = synonym_table(classes.names, [() for _ in classes.names])
    return replace(settings, synonyms=table, synonyms_source="the class names only")


def vlm_head(model: Any, processor: Any, settings: VlmSettings, dtype: torch.dtype):
    """(head, label space, record) of a loaded model and processor."""
    classes, space = _classes(settings)
    settings = _open_synonyms(settings, classes)
    tokenizer = getattr(processor, "tokenizer", None)
    if tokenizer is None:
        raise ModelLoadError(
            "The processor has no tokenizer, so no answer can be scored. Save the model's "
            "processor (tokenizer included) beside it."
        )
    # a two-way question names the classes as the benchmark's protocol writes them
    choices = (
        list(classes.names)
        if settings.protocol == PAIR
        else [class_string(n) for n in classes.names]
    )
    answer_ids = answer_tokens(tokenizer, choices) if settings.protocol == "likelihood" else None
    letter_ids = letter_tokens(tokenizer, len(choices)) if settings.protocol == "choice" else None
    head = VlmHead(
        model, processor, settings, choices, answer_ids=answer_ids, letter_ids=letter_ids
    )
    return head, space, _record(head, settings, classes, dtype)


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
    head, space, record = vlm_head(model, processor, settings, dtype)
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
