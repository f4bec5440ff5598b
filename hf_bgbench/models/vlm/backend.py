"""What a VLM backend answers: three kinds of request about one image and one question, and
nothing of classes, rules or benchmarks (a rule in :mod:`hf_bgbench.models.vlm.rules` writes
the requests and reads the answers).

Every request holds ``image`` -- (3, H, W) pixels in [0, 1], as the benchmark's data gives
them -- and ``text``, the user turn's text; the backend puts the two to its model in the form
the model was trained on (its chat template). The kinds:

- :class:`NextToken` (``next_token_logprobs``): ``candidates``, strings each one token long
  (option letters); the answer is, per candidate, the log-probability that the answer's first
  token is it (``-inf`` where the backend saw it nowhere among the tokens it reports).
- :class:`Continuation` (``continuation_logprobs``): ``strings``; the answer is, per string,
  a :class:`Scored`: the summed log-probability of its tokens as the answer's start and how
  many tokens it has.
- :class:`Generate` (``generate``): ``max_new_tokens``; the answer is a :class:`Generated`:
  the greedy answer's text, or None with the reason no answer came (an empty or cut-off
  reply, an error body), which the rule counts as unanswered, never as a class.

A backend declares the kinds it ``serves``; asking for another raises
:class:`UnservedRequest` before anything is sent."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

NEXT_TOKEN = "next_token_logprobs"
CONTINUATION = "continuation_logprobs"
GENERATE = "generate"


@dataclass(frozen=True)
class Request:
    image: torch.Tensor = field(repr=False)
    text: str


@dataclass(frozen=True)
class NextToken(Request):
    candidates: tuple[str, ...] = ()


@dataclass(frozen=True)
class Continuation(Request):
    strings: tuple[str, ...] = ()


@dataclass(frozen=True)
class Generate(Request):
    max_new_tokens: int = 16


@dataclass(frozen=True)
class Scored:
    """A string's summed token log-probability and its token count."""

    logprob: float
    tokens: int


@dataclass(frozen=True)
class Generated:
    """A generated answer (``text``), or None and the ``reason`` none came."""

    text: str | None
    reason: str | None = None


class UnservedRequest(ValueError):
    """A rule asked a backend for a kind of request it does not serve."""


class Backend:
    """The base of every backend: ``name`` (recorded), ``serves`` (the request kinds it
    answers), and one method per kind, each taking a list of requests and giving one answer
    per request, in order."""

    name: str = "backend"
    serves: frozenset[str] = frozenset()
    # whether an answer may be missing for a reason of the backend's own (a served model's
    # error body, an empty reply): rules then keep each image's reason, in every batch
    answers_may_fail: bool = False

    def next_token_logprobs(self, requests: Sequence[NextToken]) -> list[list[float]]:
        raise UnservedRequest(self.unserved(NEXT_TOKEN))

    def continuation_logprobs(self, requests: Sequence[Continuation]) -> list[list[Scored]]:
        raise UnservedRequest(self.unserved(CONTINUATION))

    def generate(self, requests: Sequence[Generate]) -> list[Generated]:
        raise UnservedRequest(self.unserved(GENERATE))

    def unserved(self, kind: str) -> str:
        return f"the {self.name} backend does not answer {kind} requests."

    def check_strings(self, strings: Sequence[str], *, one_token: bool) -> list | None:
        """The token ids of ``strings`` as an answer, refusing any the backend cannot score
        (one that tokenises to nothing; with ``one_token``, one longer than a token); None
        where the backend does not know its model's tokenizer (a served model)."""
        return None

    def rendered(self, text: str) -> str:
        """``text`` as the model is given it (the chat template applied, where the backend
        applies it; a served model's server applies its own, so ``text`` itself)."""
        return text

    def record(self) -> dict[str, Any]:
        """What the backend is, recorded with the results (never a credential)."""
        return {"name": self.name}

    def generation(self, max_new_tokens: int) -> dict[str, Any]:
        """How a ``generate`` request is answered (greedy), recorded."""
        return {"max_new_tokens": max_new_tokens}

    def usage(self) -> dict[str, int]:
        """What the backend spent so far (a served model's tokens and requests)."""
        return {}

    def close(self) -> None:
        """Release what the backend holds (threads, connections)."""


def chunks_by_text(requests: Sequence[Request], size: int) -> list[list[int]]:
    """The request indices grouped by equal text (the image's question), each group cut into
    runs of at most ``size``, in first-seen order: a backend that runs several images in one
    forward gives them one prompt."""
    groups: dict[tuple, list[int]] = {}
    for i, r in enumerate(requests):
        key = (r.text, getattr(r, "candidates", None), getattr(r, "strings", None))
        groups.setdefault(key + (getattr(r, "max_new_tokens", None),), []).append(i)
    return [g[s : s + size] for g in groups.values() for s in range(0, len(g), size)]
