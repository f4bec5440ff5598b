"""A task's options: one typed dataclass per task, each option declared once, with
:func:`option`.

A field's name, type and default are the Python API's (``run_noise(model, trials=5)``); its
metadata (:class:`Option`) holds what a front end needs besides: the help text, the
command-line flags, how the flag's text is read, the choices, and the cap the Space puts on
it on shared hardware. The command line (:func:`hf_bgbench.cli._common.add_task_options`)
and the Space (:func:`hf_bgbench.space.settings.task_options`) are generated from them; the
dataclass checks the values it is given (a bad choice, a batch of 0) before any work.

:class:`Option` and :func:`option` are :mod:`hf_bgbench.builders.arguments`'s (the
benchmarks' build, convert and download commands declare their options the same way).

Every task's options extend :class:`RunOptions` (benchmark, model loading, label mapping,
batching, device, progress); the task's own fields come first on the command line.
"""

from __future__ import annotations

import inspect
import numbers
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, ClassVar

from hf_bgbench.benchmarks import BenchmarkSpec, all_specs, list_benchmarks
from hf_bgbench.builders.arguments import Help as Help
from hf_bgbench.builders.arguments import (
    Option,
    flag,
    folder_path,
    non_negative_int,
    option,
    positive_int,
)
from hf_bgbench.builders.arguments import paragraph as paragraph
from hf_bgbench.files import check_folder, max_image_pixels, nearest_existing, output_in_data
from hf_bgbench.models.devices import CPU_BATCH_SIZE, PRECISIONS
from hf_bgbench.models.heads import CLASS_SETS
from hf_bgbench.models.vlm.settings import (
    SERVER_KINDS,
    VLM_CLASS_SETS,
    VLM_PROTOCOLS,
    VLM_SCORES,
    VlmSettings,
)

LABEL_MAPS = ("auto", "model", "imagenet", "probe")
VLM_OPTIONS = (
    "vlm_protocol",
    "vlm_score",
    "vlm_classes",
    "vlm_prompt",
    "circular",
    "vlm_max_new_tokens",
)
"""The options that say how a generative VLM is scored (refused for any other model)."""
VLM_GROUP = (
    "generative VLMs",
    "how a generative vision-language model's answers become class scores (any backend)",
)
SERVED_GROUP = (
    "served VLMs and vLLM's engine",
    "openai:<served name> behind an OpenAI-compatible endpoint, or vllm:<model> on this "
    "machine's GPUs",
)
SERVED_OPTIONS = (
    "api_base",
    "api_key_env",
    "api_server",
    "max_concurrency",
    "api_retries",
    "api_timeout",
    "api_cache",
    "tensor_parallel_size",
)
"""The options that say how a served model (``openai:<name>``) or vLLM's engine
(``vllm:<model>``) is reached (refused for any other model)."""
# What each default label map means, for --label-map's help (per benchmark protocol).
LABEL_MAP_TEXT = {
    "model": "the model's ImageNet classes mapped",
    "probe": "a linear probe on frozen features",
}
REQUIRED = inspect.Parameter.empty  # a leading parameter of an entry point without default
WORKERS_TEXT = (
    "(0: none, work in the main process; default: on a GPU one per CPU core, at most 4; on "
    "a CPU only the cores the model's threads leave free, so none by default)"
)


def output_option(folder: str) -> Any:
    """The ``output_dir`` field (``--output``; the command line writes to ``folder``)."""
    return option(
        None, "output folder", flags=("--output",), parse=folder_path, cli_default=Path(folder)
    )


def described(cls: type) -> list[tuple[str, Option, Any]]:
    """(name, option, default) of every field of an options class, in command-line order:
    the task's own fields, then :class:`RunOptions`'s."""
    shared = {f.name for f in fields(RunOptions)}
    ordered = [f for f in fields(cls) if f.name not in shared]
    ordered += [f for f in fields(cls) if f.name in shared]
    return [(f.name, f.metadata["option"], f.default) for f in ordered]


def changed_options(options: Any, names: Sequence[str]) -> dict[str, str]:
    """The options among ``names`` that ``options`` sets to another value than their
    default, each with its command-line flag (how a message names it), in ``names``' order."""
    declared = {name: (opt, default) for name, opt, default in described(type(options))}
    return {
        name: flag(name, declared[name][0])
        for name in names
        if getattr(options, name) != declared[name][1]
    }


