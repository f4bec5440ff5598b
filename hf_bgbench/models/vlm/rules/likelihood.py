"""``likelihood``: each class string's log-probability as the answer's start, averaged over
its tokens (``mean``) or summed (``sum``); the highest scoring class wins."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from hf_bgbench.models.vlm.backend import CONTINUATION, Backend, Continuation, Scored
from hf_bgbench.models.vlm.rules.base import Row, Rule
from hf_bgbench.models.vlm.settings import VlmSettings


class LikelihoodRule(Rule):
    name = "likelihood"
    kind = CONTINUATION
    summary = "the log-probability of each class string as the answer's start"

    def __init__(self, settings: VlmSettings, choices: tuple[str, ...], backend: Backend):
        super().__init__(settings, choices, backend)
        self.text = settings.user_text()
        self.prompt = backend.rendered(self.text)
        self.tokens = backend.check_strings(choices, one_token=False)

    def requests(self, images: torch.Tensor, rows: Sequence[Row]) -> list[Continuation]:
        return [Continuation(image, self.text, self.choices) for image in images]

    def scores(
        self, answers: list[list[Scored]], rows: Sequence[Row]
    ) -> tuple[torch.Tensor, dict[str, list]]:
        total = torch.tensor([[s.logprob for s in row] for row in answers], dtype=torch.float32)
        if self.settings.score == "sum":
            return total, {}
        lengths = [[s.tokens for s in row] for row in answers]
        return total / torch.tensor(lengths, dtype=total.dtype), {}

    def record(self) -> dict[str, Any]:
        out: dict[str, Any] = {"prompt": self.prompt, "score": self.settings.score}
        if self.tokens is not None:
            out["choice_tokens"] = self.tokens
        return out
