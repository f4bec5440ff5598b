"""What a rule is: the requests it writes for a batch of images and their rows, and how it
reads the answers back as class scores (a last no-answer column where it may give none)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import torch

from hf_bgbench.models.vlm.backend import Backend, Request
from hf_bgbench.models.vlm.settings import VlmSettings

Row = Mapping[str, Any]
"""One image's row: ``id``, ``label`` (its true class) and the data columns the rule asks
about (:attr:`Rule.row_columns`)."""


class Rule:
    """A scoring rule over ``choices`` (the class strings, in class order). Subclasses set
    ``name`` (the ``--vlm-protocol`` value), ``kind`` (the request kind it sends) and
    ``summary`` (recorded), and write :meth:`requests` and :meth:`scores`."""

    name: str = ""
    kind: str = ""
    summary: str = ""
    row_columns: tuple[str, ...] = ()

    def __init__(self, settings: VlmSettings, choices: tuple[str, ...], backend: Backend):
        self.settings = settings
        self.choices = choices
        self.keeps_reasons = backend.answers_may_fail

    def reason_records(self, why: Sequence[str | None]) -> dict[str, list]:
        """``no_answer_reason`` per image where the backend may fail to answer (in every
        batch, so the column is whole); nothing otherwise."""
        return {"no_answer_reason": list(why)} if self.keeps_reasons else {}

    @property
    def may_abstain(self) -> bool:
        """Whether an image may get no class (then the scores have a last no-answer column)."""
        return False

    @property
    def width(self) -> int:
        return len(self.choices) + int(self.may_abstain)

    def requests(self, images: torch.Tensor, rows: Sequence[Row]) -> list[Request]:
        raise NotImplementedError

    def scores(self, answers: list, rows: Sequence[Row]) -> tuple[torch.Tensor, dict[str, list]]:
        """(N, width) class scores of the images whose requests got ``answers``, and the
        per-image records (lists of N) kept with the predictions."""
        raise NotImplementedError

    def record(self) -> dict[str, Any]:
        """How the rule asked and read, recorded (the prompts as the model got them)."""
        return {}


def refuse_unserved(rule: type[Rule], backend: Backend, rules: Iterable[type[Rule]]) -> None:
    """Raise, naming the rules ``backend`` can serve, when it cannot answer ``rule``."""
    if rule.kind in backend.serves:
        return
    from hf_bgbench.models.errors import ModelLoadError

    can = sorted(r.name for r in rules if r.kind in backend.serves)
    raise ModelLoadError(
        f"--vlm-protocol {rule.name} needs {rule.kind} requests, which the {backend.name} "
        f"backend cannot answer{backend_detail(backend)}. It can serve: "
        f"{', '.join(can) or 'none'}."
    )


def backend_detail(backend: Backend) -> str:
    why = getattr(backend, "why_unserved", None)
    return f" ({why})" if why else ""


def with_no_answer(scores: torch.Tensor, answered: torch.Tensor) -> torch.Tensor:
    """``scores`` with a last column that wins (0, the rest -inf) where ``answered`` is False."""
    scores = scores.masked_fill(~answered.unsqueeze(1), float("-inf"))
    last = torch.where(answered, float("-inf"), 0.0).to(scores.dtype).unsqueeze(1)
    return torch.cat([scores, last], dim=1)


def one_hot_scores(found: Sequence[int | None], classes: int) -> torch.Tensor:
    """0 at each image's class, -inf elsewhere, and the no-answer column where it has none."""
    scores = torch.full((len(found), classes), float("-inf"))
    for i, k in enumerate(found):
        if k is not None:
            scores[i, k] = 0.0
    return with_no_answer(scores, torch.tensor([k is not None for k in found], dtype=torch.bool))


def reasons(answers: Sequence[Any]) -> list[str | None]:
    """Per answer, why no answer came (None where one did)."""
    return [getattr(a, "reason", None) for a in answers]
