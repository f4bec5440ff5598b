"""``pair``: each image's own two-way question, set by a benchmark's protocol (never an
option): its true class first, then its hard negative, both read from the image's row; the
greedy answer judged by :func:`~hf_bgbench.models.vlm.answers.pair_verdict`. An answer
naming both classes or neither, or no answer, is left out of the accuracy and counted."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from hf_bgbench.models.vlm.answers import pair_verdict
from hf_bgbench.models.vlm.backend import GENERATE, Backend, Generate, Generated
from hf_bgbench.models.vlm.rules.base import Row, Rule, one_hot_scores, reasons
from hf_bgbench.models.vlm.settings import VlmSettings


class PairRule(Rule):
    name = "pair"
    kind = GENERATE
    summary = (
        "a two-way question per image (its true class, then its hard negative), the greedy "
        "answer matched to both by substring; an answer naming both or neither is left out"
    )

    def __init__(self, settings: VlmSettings, choices: tuple[str, ...], backend: Backend):
        super().__init__(settings, choices, backend)
        self.question = settings.question
        self.row_columns = (self.question.column,)
        self.prompt = backend.rendered(settings.user_text(pair=("{first}", "{second}")))

    @property
    def may_abstain(self) -> bool:
        return True

    def requests(self, images: torch.Tensor, rows: Sequence[Row]) -> list[Generate]:
        column = self.question.column
        if any(column not in row for row in rows):
            raise ValueError(
                "The two-way question rule asks each image about its own hard negative (the "
                f"data's {column!r} column), which only the evaluate task reads from the "
                "data; score this model with evaluate, or under another --protocol."
            )
        texts = [
            self.settings.user_text(
                pair=(self.choices[int(row["label"])], self.choices[row[column]])
            )
            for row in rows
        ]
        n = self.question.max_new_tokens
        return [Generate(image, text, n) for image, text in zip(images, texts, strict=True)]

    def scores(
        self, answers: list[Generated], rows: Sequence[Row]
    ) -> tuple[torch.Tensor, dict[str, list]]:
        q, column = self.question, self.question.column
        verdicts, found = [], []
        for answer, row in zip(answers, rows, strict=True):
            truth, negative = int(row["label"]), int(row[column])
            verdict = None
            if answer.text is not None:
                names = (self.choices[truth], self.choices[negative])
                verdict = pair_verdict(answer.text, *names, q.answer_words, q.outer_first)
            verdicts.append(verdict)
            found.append({"true": truth, "false": negative}.get(verdict))
        extras: dict[str, list] = {
            "answer": [None if a.text is None else a.text.strip() for a in answers],
            "verdict": verdicts,
        }
        extras |= self.reason_records(reasons(answers))
        return one_hot_scores(found, len(self.choices)), extras

    def record(self) -> dict[str, Any]:
        q = self.question
        return {
            "prompt": self.prompt,
            "question": q.prompt,
            "negative_column": q.column,
            "answer_words": {k: list(v) for k, v in q.answer_words.items()},
            "outer_first": [list(x) for x in q.outer_first],
            "matching": "substring of the lower-cased answer (the authors' compute_accuracy.py)",
            "unanswered": "left out of the accuracy (answers naming both classes or neither)",
            "question_source": q.source,
            "deviations": list(q.deviations),
        }
