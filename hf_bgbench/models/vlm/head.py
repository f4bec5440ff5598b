"""A generative VLM as a classifier: [0, 1] pixels -> (N, C) class scores by one named rule.

``likelihood``: the prompt is run once per image and its key/value cache reused for every
class string, the continuations batched; a class's score is the mean (or sum) of its tokens'
log-probabilities. ``choice``: the next-token log-probabilities of the option letters,
renormalised over the letters; with rotations an image gets a class only if every rotation
picks it. ``open``: a greedy answer matched to the classes' phrases; 0 for the class named,
-inf elsewhere. ``pair``: each image's own two-way question (its true class and hard
negative, told by :meth:`VlmHead.see_rows`), the greedy answer judged by
:func:`~hf_bgbench.models.vlm.answers.pair_verdict`. Rules that may give no class have a last
:data:`NO_ANSWER` column."""

from __future__ import annotations

import copy
import inspect
from collections.abc import Sequence
from typing import Any

import torch

from hf_bgbench.models.vlm.answers import match_answer, pair_verdict
from hf_bgbench.models.vlm.prompts import options_text, render, template_of
from hf_bgbench.models.vlm.settings import PAIR, VlmSettings

IMAGES_PER_PASS = 8
"""Images whose prompts run in one forward, whatever the task's batch size (a VLM's prompt
holds hundreds of image tokens: the key/value cache, not the pixels, bounds memory)."""
SEQUENCES_PER_PASS = 32
"""Class-string continuations (images x classes) run in one forward over copies of the
prompts' cache: LLaVA-7B's ~600-token prompt holds ~300 MB of cache in bfloat16 per copy."""


