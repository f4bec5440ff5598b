"""The model a run scores and how its outputs become benchmark labels: the classifier (a
model id loaded, a zero-shot head over class names and prompts, a generative VLM under its
rule, a linear probe), its label mapping and the :class:`ModelStep` that runs it
(:func:`model_step_for`)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from hf_bgbench.benchmarks import BenchmarkSpec
from hf_bgbench.data.sources import Reader
from hf_bgbench.inference.mapping import LabelMapper
from hf_bgbench.inference.model_step import ModelStep
from hf_bgbench.labels import imagenet_classes
from hf_bgbench.models.classifier import ORDER_ASSUMED
from hf_bgbench.models.devices import checked_precision, resolve_device
from hf_bgbench.models.vlm import VlmSettings, read_prompt
from hf_bgbench.models.vlm.answer_words import read_table
from hf_bgbench.models.vlm.answers import lemma_source, synonym_table
from hf_bgbench.models.vlm.settings import NO_ANSWER, PAIR, ServedSettings
from hf_bgbench.models.zero_shot import ClassNames, ProtocolTemplates
from hf_bgbench.probe.features import probed_classifier
from hf_bgbench.spec import Protocol
from hf_bgbench.tasks.options import LABEL_MAPS, VLM_OPTIONS, changed_options

__all__ = [
    "ModelRequest",
    "is_generative",
    "vlm_record",
    "class_members",
    "class_synonyms",
    "classifier_and_mapper",
    "label_order_assumption",
    "load_model",
    "model_step_for",
    "options_fixed_by",
    "served_settings",
    "vlm_settings",
    "zero_shot_classnames",
    "zero_shot_head",
]

log = logging.getLogger(__name__)


def load_model(
    model: Any,
    checkpoint: str | None = None,
    device: str | None = None,
    *,
    classnames: str | Sequence[str] | ClassNames | None = "imagenet",
    templates: str | Sequence[str] = "openai",
    progress: bool = True,
    vlm: VlmSettings | None = None,
) -> Any:
    """A loaded classifier: ``model`` itself, or :func:`load_classifier` of a model id (a
    zero-shot model's head over ``classnames`` with ``templates``; a generative VLM scored
    by ``vlm``)."""
    if isinstance(model, Path):
        model = str(model)
    if not isinstance(model, str):
        if getattr(model, "label_space", None) is None:
            raise ValueError(
                f"The model must be a model id (a str such as 'tf_efficientnet_lite0', a Hub "
                "id or a folder) or a model loaded with hf_bgbench.load_classifier, not "
                f"{type(model).__name__} {model!r}."
            )
        return model
    from hf_bgbench.models import load_classifier

    return load_classifier(
        model,
        checkpoint=checkpoint,
        device=device,
        classnames=classnames,
        templates=templates,
        progress=progress,
        vlm=vlm,
    )


def options_fixed_by(
    protocol: Protocol, spec: BenchmarkSpec, options: Any, names: Sequence[str], what: str
) -> None:
    """Refuse options in ``names`` given other values than their defaults when ``protocol``
    fixes ``what`` they choose (they would be ignored): the message names the benchmark's
    other recipes of the task."""
    given = changed_options(options, names)
    if not given:
        return
    others = [p.name for ps in spec.protocols.values() for p in ps if p.name != protocol.name]
    flags = ", ".join(given.values())
    raise ValueError(
        f"{flags}: {spec.short_name}'s protocol {protocol.name!r} fixes {what}, so the "
        "option would be ignored. Leave it out, or choose the rule yourself under "
        + (f"--protocol {' / '.join(others)}." if others else "another protocol.")
    )


def zero_shot_head(options: Any, spec: BenchmarkSpec, protocol: Protocol) -> tuple[str, Any]:
    """(classes, templates) of a zero-shot head: the protocol's when it fixes them, else the
    options' (``--zero-shot-classes``, ``--templates``)."""
    fixed = getattr(protocol.settings, "zero_shot", None)
    if fixed is None:
        return options.zero_shot_classes, options.templates
    names = ("zero_shot_classes", "templates")
    options_fixed_by(protocol, spec, options, names, "the zero-shot head")
    return fixed.classes, ProtocolTemplates(fixed.templates, f"protocol {protocol.name}")


