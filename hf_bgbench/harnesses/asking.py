"""bgbench's VLM rules asked from another harness (lmms-eval, VLMEvalKit): the question text of
each image's row and the verdict on an answer's text, by the very rule objects
``bgbench evaluate`` uses (:mod:`hf_bgbench.models.vlm.rules`), so the prompt and the reading
of the answer are the same wherever the model runs.

The harness holds the model and applies its chat template; here a rule meets
:class:`TextOnly`, a backend that renders nothing and generates nothing, only so the rule can
write its requests and read answers written elsewhere."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

import torch

from hf_bgbench.benchmarks import get_benchmark
from hf_bgbench.models.vlm.backend import GENERATE, Backend, Generated
from hf_bgbench.models.vlm.rules import Rule, make_rule
from hf_bgbench.models.vlm.settings import LETTERS, PAIR, VlmSettings, class_string
from hf_bgbench.spec import BenchmarkSpec

HARNESS_RULES = ("open", "choice-text", PAIR)
"""The rules another harness can ask: the ones answered by generation (a harness's model
wrappers generate; most refuse log-likelihood requests)."""
NO_IMAGE = torch.zeros(1, 3, 1, 1)  # a rule writes its text from the row, never the pixels


class TextOnly(Backend):
    """The backend of a model another harness runs: it serves generation, and gives the
    question text as written (the harness applies the model's chat template)."""

    name = "harness"
    serves = frozenset({GENERATE})


@dataclass(frozen=True)
class Verdict:
    """How a rule reads one answer: ``pred`` (the class index; None: no class),
    ``correct``, ``counted`` (False where the rule leaves the image out of the accuracy:
    ``pair``'s answers naming both classes or neither) and the rule's per-image records."""

    pred: int | None
    correct: bool
    counted: bool
    records: dict[str, Any]


@dataclass(frozen=True)
class AskedRule:
    """One benchmark's rule as a harness asks it: ``protocol`` (the benchmark's default
    protocol it runs under), ``rule`` (the built rule) and the settings it was built from."""

    benchmark: str
    protocol: str
    settings: VlmSettings
    rule: Rule

    @property
    def name(self) -> str:
        return self.rule.name

    @property
    def max_new_tokens(self) -> int:
        question = self.settings.question
        return question.max_new_tokens if question else self.settings.max_new_tokens

    @property
    def row_columns(self) -> tuple[str, ...]:
        return tuple(self.rule.row_columns)

    def row(self, doc: Mapping[str, Any]) -> dict[str, Any]:
        """The rule's row of a data row: ``id``, ``label`` and the columns it asks about."""
        missing = [c for c in ("label", *self.row_columns) if c not in doc]
        if missing:
            raise ValueError(
                f"a {self.benchmark} row lacks the column(s) {missing} the {self.name} rule "
                "reads: point the task at the benchmark's Hub dataset or a folder in its layout."
            )
        row = {"id": doc.get("id"), "label": int(doc["label"])}
        return row | {c: doc[c] for c in self.row_columns}

    def questions(self, doc: Mapping[str, Any]) -> list[str]:
        """The texts asked with the image of ``doc`` (one; ``choice-text`` with rotations:
        one per rotation)."""
        return [r.text for r in self.rule.requests(NO_IMAGE, [self.row(doc)])]

    def verdict(self, answers: list[str | None], doc: Mapping[str, Any]) -> Verdict:
        """The rule's verdict on the answer texts to :meth:`questions` (None: no answer)."""
        row = self.row(doc)
        got = [Generated(a, None if a is not None else "no answer") for a in answers]
        scores, records = self.rule.scores(got, [row])
        k = int(scores[0].argmax())
        pred = k if k < len(self.rule.choices) else None
        records = {key: value[0] for key, value in records.items()}
        counted = not (self.name == PAIR and pred is None)
        return Verdict(pred, pred == row["label"], counted, records)

    def record(self) -> dict[str, Any]:
        """How the rule asks and reads, as bgbench records it with a run's results."""
        return {"protocol": self.protocol, "rule": self.name, **self.rule.record()}


def harness_rules(spec: BenchmarkSpec) -> tuple[str, ...]:
    """The rules a harness runs on ``spec`` under its default protocol: the protocol's own
    two-way question where it sets one; else ``open``, and ``choice-text`` where the classes
    fit the option letters."""
    if _protocol_question(spec) is not None:
        return (PAIR,)
    if spec.num_classes <= len(LETTERS):
        return ("open", "choice-text")
    return ("open",)


@cache
def asked_rule(benchmark: str, rule: str) -> AskedRule:
    """``rule`` on ``benchmark`` under its default protocol, built as
    ``bgbench evaluate <vlm> --benchmark <benchmark> --vlm-protocol <rule>`` builds it."""
    from hf_bgbench.tasks.options import RunOptions
    from hf_bgbench.tasks.run_model import vlm_settings

    spec = get_benchmark(benchmark)
    offered = harness_rules(spec)
    if rule not in offered:
        raise ValueError(
            f"{spec.name}: a harness runs the rule(s) {', '.join(offered)} on it, not {rule!r}."
        )
    protocol = _typed_protocol(spec)
    options = RunOptions() if rule == PAIR else RunOptions(vlm_protocol=rule)
    settings = vlm_settings(options, spec, protocol)
    names = settings.classes.names
    choices = list(names) if rule == PAIR else [class_string(n) for n in names]
    built = make_rule(settings, choices, TextOnly())
    return AskedRule(spec.name, protocol.name, settings, built)


def _typed_protocol(spec: BenchmarkSpec) -> Any:
    """The default protocol of the benchmark's default task (its first: the one that scores
    each variant's predictions), its settings typed as the task reads them."""
    from hf_bgbench.tasks import get_task
    from hf_bgbench.tasks.protocol_settings import typed_protocol

    task = spec.tasks[0]
    return typed_protocol(spec, get_task(task), spec.protocol_for(task))


def _protocol_question(spec: BenchmarkSpec) -> Any:
    return getattr(_typed_protocol(spec).settings, "vlm_question", None)