class VlmHead(torch.nn.Module):
    """``model`` (``AutoModelForImageTextToText``) and ``processor`` scoring ``choices``
    (the class strings, in class order) under ``settings``."""

    def __init__(
        self,
        model: torch.nn.Module,
        processor: Any,
        settings: VlmSettings,
        choices: Sequence[str],
        *,
        answer_ids: list[list[int]] | None = None,
        letter_ids: list[int] | None = None,
    ):
        super().__init__()
        self.model = model
        self.processor = processor
        self.settings = settings
        self.choices = tuple(choices)
        self.answer_ids = answer_ids
        self.letter_ids = letter_ids
        self.prompts = self._prompts()
        self.text_kwargs = text_kwargs(processor, self.prompts[0])
        names = inspect.signature(model.forward).parameters
        self.cache_arg = "cache" if "cache" in names else "past_key_values"
        self.extras: dict[str, list[Any]] = {}
        self.negatives: dict[str, int] | None = None  # pair: image id -> its hard negative
        self.batch_pairs: list[tuple[int, int]] = []  # pair: the next batch's (true, negative)

    def _prompts(self) -> list[str]:
        """The prompts, one per rotation (one for likelihood and open; for pair, the question
        with its class slots unfilled)."""
        s = self.settings
        if s.protocol == PAIR:
            return [render(self.processor, s.user_text(pair=("{first}", "{second}")))]
        if s.protocol != "choice":
            return [render(self.processor, s.user_text())]
        return [
            render(self.processor, s.user_text(options_text(self.choices, o)))
            for o in self.rotations()
        ]

    def rotations(self) -> list[list[int]]:
        """Per rotation, the classes in letter order (rotation r starts at class r*C/R)."""
        c, r = len(self.choices), self.settings.circular
        return [[(k + (i * c) // r) % c for k in range(c)] for i in range(r)]

    @property
    def dtype(self) -> torch.dtype:
        return next(self.model.parameters()).dtype

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

    def forward(self, pixels: torch.Tensor) -> torch.Tensor:
        rule = {"likelihood": self._likelihood, "choice": self._choice, "open": self._open}
        with torch.autocast(pixels.device.type, enabled=False), torch.inference_mode():
            if self.settings.protocol == PAIR:
                scores = self._pairs(pixels)
            else:
                score = rule[self.settings.protocol]
                chunks = range(0, len(pixels), IMAGES_PER_PASS)
                scores = torch.cat([score(pixels[i : i + IMAGES_PER_PASS]) for i in chunks])
        self.extras.setdefault("class_scores", []).extend(
            [round(float(v), 6) for v in row] for row in scores
        )
        return scores

    def take_extras(self) -> dict[str, list[Any]]:
        """The per-image records of the images scored since the last call."""
        extras, self.extras = self.extras, {}
        return extras

    # ------------------------------------------------------------------ likelihood

    def _prefill(self, pixels: torch.Tensor, prompt: str, *, cache: bool):
        inputs = self.inputs(pixels, prompt)
        if _padded(inputs, len(pixels)):
            raise _Unequal
        out = self.model(**inputs, use_cache=cache)
        state = getattr(out, "cache", None) or getattr(out, "past_key_values", None)
        return out.logits[:, -1].float().log_softmax(-1), state

    def _likelihood(self, pixels: torch.Tensor) -> torch.Tensor:
        try:
            first, state = self._prefill(pixels, self.prompts[0], cache=True)
        except _Unequal:
            return torch.cat([self._likelihood(pixels[i : i + 1]) for i in range(len(pixels))])
        totals, lengths = [], []
        per_pass = max(1, SEQUENCES_PER_PASS // len(pixels))
        for start in range(0, len(self.answer_ids), per_pass):
            chunk = self.answer_ids[start : start + per_pass]
            totals.append(self._chunk_logprob(first, state, chunk))
            lengths += [len(t) for t in chunk]
        total = torch.cat(totals, dim=1)
        if self.settings.score == "sum":
            return total
        return total / torch.tensor(lengths, dtype=total.dtype, device=total.device)

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
        out = self.model(input_ids=ids.repeat(n, 1), use_cache=True, **{self.cache_arg: cache})
        logp = out.logits.float().log_softmax(-1)
        picked = logp.gather(-1, targets.repeat(n, 1).unsqueeze(-1)).squeeze(-1)
        rest = (picked * valid.repeat(n, 1)).sum(dim=1).view(n, k)
        return total + rest

    # ------------------------------------------------------------------ choice

    def _choice(self, pixels: torch.Tensor) -> torch.Tensor:
        n, c = len(pixels), len(self.choices)
        per_rotation, picks = [], []
        for prompt, order in zip(self.prompts, self.rotations(), strict=True):
            try:
                logits, _ = self._prefill(pixels, prompt, cache=False)
            except _Unequal:
                logits = torch.cat(
                    [self._prefill(pixels[i : i + 1], prompt, cache=False)[0] for i in range(n)]
                )
            letters = logits[:, self.letter_ids[:c]].log_softmax(-1)  # over the letters only
            scores = torch.empty_like(letters)
            scores[:, order] = letters  # letter i is class order[i]
            per_rotation.append(scores)
            picks.append(scores.argmax(1))
        chosen = torch.stack(picks, 1)  # (images, rotations): each rotation's class
        self.extras.setdefault("rotation_choices", []).extend(chosen.tolist())
        mean = torch.stack(per_rotation).mean(0)
        if self.settings.circular == 1:
            return mean
        agreed = chosen.eq(chosen[:, :1]).all(1)
        return _with_no_answer(mean, agreed)

    # ------------------------------------------------------------------ open

    def _open(self, pixels: torch.Tensor) -> torch.Tensor:
        try:
            texts = self._generate(pixels, self.prompts[0])
        except _Unequal:
            return torch.cat([self._open(pixels[i : i + 1]) for i in range(len(pixels))])
        found = [match_answer(t, self.settings.synonyms) for t in texts]
        self.extras.setdefault("answer", []).extend(t.strip() for t in texts)
        scores = torch.full((len(texts), len(self.choices)), float("-inf"))
        for i, k in enumerate(found):
            if k is not None:
                scores[i, k] = 0.0
        answered = torch.tensor([k is not None for k in found])
        return _with_no_answer(scores.to(pixels.device), answered.to(pixels.device))

    # ------------------------------------------------------------------ pair

    def set_negatives(self, negatives: dict[str, int]) -> None:
        """Image id -> its hard negative class, for the images about to be scored."""
        self.negatives = negatives

    def see_rows(self, ids: Sequence[str] | None, labels: Sequence[int]) -> None:
        """The next batch's images (ids and true classes): their two-way questions."""
        if self.settings.protocol != PAIR:
            return
        if self.negatives is None or ids is None:
            raise ValueError(
                "The two-way question rule asks each image about its own hard negative, which "
                "only the evaluate task reads from the data; score this model with evaluate, "
                "or under another --protocol."
            )
        unknown = [i for i in ids if i not in self.negatives]
        if unknown:
            raise ValueError(f"Image {unknown[0]!r} has no hard negative in the data.")
        self.batch_pairs = [(int(y), self.negatives[i]) for i, y in zip(ids, labels, strict=True)]

    def _pairs(self, pixels: torch.Tensor) -> torch.Tensor:
        """Each image's question, one image a pass (the questions differ in length); rows
        past the batch's own (a GPU's padding) give no answer."""
        pairs, self.batch_pairs = self.batch_pairs, []
        question, c = self.settings.question, len(self.choices)
        out = torch.full((len(pixels), c + 1), float("-inf"), device=pixels.device)
        out[len(pairs) :, c] = 0.0
        for i, (truth, negative) in enumerate(pairs):
            text = self.settings.user_text(pair=(self.choices[truth], self.choices[negative]))
            answer = self._generate(pixels[i : i + 1], render(self.processor, text))[0]
            verdict = pair_verdict(
                answer,
                self.choices[truth],
                self.choices[negative],
                question.answer_words,
                question.outer_first,
            )
            self.extras.setdefault("answer", []).append(answer.strip())
            self.extras.setdefault("verdict", []).append(verdict)
            out[i, {"true": truth, "false": negative}.get(verdict, c)] = 0.0
        self.extras.setdefault("verdict", []).extend([None] * (len(pixels) - len(pairs)))
        self.extras.setdefault("answer", []).extend([None] * (len(pixels) - len(pairs)))
        return out

    def _generate(self, pixels: torch.Tensor, prompt: str) -> list[str]:
        """The greedy answers to ``prompt`` about each image, decoded without special tokens."""
        inputs = self.inputs(pixels, prompt)
        if _padded(inputs, len(pixels)):
            raise _Unequal
        out = self.model.generate(**inputs, **generation_settings(self.settings))
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


def _padded(inputs: dict[str, torch.Tensor], images: int) -> bool:
    """Whether a batch of several images has prompts of unequal length (padded): the last
    position is then not every prompt's end, so they are scored one by one."""
    mask = inputs.get("attention_mask")
    return images > 1 and mask is not None and not bool(mask.all())


class _Unequal(Exception):
    """A batch whose prompts tokenised to different lengths (scored image by image)."""


def generation_settings(settings: VlmSettings) -> dict[str, Any]:
    """Greedy decoding, recorded: no sampling, one beam, ``max_new_tokens`` (the question's,
    for a two-way question)."""
    question = settings.question
    return {
        "do_sample": False,
        "num_beams": 1,
        "max_new_tokens": question.max_new_tokens if question else settings.max_new_tokens,
        "temperature": None,
        "top_p": None,
        "top_k": None,
    }


def _with_no_answer(scores: torch.Tensor, answered: torch.Tensor) -> torch.Tensor:
    """``scores`` with a last column that wins (0, the rest -inf) where ``answered`` is False."""
    scores = scores.masked_fill(~answered.unsqueeze(1), float("-inf"))
    last = torch.where(answered, float("-inf"), 0.0).to(scores.dtype).unsqueeze(1)
    return torch.cat([scores, last], dim=1)