def vlm_settings(
    options: Any, spec: BenchmarkSpec, protocol: Protocol | None = None
) -> VlmSettings:
    """How a generative VLM is scored on ``spec``: the protocol's two-way question when it
    sets one, else from a task's options (``--vlm-*``, ``--circular``): its classes
    resolved, and for ``open`` the synonyms of each class."""
    question = getattr(protocol.settings, "vlm_question", None) if protocol else None
    if question is not None:
        options_fixed_by(protocol, spec, options, VLM_OPTIONS, "how a VLM is scored")
        return VlmSettings(
            protocol=PAIR,
            classes=zero_shot_classnames("benchmark", spec),
            question=question,
            rule_source=f"protocol {protocol.name}",
            served=served_settings(options),
        )
    prompt, source = read_prompt(options.vlm_prompt)
    classes = zero_shot_classnames(options.vlm_classes, spec)
    synonyms = synonyms_source = None
    blockers: tuple[str, ...] = ()
    if options.vlm_protocol == "open" and classes != "imagenet":
        synonyms, blockers, synonyms_source = class_synonyms(spec)
    return VlmSettings(
        served=served_settings(options),
        protocol=options.vlm_protocol,
        score=options.vlm_score,
        circular=options.circular,
        classes=classes,
        prompt=prompt,
        prompt_source=source,
        max_new_tokens=options.vlm_max_new_tokens,
        synonyms=synonyms,
        synonyms_source=synonyms_source,
        blockers=blockers,
    )


def served_settings(options: Any) -> ServedSettings:
    """How a served model is reached, from a task's ``--api-*`` options."""
    return ServedSettings(
        api_base=options.api_base,
        api_key_env=options.api_key_env,
        server=options.api_server,
        max_concurrency=options.max_concurrency,
        retries=options.api_retries,
        timeout=float(options.api_timeout),
        cache_dir=None if options.api_cache is None else str(options.api_cache),
        seed=getattr(options, "seed", 0),
        tensor_parallel_size=options.tensor_parallel_size,
    )


def class_members(spec: BenchmarkSpec) -> list[list[str]] | None:
    """Per benchmark class, the wnids of the ImageNet-1k classes its published mapping assigns
    to it (None: the benchmark has no mapping)."""
    if "imagenet-1k" not in spec.label_maps:
        return None
    wnids, table = imagenet_classes()[0], spec.label_maps["imagenet-1k"]()
    return [
        [w for w, k in zip(wnids, table, strict=True) if k == c] for c in range(spec.num_classes)
    ]


def class_synonyms(
    spec: BenchmarkSpec,
) -> tuple[tuple[tuple[str, ...], ...], tuple[str, ...], str]:
    """(per class the phrases an open answer may use, the blocking compounds, their source):
    the benchmark's answer-word table (:mod:`hf_bgbench.models.vlm.answer_words`), else its
    class names and the WordNet lemmas of the ImageNet-1k classes mapped to each."""
    found = read_table(spec.name, spec.classes)
    if found is not None:
        return found.classes, found.blockers, found.source
    members = class_members(spec)
    if members is None:
        return synonym_table(spec.classes, [[] for _ in spec.classes]), (), "the class names"
    source = (
        f"the class names and the {lemma_source()} of the ImageNet-1k classes "
        f"{spec.short_name}'s published mapping assigns to each"
    )
    return synonym_table(spec.classes, members), (), source


def zero_shot_classnames(choice: str, spec: BenchmarkSpec) -> str | ClassNames:
    """What ``--zero-shot-classes`` names: ``imagenet`` (the published protocols: ImageNet's
    1000 classes, then the benchmark's own mapping) or ``benchmark`` (a head over the
    benchmark's own class names: a named protocol, recorded)."""
    if choice == "imagenet":
        return "imagenet"
    if choice == "benchmark":
        names = tuple(spec.label_space.names)
        return ClassNames(names, f"benchmark ({spec.short_name}'s own {len(names)} classes)")
    raise ValueError(f"--zero-shot-classes {choice!r}: choose imagenet or benchmark.")


