"""``choice``: lettered multiple choice, the option letters' next-token log-probabilities
renormalised over the letters; with ``--circular N`` the options are asked N times rotated
and an image gets a class only if every rotation picks it. ``choice-text``: the same
questions, the letter read from a greedy answer's text (for a server that returns no
log-probabilities; a different rule, recorded as such)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import torch

from hf_bgbench.models.vlm.backend import GENERATE, NEXT_TOKEN, Backend, Generate, NextToken
from hf_bgbench.models.vlm.prompts import options_text
from hf_bgbench.models.vlm.rules.base import Row, Rule, reasons, with_no_answer
from hf_bgbench.models.vlm.settings import LETTERS, VlmSettings


class ChoiceRule(Rule):
    name = "choice"
    kind = NEXT_TOKEN
    summary = "lettered multiple choice, read from the next-token logits of the option letters"

    def __init__(self, settings: VlmSettings, choices: tuple[str, ...], backend: Backend):
        super().__init__(settings, choices, backend)
        if len(choices) > len(LETTERS):
            from hf_bgbench.models.errors import ModelLoadError

            raise ModelLoadError(
                f"Multiple choice lists at most {len(LETTERS)} lettered options; there are "
                f"{len(choices)} classes. Use --vlm-classes benchmark, or --vlm-protocol "
                "likelihood."
            )
        self.letters = tuple(LETTERS[: len(choices)])
        self.orders = rotations(len(choices), settings.circular)
        self.texts = [settings.user_text(options_text(choices, o)) for o in self.orders]
        self.prompts = [backend.rendered(t) for t in self.texts]
        self.tokens = self.check_letters(backend)
        # a served model reports only its top tokens: every letter may be missing from them
        self.letters_may_be_missing = self.tokens is None

    def check_letters(self, backend: Backend) -> list | None:
        return backend.check_strings(self.letters, one_token=True)

    @property
    def may_abstain(self) -> bool:
        return self.settings.circular > 1 or self.letters_may_be_missing

    def requests(self, images: torch.Tensor, rows: Sequence[Row]) -> list[NextToken]:
        return [NextToken(image, t, self.letters) for image in images for t in self.texts]

    def scores(
        self, answers: list[list[float]], rows: Sequence[Row]
    ) -> tuple[torch.Tensor, dict[str, list]]:
        r, n = len(self.orders), len(answers) // len(self.orders)
        got = torch.tensor(answers, dtype=torch.float32).view(n, r, len(self.choices))
        answered = torch.isfinite(got).any(-1).all(-1)  # some letter in every rotation
        per_rotation, picks = [], []
        for k, order in enumerate(self.orders):
            letters = got[:, k].log_softmax(-1)  # over the letters only
            scores = torch.empty_like(letters)
            scores[:, order] = letters  # letter i is class order[i]
            per_rotation.append(torch.where(scores.isnan(), float("-inf"), scores))
            picks.append(scores.argmax(1))
        chosen = torch.stack(picks, 1)  # (images, rotations): each rotation's class
        extras = {"rotation_choices": chosen.tolist()}
        mean = torch.stack(per_rotation).mean(0)
        if not self.may_abstain:
            return mean, extras
        if self.letters_may_be_missing:
            extras |= self.reason_records(
                [
                    None
                    if a
                    else "no option letter among the top log-probabilities (or an error body)"
                    for a in answered.tolist()
                ]
            )
        agreed = chosen.eq(chosen[:, :1]).all(1) & answered
        return with_no_answer(mean, agreed), extras

    def record(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "prompt": self.prompts[0],
            "letters": list(self.letters),
            "rotations": self.settings.circular,
            "rotation_orders": self.orders,
            "prompts": self.prompts,
        }
        if self.tokens is not None:
            out["letter_tokens"] = self.tokens
        return out


class LetterTextRule(ChoiceRule):
    name = "choice-text"
    kind = GENERATE
    summary = (
        "lettered multiple choice, the letter read from the start of a greedy answer's text "
        "(not from log-probabilities)"
    )

    def check_letters(self, backend: Backend) -> list | None:
        return None

    @property
    def may_abstain(self) -> bool:
        return True

    def requests(self, images: torch.Tensor, rows: Sequence[Row]) -> list[Generate]:
        n = self.settings.max_new_tokens
        return [Generate(image, t, n) for image in images for t in self.texts]

    def scores(self, answers: list, rows: Sequence[Row]) -> tuple[torch.Tensor, dict[str, list]]:
        r = len(self.orders)
        texts = [a.text for a in answers]
        picked = [None if t is None else read_letter(t, self.letters) for t in texts]
        per_image = [picked[i : i + r] for i in range(0, len(picked), r)]
        classes = [
            [None if p is None else order[p] for p, order in zip(row, self.orders, strict=True)]
            for row in per_image
        ]
        found = [row[0] if None not in row and len(set(row)) == 1 else None for row in classes]
        scores = torch.full((len(found), len(self.choices)), float("-inf"))
        for i, k in enumerate(found):
            if k is not None:
                scores[i, k] = 0.0
        answered = torch.tensor([k is not None for k in found], dtype=torch.bool)
        extras = {
            "rotation_choices": [[-1 if c is None else c for c in row] for row in classes],
            "answer": [
                [None if t is None else t.strip() for t in texts[i : i + r]]
                for i in range(0, len(texts), r)
            ],
        }
        why = reasons(answers)  # an image's first rotation without an answer says why
        extras |= self.reason_records(
            [next((w for w in why[i : i + r] if w), None) for i in range(0, len(why), r)]
        )
        return with_no_answer(scores, answered), extras

    def record(self) -> dict[str, Any]:
        out = super().record()
        out["letter_reading"] = LETTER_READING
        out["max_new_tokens"] = self.settings.max_new_tokens
        return out


def rotations(count: int, circular: int) -> list[list[int]]:
    """Per rotation, the classes in letter order (rotation r starts at class r*C/R)."""
    if circular > count:  # more would ask the same rotations again, and record them as new
        raise ValueError(
            f"--circular {circular}: {count} options have only {count} distinct rotations "
            f"(one per option first), so more would ask the same questions again. Give "
            f"--circular {count} or fewer."
        )
    return [[(k + (i * count) // circular) % count for k in range(count)] for i in range(circular)]


LETTER_READING = (
    "the answer's start when it is one option letter alone or followed by . ) or : (A, A., (A), "
    "A:), or the letter "
    "after 'answer is' / 'Answer:'; anything else is no answer"
)
_LEADING = re.compile(r"^\(?([A-Z])(?:[.):]|$)")
_STATED = re.compile(r"answer(?: is)?:?\s*\(?([A-Z])\b", re.IGNORECASE)


def read_letter(text: str, letters: Sequence[str]) -> int | None:
    """The option ``text`` names by its letter (:data:`LETTER_READING`), None if none."""
    text = text.strip()
    match = _LEADING.match(text) or _STATED.search(text)
    if match is None or match.group(1) not in letters:
        return None
    return letters.index(match.group(1))
