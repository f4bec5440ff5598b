"""The scoring rules: each one module of this package that writes a backend's requests from
the images and their rows and turns the answers into class scores (a :class:`~.base.Rule`
with a ``name``). ``RULES``: rule name -> its class, gathered from every module here, so a
new rule is one module (and its name in ``settings.VLM_PROTOCOLS``, the command line's
choices, which load no torch)."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Sequence

from hf_bgbench.models.vlm.backend import Backend
from hf_bgbench.models.vlm.rules.base import Rule, refuse_unserved
from hf_bgbench.models.vlm.settings import VlmSettings


def _gather() -> dict[str, type[Rule]]:
    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")
    found: dict[str, type[Rule]] = {}
    todo = list(Rule.__subclasses__())
    while todo:
        rule = todo.pop(0)
        todo += rule.__subclasses__()
        if rule.name:
            found[rule.name] = rule
    return found


RULES: dict[str, type[Rule]] = _gather()


def make_rule(settings: VlmSettings, choices: Sequence[str], backend: Backend) -> Rule:
    """The rule ``settings`` names over the class strings ``choices``, refused by name when
    ``backend`` cannot answer its requests (before any request is sent)."""
    rule = RULES[settings.protocol]
    refuse_unserved(rule, backend, RULES.values())
    return rule(settings, tuple(choices), backend)


__all__ = ["RULES", "Rule", "make_rule"]