@dataclass(frozen=True)
class ModelRequest:
    """How a run asks for its model, set once from the task's options and the protocol and
    passed whole to what loads it (:func:`model_step_for`, :func:`classifier_and_mapper`):
    ``label_map`` (``--label-map``), ``restrict_to_benchmark``, a ``checkpoint``, the
    ``device``, ``progress`` bars, a zero-shot head's ``zero_shot_classes`` and
    ``templates``, a generative VLM's ``vlm`` settings and the ``precision`` it runs in."""

    label_map: str = "auto"
    restrict_to_benchmark: bool = False
    checkpoint: str | None = None
    device: str | torch.device | None = None
    progress: bool = True
    zero_shot_classes: str = "imagenet"
    templates: str = "openai"
    vlm: VlmSettings | None = None
    precision: str = "fp32"


def classifier_and_mapper(
    model: Any,
    spec: BenchmarkSpec,
    reader: Reader,
    request: ModelRequest | None = None,
    **probe_options: Any,
) -> tuple[Any, LabelMapper]:
    """The classifier every task scores, and how its outputs become benchmark labels.

    ``request`` (:class:`ModelRequest`): how the run asks for it. Its ``label_map``:
    ``auto`` = the benchmark's default (``spec.default_label_map``);
    ``model`` = the model's own classes, mapped through the spec's label maps or by name
    (IN-9's published protocol); ``imagenet`` = the same, insisting on a 1000-class ImageNet
    model (RIVAL10 zero-shot through its 20 source classes); ``probe`` = a linear head on the
    model's frozen penultimate features, fitted on the benchmark's train split (RIVAL10's
    protocol; :mod:`hf_bgbench.probe.features`). A model trained on the benchmark's own classes is
    always scored directly.
    """
    request = request or ModelRequest()
    if request.label_map not in LABEL_MAPS:
        raise ValueError(
            f"--label-map {request.label_map!r}: choose one of {', '.join(LABEL_MAPS)}."
        )
    choice = spec.default_label_map if request.label_map == "auto" else request.label_map
    device = None if request.device is None else str(request.device)
    classifier = _loaded(model, spec, request, choice, device)
    _check_label_map(classifier, model, spec, request.label_map, choice)
    own_classes = classifier.label_space.kind == spec.label_space.kind
    # a VLM names the benchmark's classes itself: no head is fitted on it
    if choice == "probe" and not own_classes and not is_generative(classifier):
        probe_options.setdefault("progress", request.progress)
        classifier = probed_classifier(classifier, spec, reader, device=device, **probe_options)
    restrict = request.restrict_to_benchmark
    if restrict:
        _check_restrictable(classifier)
    mapper = LabelMapper.for_model(classifier.label_space, spec, restrict=restrict)
    guess = (
        None if getattr(classifier, "probe_record", None) else label_order_assumption(classifier)
    )
    if guess:
        log.warning("assumed: %s", guess)
    return classifier, mapper


def is_generative(classifier: Any) -> bool:
    """Whether ``classifier`` is a generative VLM (it names the classes in text, by a rule)."""
    return getattr(classifier, "kind", None) == "generative"


def vlm_record(classifier: Any) -> dict[str, Any] | None:
    """A generative VLM's record (its rule, prompt, backend, deviations); None for any other
    model: the one place a run asks a classifier what kind of head it has."""
    return getattr(classifier, "vlm", None)


