"""A generative VLM as a classifier: a rule (:mod:`hf_bgbench.models.vlm.rules`) asking a
backend (:mod:`hf_bgbench.models.vlm.backend`). The one place a head is built
(:func:`build_head`): the classes, the rule, the label space and the record."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import torch

from hf_bgbench.labels import LabelSpace, imagenet_label_space
from hf_bgbench.models.classifier import infer_label_space
from hf_bgbench.models.errors import ModelLoadError
from hf_bgbench.models.heads import ClassNames
from hf_bgbench.models.vlm.answers import synonym_table
from hf_bgbench.models.vlm.backend import CONTINUATION, GENERATE, NEXT_TOKEN, Backend
from hf_bgbench.models.vlm.rules import Rule, make_rule
from hf_bgbench.models.vlm.rules.base import Row
from hf_bgbench.models.vlm.settings import NO_ANSWER, PAIR, VlmSettings, class_string


class VlmHead(torch.nn.Module):
    """``rule`` asking ``backend``: [0, 1] pixels (and each image's row) -> class scores.
    The backend's model, when it has one in this process, is a submodule (moved with the
    head)."""

    def __init__(self, rule: Rule, backend: Backend):
        super().__init__()
        self.rule = rule
        self.backend = backend
        model = getattr(backend, "model", None)
        if isinstance(model, torch.nn.Module):
            self.model = model
        self.extras: dict[str, list[Any]] = {}

    @property
    def settings(self) -> VlmSettings:
        return self.rule.settings

    def answer(
        self, pixels: torch.Tensor, rows: Sequence[Row]
    ) -> tuple[torch.Tensor, dict[str, list]]:
        """(len(pixels), C) scores and the per-image records of the first ``len(rows)``
        images (rows past them, a GPU's padding, are not asked: they score no class)."""
        n = len(rows)
        ask = {
            NEXT_TOKEN: self.backend.next_token_logprobs,
            CONTINUATION: self.backend.continuation_logprobs,
            GENERATE: self.backend.generate,
        }[self.rule.kind]
        requests = self.rule.requests(pixels[:n], rows)
        scores, extras = self.rule.scores(ask(requests) if requests else [], rows)
        scores = scores.reshape(n, self.rule.width)
        extras["class_scores"] = [[round(float(v), 6) for v in row] for row in scores]
        if n < len(pixels):
            scores = torch.cat([scores, scores.new_zeros(len(pixels) - n, scores.shape[1])])
        return scores.to(pixels.device), extras

    def forward(self, pixels: torch.Tensor) -> torch.Tensor:
        """Scores of images without rows (a rule that asks about a row refuses)."""
        scores, extras = self.answer(pixels, [{} for _ in range(len(pixels))])
        for key, values in extras.items():
            self.extras.setdefault(key, []).extend(values)
        return scores

    def take_extras(self) -> dict[str, list[Any]]:
        """The per-image records of the images :meth:`forward` scored since the last call."""
        extras, self.extras = self.extras, {}
        return extras


def build_head(
    backend: Backend, settings: VlmSettings
) -> tuple[VlmHead, LabelSpace, dict[str, Any]]:
    """(head, label space, record) of ``settings``' rule asking ``backend``: the only place
    a rule meets a backend, refused before any request when the backend cannot serve it."""
    classes, settings = _classes(settings)
    # a two-way question names the classes as the benchmark's protocol writes them
    choices = (
        list(classes.names)
        if settings.protocol == PAIR
        else [class_string(n) for n in classes.names]
    )
    rule = make_rule(settings, choices, backend)
    if settings.classes == "imagenet":
        space = imagenet_label_space()
    elif rule.may_abstain:
        space = LabelSpace("custom", (*classes.names, NO_ANSWER))
    else:
        space = infer_label_space(len(classes.names), classes.names)
    head = VlmHead(rule, backend)
    return head, space, _record(rule, backend, settings, classes)


def _classes(settings: VlmSettings) -> tuple[ClassNames, VlmSettings]:
    from hf_bgbench.models.zero_shot import prompts_for

    if settings.classes == "imagenet":
        if settings.protocol != "likelihood":
            raise ModelLoadError(
                f"--vlm-protocol {settings.protocol} lists or matches the classes themselves, "
                "which does not work for ImageNet's 1000: use --vlm-classes benchmark (the "
                "benchmark's own classes), or --vlm-protocol likelihood."
            )
        imagenet = prompts_for("imagenet", ["{}"])
        return ClassNames(imagenet.classnames, imagenet.class_source), settings
    names = settings.classes
    if settings.protocol == "open" and settings.synonyms is None:
        table = synonym_table(names.names, [() for _ in names.names])
        settings = replace(settings, synonyms=table, synonyms_source="the class names only")
    return names, settings


def _record(
    rule: Rule, backend: Backend, settings: VlmSettings, classes: ClassNames
) -> dict[str, Any]:
    backend_record = backend.record()
    record: dict[str, Any] = {
        "protocol": settings.protocol,
        "rule": rule.summary,
        "prompt_source": settings.prompt_source,
        "rule_source": settings.rule_source,
        "drops_unanswered": settings.protocol == PAIR,
        "choices": list(rule.choices),
        "classes_source": classes.source,
        "backend": backend_record.pop("name"),
        **backend_record,
        **rule.record(),
    }
    if rule.kind == GENERATE:  # the rules that generate an answer: how, recorded
        question = settings.question
        tokens = question.max_new_tokens if question else settings.max_new_tokens
        record["generation"] = backend.generation(tokens)
    return record
