"""vLLM's offline engine (``vllm.LLM``) in this process, for a user with several GPUs and no
server: ``vllm:<Hub id or folder>``, split across ``--tensor-parallel-size`` GPUs (default:
every visible one). It answers all three request kinds: ``generate`` (temperature 0, the
run's seed), ``next_token_logprobs`` from the first token's 20 top log-probabilities, and
``continuation_logprobs`` from the prompt's log-probabilities with the class string written
as the assistant's answer (``continue_final_message``). The images and questions go as the
same OpenAI-style chat messages a server gets (:mod:`hf_bgbench.models.vlm.wire`), so vLLM
applies the model's own chat template. A CUDA GPU only: refused on a CPU, saying what to
use instead. Weights come as vLLM loads them (safetensors from the Hub), never with remote
code."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from hf_bgbench.models.errors import ModelLoadError
from hf_bgbench.models.registry import ModelLoader, ModelRef, register_loader
from hf_bgbench.models.vlm.backend import (
    CONTINUATION,
    GENERATE,
    NEXT_TOKEN,
    Backend,
    Continuation,
    Generate,
    Generated,
    NextToken,
    Scored,
)
from hf_bgbench.models.vlm.load import outside_classifier
from hf_bgbench.models.vlm.settings import ServedSettings
from hf_bgbench.models.vlm.wire import (
    TOP_LOGPROBS,
    candidate_logprob,
    chat_messages,
    generated,
    one_string_each,
    per_request,
    pngs,
    trailing_logprob,
)


class VllmEngineBackend(Backend):
    """``model`` loaded by ``vllm.LLM`` on this machine's GPUs."""

    name = "vllm"
    serves = frozenset({NEXT_TOKEN, CONTINUATION, GENERATE})
    answers_may_fail = True

    def __init__(self, model: str, settings: ServedSettings, llm: Any = None):
        self.model_name, self.settings = model, settings
        self.llm = llm if llm is not None else _engine(model, settings)
        self.tensor_parallel_size = _parallel(settings) if llm is None else None

    def record(self) -> dict[str, Any]:
        import importlib.metadata as md

        return {
            "name": self.name,
            "vllm": md.version("vllm"),
            "tensor_parallel_size": self.tensor_parallel_size,
            "image_encoding": "PNG data URL at the benchmark's pixels (lossless)",
        }

    def generation(self, max_new_tokens: int) -> dict[str, Any]:
        return {"temperature": 0, "max_tokens": max_new_tokens, "seed": self.settings.seed}

    def generate(self, requests: Sequence[Generate]) -> list[Generated]:
        params = [self._params(max_tokens=r.max_new_tokens) for r in requests]
        outputs = self._chat(_conversations(requests), params)
        return [
            generated(o.outputs[0].text, r.text) for o, r in zip(outputs, requests, strict=True)
        ]

    def next_token_logprobs(self, requests: Sequence[NextToken]) -> list[list[float]]:
        params = self._params(max_tokens=1, logprobs=TOP_LOGPROBS)
        outputs = self._chat(_conversations(requests), params)
        return [
            [candidate_logprob(first_token_top(o), c) for c in r.candidates]
            for o, r in zip(outputs, requests, strict=True)
        ]

    def continuation_logprobs(self, requests: Sequence[Continuation]) -> list[list[Scored]]:
        asked = one_string_each(requests)
        outputs = self._chat(
            _conversations(asked, answers=True),
            self._params(max_tokens=1, prompt_logprobs=0),
            add_generation_prompt=False,
            continue_final_message=True,
        )
        scored = [
            trailing_logprob(prompt_logprobs(o), r.strings[0])
            for o, r in zip(outputs, asked, strict=True)
        ]
        return per_request(scored, requests)

    def _params(self, **settings: Any) -> Any:
        from vllm import SamplingParams

        return SamplingParams(temperature=0.0, seed=self.settings.seed, **settings)

    def _chat(self, conversations: list, params: Any, **options: Any) -> list:
        return self.llm.chat(conversations, params, use_tqdm=False, **options)


def _conversations(requests: Sequence[Any], answers: bool = False) -> list[list[dict]]:
    """The chat of each request (with ``answers``, its one string as the assistant's turn)."""
    return [
        chat_messages(png, r.text, r.strings[0] if answers else None)
        for png, r in zip(pngs(requests), requests, strict=True)
    ]


def _engine(model: str, settings: ServedSettings) -> Any:
    if not torch.cuda.is_available():
        raise ModelLoadError(
            f"vllm:{model} runs vLLM's engine on CUDA GPUs, and this machine has none. On a "
            f"CPU, score the model in process (bgbench evaluate {model}), or serve it with "
            "vLLM on a GPU host and score openai:<served name> --api-base URL --api-server vllm."
        )
    try:
        from vllm import LLM
    except ImportError:
        raise ModelLoadError(
            "vllm:<model> needs vLLM, which is not installed: pip install vllm (on the GPU "
            "machine), or serve the model elsewhere and score openai:<served name>."
        ) from None
    return LLM(
        model=model,
        tensor_parallel_size=_parallel(settings),
        trust_remote_code=False,
        seed=settings.seed,
        max_logprobs=TOP_LOGPROBS,
        limit_mm_per_prompt={"image": 1},
    )


def _parallel(settings: ServedSettings) -> int:
    return settings.tensor_parallel_size or max(1, torch.cuda.device_count())


def first_token_top(output: Any) -> list[dict[str, Any]]:
    """The answer's first token's top log-probabilities (vLLM: token id -> Logprob) as the
    ``{"token", "logprob"}`` entries a server returns."""
    first = output.outputs[0].logprobs[0]
    return [{"token": lp.decoded_token, "logprob": lp.logprob} for lp in first.values()]


def prompt_logprobs(output: Any) -> list[dict | None]:
    """vLLM's per-position ``prompt_logprobs`` (token id -> Logprob) as plain dicts, the
    shape its server returns."""
    return [
        None
        if position is None
        else {
            str(token): {"logprob": lp.logprob, "rank": lp.rank, "decoded_token": lp.decoded_token}
            for token, lp in position.items()
        }
        for position in output.prompt_logprobs
    ]


# --------------------------------------------------------------------------- its loader


def load_vllm_vlm(ref: ModelRef) -> Any:
    """``vllm:<Hub id or folder>`` in vLLM's engine on this machine's GPUs."""
    backend = VllmEngineBackend(ref.target, ref.vlm.served or ServedSettings())
    clf = outside_classifier(ref.model_id, backend, ref.vlm, f"vllm:{ref.target}")
    clf.normalisation = "vLLM's processor for the model"
    return clf


register_loader(
    ModelLoader(
        "vllm",
        "vllm",
        "generative VLMs in vLLM's offline engine on this machine's GPUs (tensor parallel): "
        "vllm:<Hub id or folder>",
        load_vllm_vlm,
        kind="generative",
        by_name_only=True,
        priority=56,
    )
)