def _loaded(
    model: Any, spec: BenchmarkSpec, request: ModelRequest, choice: str, device: str | None
) -> Any:
    """The model loaded as the request asks (a zero-shot head over its classes and prompts;
    none for a probe, which reads only the image embedding)."""
    classnames = zero_shot_classnames(request.zero_shot_classes, spec)
    if choice == "probe" and classnames == "imagenet":
        # a probe reads only the image embedding: a zero-shot model's text head is not built
        classnames = None
    return load_model(
        model,
        request.checkpoint,
        device,
        classnames=classnames,
        templates=request.templates,
        progress=request.progress,
        vlm=request.vlm,
    )


def _check_label_map(
    classifier: Any, model: Any, spec: BenchmarkSpec, label_map: str, choice: str
) -> None:
    """Refuse a label map the model cannot be scored through: a backbone without classes
    (but through a probe), a probe on a generative VLM, ImageNet's map on another model."""
    if classifier.label_space.num_classes == 0 and choice != "probe":
        raise ValueError(
            f"{getattr(classifier, 'model_id', model)!r} is an image backbone without a "
            "classification head (e.g. a DINOv2 tower, timm num_classes=0), so it has no "
            "classes to score. Use --label-map probe (a linear head on its features, fitted on "
            "the benchmark's train split, which the data must hold)."
        )
    vlm_model = is_generative(classifier)
    if vlm_model and label_map == "probe":  # asked for by name: never silently not done
        raise ValueError(
            "--label-map probe fits a linear head on an image model's frozen features; a "
            "generative VLM names the classes itself (its --vlm-protocol rule), so no head is "
            "fitted on it. Leave --label-map out."
        )
    if choice == "imagenet" and classifier.label_space.kind != "imagenet-1k":
        fix = (
            "score ImageNet's 1000 classes with --vlm-classes imagenet (likelihood rule)"
            if vlm_model
            else "use --label-map probe"
        )
        raise ValueError(
            f"--label-map imagenet maps an ImageNet-1k model's classes onto {spec.name}, but "
            f"this model has {classifier.label_space.num_classes} classes "
            f"({classifier.label_space.kind}); {fix}."
        )


def _check_restrictable(classifier: Any) -> None:
    """Refuse --restrict-to-benchmark-classes for a VLM whose rule may give no answer."""
    names = tuple(getattr(classifier.label_space, "names", ()) or ())
    if names and names[-1] == NO_ANSWER:
        # the no-answer column maps to no benchmark class: masked, its images became guesses
        raise ValueError(
            "--restrict-to-benchmark-classes: this VLM's rule may give no answer (an open "
            "answer naming no class or two, rotated options that disagree, a two-way answer "
            "naming both classes or neither), which is no benchmark class, so restricting the "
            "argmax would turn every such image into a guess of the first class. Leave the "
            "option out: images without an answer are counted ('unanswered' in results.json)."
        )


def model_step_for(
    model: Any,
    spec: BenchmarkSpec,
    reader: Reader,
    request: ModelRequest | None = None,
    **probe_options: Any,
) -> tuple[Any, LabelMapper, ModelStep]:
    """The classifier, its label mapping (:func:`classifier_and_mapper`; ``probe_options``
    go to the probe) and the :class:`ModelStep` that runs it on ``request.device`` in
    ``request.precision`` (checked first: a wrong one is refused before the model loads)."""
    request = request or ModelRequest()
    precision = request.precision
    checked_precision(precision, resolve_device(request.device).type)
    classifier, mapper = classifier_and_mapper(model, spec, reader, request, **probe_options)
    refusal = getattr(classifier, "autocast_refusal", None)
    if precision != "fp32" and refusal:  # the model's record says why autocast is not its
        raise ValueError(f"--precision {precision}: {refusal} Leave --precision out.")
    step = ModelStep(classifier, mapper, request.device, precision=precision)
    return classifier, mapper, step


def label_order_assumption(classifier: Any) -> str | None:
    """The sentence saying that the class order of ``classifier`` was guessed (None: it was
    not): a model with unnamed outputs as many as a benchmark's classes."""
    space = getattr(classifier, "label_space", None)
    if not getattr(space, "order_assumed", False):
        return None
    return ORDER_ASSUMED.format(first="LABEL_0", n=space.num_classes, order=", ".join(space.names))
