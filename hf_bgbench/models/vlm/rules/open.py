"""``open``: a greedy answer matched to the class names and their synonyms as whole words;
an answer naming no class or two, or no answer at all, is counted as unanswered."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from hf_bgbench.models.vlm.answers import match_answer
from hf_bgbench.models.vlm.backend import GENERATE, Backend, Generate, Generated
from hf_bgbench.models.vlm.rules.base import Row, Rule, one_hot_scores, reasons
from hf_bgbench.models.vlm.settings import VlmSettings

MATCHING = (
    "whole words, regular plurals too, the longest phrase first: a compound names what it "
    "names, a blocking compound names nothing; an answer naming two classes or none is no answer"
)


class OpenRule(Rule):
    name = "open"
    kind = GENERATE
    summary = "a greedy answer matched to the words that name each class (WordNet)"

    def __init__(self, settings: VlmSettings, choices: tuple[str, ...], backend: Backend):
        super().__init__(settings, choices, backend)
        self.text = settings.user_text()
        self.prompt = backend.rendered(self.text)

    @property
    def may_abstain(self) -> bool:
        return True

    def requests(self, images: torch.Tensor, rows: Sequence[Row]) -> list[Generate]:
        n = self.settings.max_new_tokens
        return [Generate(image, self.text, n) for image in images]

    def scores(
        self, answers: list[Generated], rows: Sequence[Row]
    ) -> tuple[torch.Tensor, dict[str, list]]:
        texts = [a.text for a in answers]
        table, blockers = self.settings.synonyms, self.settings.blockers
        found = [None if t is None else match_answer(t, table, blockers) for t in texts]
        extras: dict[str, list] = {"answer": [None if t is None else t.strip() for t in texts]}
        extras |= self.reason_records(reasons(answers))
        return one_hot_scores(found, len(self.choices)), extras

    def record(self) -> dict[str, Any]:
        return {
            "prompt": self.prompt,
            "synonyms": [list(x) for x in self.settings.synonyms],
            "synonyms_source": self.settings.synonyms_source,
            "blockers": list(self.settings.blockers),
            "matching": MATCHING,
        }