def entry_signature(cls: type, **leading: Any) -> inspect.Signature:
    """The signature of a task's Python entry point (``run_noise(model, data=None, *,
    trials=10, ...)``): the ``leading`` parameters (name=default, ``inspect.Parameter.empty``
    for a required one), then every option of ``cls`` as a keyword -- so ``help()`` and
    editors show the options although the function takes ``**options``."""
    kind, keyword = inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY
    params = [inspect.Parameter(name, kind, default=d) for name, d in leading.items()]
    params += [
        inspect.Parameter(f.name, keyword, default=f.default, annotation=f.type)
        for f in fields(cls)
        if f.name not in leading
    ]
    return inspect.Signature(params, return_annotation="dict[str, Any]")


def check_device(device: Any, error: type[ValueError] = ValueError) -> None:
    """A ``--device`` torch knows (``cuda``, ``cuda:1``, ``mps``, ``cpu``, ``auto``), checked
    before any work; the error names the option and the choices."""
    if device is None or not isinstance(device, str) or device == "auto":
        return
    import torch

    try:
        kind = torch.device(device)
    except (RuntimeError, ValueError):
        raise error(
            f"--device {device!r}: not a device torch knows; give cuda (or cuda:N), mps or cpu, "
            "or leave it out for the best available."
        ) from None
    if kind.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0 or (kind.index or 0) >= count:
            have = f"{count} CUDA GPU(s)" if count else "no CUDA GPU torch can use"
            build = torch.version.cuda and f"torch built for CUDA {torch.version.cuda}"
            raise error(
                f"--device {device}: this machine has {have} ({build or 'a CPU-only torch'}). "
                "Leave --device out to run on the best available device, or run where a GPU is."
            )
    if kind.type == "mps":
        mps = getattr(torch.backends, "mps", None)
        if mps is None or not mps.is_available():
            raise error(
                f"--device {device}: Apple's MPS is not available here. Leave --device out to "
                "run on the best available device."
            )


def check_cache_folder(
    folder: Path, what: str, avoid: str, error: type[ValueError] = ValueError
) -> None:
    """Refuse, before any work, a ``what`` cache at ``folder`` that cannot be written (a
    file on its way, or a folder without write permission): the run would otherwise fail
    after scoring, with a bare "[Errno 20]". The message names the cache, its path, the
    variable that placed it and the fixes (``avoid``: the flag that does without it)."""
    from hf_bgbench.cache import cache_root

    folder = Path(folder).expanduser()
    step = nearest_existing(folder)
    if step is None:
        return
    if not step.is_dir():
        why = f"{step} is a file"
    elif not os.access(step, os.W_OK | os.X_OK):
        why = f"{step} cannot be written"
    else:
        return
    raise error(
        f"The {what} at {folder} cannot be used: {why}. Set HF_BGBENCH_CACHE to a writable "
        f"folder (the cache root is now {cache_root()}), or {avoid}."
    )


def default_spec() -> BenchmarkSpec:
    """The benchmark a task runs on when none is named: the first one registered."""
    return all_specs()[0]


def default_benchmark() -> str:
    return default_spec().name


def _benchmark_help(task: Any) -> str:
    return (
        f"benchmark: {', '.join(list_benchmarks())} (`bgbench list` shows each one's "
        "variants, tasks and metrics)"
    )


def _batch_help(task: Any) -> str:
    return (
        f"images per forward pass (default: {CPU_BATCH_SIZE} on a CPU, {task.gpu_batch_size} "
        f"on a GPU){task.batch_note}"
    )


def _label_map_help(task: Any) -> str:
    first: dict[str, str] = {}  # each default protocol, by the first benchmark that has it
    for spec in all_specs():
        if spec.default_label_map in LABEL_MAP_TEXT:
            first.setdefault(spec.default_label_map, spec.short_name)
    protocols = "; ".join(f"{name}: {LABEL_MAP_TEXT[m]}" for m, name in first.items())
    return (
        f"how the model's outputs become benchmark labels: auto = the benchmark's protocol "
        f"({protocols}); model / imagenet = the model's own classes mapped (imagenet: "
        "zero-shot from ImageNet-1k); probe = a linear head fitted on the train split"
    )


def _protocol_help(task: Any) -> str:
    offered = []
    for spec in all_specs():
        if task.name in spec.tasks:
            names = [p.name for p in spec.protocols.get(task.name, ())]
            if len(names) > 1:
                offered.append(f"{spec.short_name}: {', '.join(names)}")
    listed = f" ({'; '.join(offered)})" if offered else ""
    return (
        "named recipe to run (default: the benchmark's published protocol, the first "
        f"listed){listed}; the name and every deviation from the paper are recorded"
    )


