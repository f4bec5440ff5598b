"""The in-process backend: an ``AutoModelForImageTextToText`` and its ``AutoProcessor``.

Images whose requests share a question run in one forward (at most :data:`IMAGES_PER_PASS`);
a continuation request runs its prompt once and reuses the prompt's key/value cache for every
string, the continuations batched (at most :data:`SEQUENCES_PER_PASS` a forward). Prompts
that tokenise to different lengths in one batch (padded) are run one image at a time, so the
last position is every prompt's end."""

from __future__ import annotations

import copy
import inspect
from collections.abc import Sequence
from typing import Any

import torch

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
    chunks_by_text,
)
from hf_bgbench.models.vlm.prompts import answer_tokens, render, template_of, template_sha256

IMAGES_PER_PASS = 8
"""Images whose prompts run in one forward, whatever the task's batch size (a VLM's prompt
holds hundreds of image tokens: the key/value cache, not the pixels, bounds memory)."""
SEQUENCES_PER_PASS = 32
"""Class-string continuations (images x strings) run in one forward over copies of the
prompts' cache: LLaVA-7B's ~600-token prompt holds ~300 MB of cache in bfloat16 per copy."""


class TransformersBackend(Backend):
    """``model`` (eval mode) and ``processor`` answering all three request kinds."""

    name = "transformers"
    serves = frozenset({NEXT_TOKEN, CONTINUATION, GENERATE})

    def __init__(self, model: torch.nn.Module, processor: Any):
        self.model = model
        self.processor = processor
        self.text_kwargs = text_kwargs(processor, self.rendered("x"))
        names = inspect.signature(model.forward).parameters
        self.cache_arg = "cache" if "cache" in names else "past_key_values"
        self._tokens: dict[str, list[int]] = {}

    @property
    def dtype(self) -> torch.dtype:
        return next(self.model.parameters()).dtype

    def rendered(self, text: str) -> str:
        return render(self.processor, text)

    def record(self) -> dict[str, Any]:
        import transformers

        return {
            "name": self.name,
            "add_special_tokens": self.text_kwargs.get("add_special_tokens", True),
            "chat_template_sha256": template_sha256(self.processor),
            "transformers": transformers.__version__,
            "dtype": str(self.dtype).removeprefix("torch."),
        }

    def generation(self, max_new_tokens: int) -> dict[str, Any]:
        settings = generation_settings(max_new_tokens).items()
        return {k: v for k, v in settings if v is not None}

    def check_strings(self, strings: Sequence[str], *, one_token: bool) -> list:
        tokenizer = self.processor.tokenizer
        ids = answer_tokens(tokenizer, strings)
        self._tokens.update(zip(strings, ids, strict=True))
        if one_token:
            from hf_bgbench.models.vlm.prompts import letter_tokens

            return letter_tokens(tokenizer, len(strings))
        return ids

    def inputs(self, pixels: torch.Tensor, prompt: str) -> dict[str, torch.Tensor]:
        """The processor's inputs for a batch of [0, 1] images, on the model's device."""
        # one list of images per prompt (Gemma 3's processor insists on it; all accept it)
        images = [[image] for image in pixels.detach().float().cpu()]
        batch = self.processor(
            images=images,
            text=[prompt] * len(images),
            return_tensors="pt",
            do_rescale=False,
            **self.text_kwargs,
        )
        device = next(self.model.parameters()).device
        out = {}
        for key, value in batch.items():
            if isinstance(value, torch.Tensor) and key != "labels":  # labels: a training loss
                value = value.to(device)
                out[key] = value.to(self.dtype) if value.is_floating_point() else value
        return out

    def _each_chunk(self, requests: Sequence[Any], answer) -> list:
        """``answer(pixels, first_request)`` over the chunks of requests sharing a question,
        put back in request order; a padded chunk is answered one image at a time."""
        out: list = [None] * len(requests)
        for chunk in chunks_by_text(requests, IMAGES_PER_PASS):
            pixels = torch.stack([requests[i].image for i in chunk])
            try:
                answers = answer(pixels, requests[chunk[0]])
            except _Unequal:
                answers = [a for p in pixels for a in answer(p[None], requests[chunk[0]])]
            for i, a in zip(chunk, answers, strict=True):
                out[i] = a
        return out

    @torch.inference_mode()
    def next_token_logprobs(self, requests: Sequence[NextToken]) -> list[list[float]]:
        def answer(pixels: torch.Tensor, r: NextToken) -> list[list[float]]:
            ids = [self._token_ids(c)[0] for c in r.candidates]
            first, _ = self._prefill(pixels, self.rendered(r.text), cache=False)
            return first[:, ids].tolist()

        return self._each_chunk(requests, answer)

    @torch.inference_mode()
    def continuation_logprobs(self, requests: Sequence[Continuation]) -> list[list[Scored]]:
        def answer(pixels: torch.Tensor, r: Continuation) -> list[list[Scored]]:
            ids = [self._token_ids(s) for s in r.strings]
            first, state = self._prefill(pixels, self.rendered(r.text), cache=True)
            totals = []
            per_pass = max(1, SEQUENCES_PER_PASS // len(pixels))
            for start in range(0, len(ids), per_pass):
                totals.append(self._chunk_logprob(first, state, ids[start : start + per_pass]))
            total = torch.cat(totals, dim=1).tolist()
            return [[Scored(v, len(t)) for v, t in zip(row, ids, strict=True)] for row in total]

        return self._each_chunk(requests, answer)

    @torch.inference_mode()
    def generate(self, requests: Sequence[Generate]) -> list[Generated]:
        def answer(pixels: torch.Tensor, r: Generate) -> list[Generated]:
            texts = self._generate(pixels, self.rendered(r.text), r.max_new_tokens)
            return [Generated(t) for t in texts]

        return self._each_chunk(requests, answer)

    def _token_ids(self, string: str) -> list[int]:
        if string not in self._tokens:
            self._tokens[string] = answer_tokens(self.processor.tokenizer, [string])[0]
        return self._tokens[string]

    def _prefill(self, pixels: torch.Tensor, prompt: str, *, cache: bool):
        inputs = self.inputs(pixels, prompt)
        if _padded(inputs, len(pixels)):
            raise _Unequal
        with torch.autocast(pixels.device.type, enabled=False):
            out = self.model(**inputs, use_cache=cache)
        state = getattr(out, "cache", None) or getattr(out, "past_key_values", None)
        return out.logits[:, -1].float().log_softmax(-1), state

    def _chunk_logprob(self, first: torch.Tensor, state: Any, chunk: list[list[int]]):
        """(N, k) summed log-probabilities of the ``k`` token strings ``chunk`` after each
        image's prompt: the first token from the prompt's last logits, the rest from one
        forward of the right-padded continuations over copies of the prompt's cache."""
        n, k = first.shape[0], len(chunk)
        total = first[:, [t[0] for t in chunk]]
        width = max(len(t) for t in chunk) - 1
        if width == 0:
            return total
        device = first.device
        ids = torch.tensor([t[:-1] + [t[0]] * (width - len(t) + 1) for t in chunk], device=device)
        targets = torch.tensor(
            [t[1:] + [t[0]] * (width - len(t) + 1) for t in chunk], device=device
        )
        valid = torch.tensor([[j < len(t) - 1 for j in range(width)] for t in chunk], device=device)
        cache = copy.deepcopy(state)
        cache.batch_repeat_interleave(k)  # image-major: rows i*k .. i*k+k-1 are image i's
        with torch.autocast(device.type, enabled=False):
            out = self.model(input_ids=ids.repeat(n, 1), use_cache=True, **{self.cache_arg: cache})
        logp = out.logits.float().log_softmax(-1)
        picked = logp.gather(-1, targets.repeat(n, 1).unsqueeze(-1)).squeeze(-1)
        rest = (picked * valid.repeat(n, 1)).sum(dim=1).view(n, k)
        return total + rest

    def _generate(self, pixels: torch.Tensor, prompt: str, max_new_tokens: int) -> list[str]:
        """The greedy answers to ``prompt`` about each image, decoded without special tokens."""
        inputs = self.inputs(pixels, prompt)
        if _padded(inputs, len(pixels)):
            raise _Unequal
        with torch.autocast(pixels.device.type, enabled=False):
            out = self.model.generate(**inputs, **generation_settings(max_new_tokens))
        new = out[:, inputs["input_ids"].shape[1] :]
        return self.processor.batch_decode(new, skip_special_tokens=True)


def text_kwargs(processor: Any, prompt: str) -> dict[str, Any]:
    """How the rendered prompt is tokenised: without the tokenizer's own special tokens when
    the chat template already wrote its <bos> (Gemma 3, SmolVLM: else it would be doubled),
    with them otherwise (LLaVA's template leaves <bos> to the tokenizer). Recorded."""
    bos = getattr(getattr(processor, "tokenizer", None), "bos_token", None)
    if template_of(processor) is not None and bos and prompt.startswith(bos):
        return {"add_special_tokens": False}
    return {}


def generation_settings(max_new_tokens: int) -> dict[str, Any]:
    """Greedy decoding, recorded: no sampling, one beam, ``max_new_tokens``."""
    return {
        "do_sample": False,
        "num_beams": 1,
        "max_new_tokens": max_new_tokens,
        "temperature": None,
        "top_p": None,
        "top_k": None,
    }


def _padded(inputs: dict[str, torch.Tensor], images: int) -> bool:
    """Whether a batch of several images has prompts of unequal length (padded): the last
    position is then not every prompt's end, so they are scored one by one."""
    mask = inputs.get("attention_mask")
    return images > 1 and mask is not None and not bool(mask.all())


class _Unequal(Exception):
    """A batch whose prompts tokenised to different lengths (scored image by image)."""
