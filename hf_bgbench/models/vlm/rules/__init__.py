"""The scoring rules: each one module that writes a backend's requests from the images and
their rows and turns the answers into class scores (:class:`~.base.Rule`). ``RULES``: the
rule name -> its class; a new rule is a module and a line here."""

from __future__ import annotations

from collections.abc import Sequence

from hf_bgbench.models.vlm.backend import Backend
from hf_bgbench.models.vlm.rules.base import Rule, refuse_unserved
from hf_bgbench.models.vlm.rules.choice import ChoiceRule, LetterTextRule
from hf_bgbench.models.vlm.rules.likelihood import LikelihoodRule
from hf_bgbench.models.vlm.rules.open import OpenRule
from hf_bgbench.models.vlm.rules.pair import PairRule
from hf_bgbench.models.vlm.settings import VlmSettings

RULES: dict[str, type[Rule]] = {
    rule.name: rule for rule in (LikelihoodRule, ChoiceRule, LetterTextRule, OpenRule, PairRule)
}


def make_rule(settings: VlmSettings, choices: Sequence[str], backend: Backend) -> Rule:
    """The rule ``settings`` names over the class strings ``choices``, refused by name when
    ``backend`` cannot answer its requests (before any request is sent)."""
    rule = RULES[settings.protocol]
    refuse_unserved(rule, backend, RULES.values())
    return rule(settings, tuple(choices), backend)


__all__ = ["RULES", "Rule", "make_rule"]