@dataclass
class RunOptions:
    """What every task takes besides its own options (see the module docstring)."""

    # The exception a bad value raises (a task may name its own ValueError subclass).
    Error: ClassVar[type[ValueError]] = ValueError

    benchmark: str | None = option(
        None, _benchmark_help, metavar="NAME", cli_default=default_benchmark
    )
    checkpoint: str | None = option(
        None,
        "weights file (.safetensors, or a .pth/.pt read with weights_only) for a timm "
        "architecture given as MODEL",
    )
    batch_size: int | None = option(None, _batch_help, parse=positive_int)
    num_workers: int | None = option(
        None,
        f"image-decoding worker processes {WORKERS_TEXT}",
        flags=("--workers",),
        parse=non_negative_int,
    )
    device: str | None = option(None, "cuda / mps / cpu (default: the best available)")
    precision: str = option(
        "fp32",
        "the forward's numerics on a CUDA GPU -- fp32 = IEEE fp32, TF32 off (as a CPU and the "
        "authors' code score); bf16 / fp16 = autocast: faster, some predictions change "
        "(recorded as a deviation). A CPU runs fp32 only; a VLM runs in its weights' dtype "
        "(bf16 on a GPU)",
        choices=PRECISIONS,
    )
    progress: bool = option(
        True, "no progress bars", flags=("--quiet", "--no-progress"), negated=True
    )
    restrict_to_benchmark: bool = option(
        False,
        "argmax only over the model classes that map to the benchmark (NOT the published "
        "protocol, which takes the argmax over all classes and counts unmapped ones as wrong)",
        flags=("--restrict-to-benchmark-classes",),
    )
    label_map: str = option("auto", _label_map_help, choices=LABEL_MAPS)
    zero_shot_classes: str = option(
        "imagenet",
        "zero-shot models (CLIP, SigLIP, open_clip): the classes their text head covers -- "
        "imagenet = ImageNet's 1000 (open_clip's class names; every benchmark's published "
        "mapping then applies unchanged), benchmark = the benchmark's own class names (a "
        "named protocol, recorded)",
        choices=CLASS_SETS,
    )
    templates: str = option(
        "openai",
        "zero-shot models: the prompt templates -- openai (OpenAI's 80 ImageNet prompts, "
        "open_clip's OPENAI_IMAGENET_TEMPLATES), simple (open_clip's short set) or a file with "
        "one template a line, {} where the class name goes",
        metavar="SET|FILE",
    )
    protocol: str | None = option(None, _protocol_help, metavar="NAME")
    vlm_protocol: str = option(
        "likelihood",
        "generative VLMs (LLaVA, Qwen2-VL, PaliGemma, SmolVLM, ...): how an answer becomes "
        "class scores -- likelihood = the log-probability of each class string as the "
        "answer's start; choice = lettered multiple choice, read from the option letters' "
        "next-token logits; choice-text = the same questions, the letter read from a greedy "
        "answer's text (for a server without log-probabilities); open = a greedy answer "
        "matched to the class names and their WordNet synonyms (an answer naming no class or "
        "two counts as no answer)",
        choices=VLM_PROTOCOLS,
        group=VLM_GROUP,
    )
    vlm_score: str = option(
        "mean",
        "VLMs, likelihood: the class string's token log-probabilities averaged (mean) or "
        "summed (sum, which favours short class names)",
        choices=VLM_SCORES,
        group=VLM_GROUP,
    )
    vlm_classes: str = option(
        "benchmark",
        "VLMs: the classes scored -- benchmark = the benchmark's own class names; imagenet = "
        "ImageNet's 1000, then the benchmark's published mapping (likelihood only)",
        choices=VLM_CLASS_SETS,
        group=VLM_GROUP,
    )
    vlm_prompt: Path | None = option(
        None,
        "VLMs: a file with the text asked with each image (default: the rule's question; for "
        "choice, {choices} marks where the lettered options go)",
        metavar="FILE",
        group=VLM_GROUP,
    )
    circular: int = option(
        1,
        "VLMs, choice and choice-text: ask N times with the options rotated; an image counts "
        "right only if every rotation is (VLMEvalKit's circular rule)",
        parse=positive_int,
        metavar="N",
        group=VLM_GROUP,
    )
    vlm_max_new_tokens: int = option(
        16,
        "VLMs, open and choice-text: the most tokens generated per answer",
        parse=positive_int,
        group=VLM_GROUP,
    )
    api_base: str | None = option(
        None,
        "served VLMs (openai:<served name>): the OpenAI-compatible endpoint, e.g. "
        "http://localhost:8000/v1 (vLLM, SGLang, TGI, transformers serve, a hosted API); "
        "default: $OPENAI_BASE_URL. Recorded without credentials",
        metavar="URL",
        group=SERVED_GROUP,
    )
    api_key_env: str = option(
        "OPENAI_API_KEY",
        "served VLMs: the environment variable holding the API key (read from there only, "
        "written nowhere; a local server needs none)",
        metavar="VAR",
        group=SERVED_GROUP,
    )
    api_server: str = option(
        "generic",
        "served VLMs: what the server is, which says what it can answer -- every kind "
        "generates (open, pair, choice-text); vllm, sglang, tgi and openai also return the "
        "answer's top log-probabilities (choice); only vllm returns the prompt's (likelihood); "
        "transformers (transformers serve) and generic: generation only",
        choices=SERVER_KINDS,
        group=SERVED_GROUP,
    )
    max_concurrency: int = option(
        4,
        "served VLMs: the most requests in flight at once",
        parse=positive_int,
        metavar="N",
        group=SERVED_GROUP,
    )
    api_retries: int = option(
        5,
        "served VLMs: tries again after a 429, a 5xx, a timeout or a refused connection, "
        "waiting 1, 2, 4, ... s (or the server's Retry-After)",
        parse=non_negative_int,
        metavar="N",
        group=SERVED_GROUP,
    )
    api_timeout: int = option(
        120,
        "served VLMs: seconds a request may take",
        parse=positive_int,
        metavar="S",
        group=SERVED_GROUP,
    )
    tensor_parallel_size: int | None = option(
        None,
        "vLLM's engine (vllm:<model>): the GPUs one model is split across (default: every "
        "visible one)",
        parse=positive_int,
        metavar="N",
        group=SERVED_GROUP,
    )
    api_cache: Path | None = option(
        None,
        "served VLMs: where each answer is kept as it arrives, so a rerun asks only what was "
        "never answered (default: bgbench's cache folder, api_answers/)",
        metavar="DIR",
        group=SERVED_GROUP,
    )
    resize_to_model_input: bool = option(
        False,
        "resize the benchmark's images to the model's input size (a protocol deviation, "
        "recorded); by default they are fed at their own size, as published, and resized only "
        "when the model cannot take that size",
    )

    def __post_init__(self) -> None:
        if self.batch_size is not None and self.batch_size < 1:
            raise self.Error(f"--batch-size must be >= 1, got {self.batch_size}.")
        # every task's options have one; numpy's "expected non-negative integer" named none
        seed = getattr(self, "seed", 0)
        if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
            raise self.Error(f"--seed must be a whole number, 0 or more, got {seed!r}.")
        # read at decode, which a warm cache or a --no-cache skip would hide: checked here
        max_image_pixels()
        # every task's options have both (RunOptions itself has neither)
        inside = output_in_data(getattr(self, "output_dir", None), getattr(self, "data", None))
        if inside:
            raise self.Error(inside)
        check_device(self.device, self.Error)
        if self.api_cache is not None:  # else a bare "[Errno 20]" at the first answer kept
            check_folder(self.api_cache, "--api-cache", self.Error)
        try:  # the combination of rule, score and rotations, before any work
            VlmSettings(self.vlm_protocol, self.vlm_score, self.circular)
        except ValueError as e:
            raise self.Error(str(e)) from None
        for name, rules in (
            ("vlm_score", ("likelihood",)),
            ("vlm_max_new_tokens", ("open", "choice-text")),
        ):
            given = changed_options(self, (name,))  # another rule would silently ignore it
            if given and self.vlm_protocol not in rules:
                raise self.Error(
                    f"{given[name]} applies only to --vlm-protocol {' or '.join(rules)}; the "
                    f"{self.vlm_protocol} rule does not use it. Leave it out, or score with "
                    f"--vlm-protocol {rules[0]}."
                )
        for name, opt, _ in described(type(self)):
            value = getattr(self, name)
            if opt.many and isinstance(value, str):  # one name, or "a,b": never its letters
                value = [v for v in re.split(r"[,\s]+", value) if v]
                setattr(self, name, value)
            if name.endswith("_dir") and value is not None:
                check_folder(value, flag(name, opt), self.Error)
            if opt.choices is not None and value not in opt.choices:
                raise self.Error(
                    f"{flag(name, opt)} {value!r}: choose one of "
                    f"{', '.join(map(str, opt.choices))}."
                )
