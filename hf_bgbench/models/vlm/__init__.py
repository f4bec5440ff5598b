"""Generative vision-language models scored as classifiers by a named, recorded rule.

The rules' settings (:mod:`.settings`) are plain data, imported with the package; the
loader and the head (torch, transformers) at first use (PEP 562)."""

import importlib
from typing import Any

from hf_bgbench.models.vlm.settings import (
    NO_ANSWER,
    VLM_CLASS_SETS,
    VLM_PROTOCOLS,
    VLM_SCORES,
    VlmSettings,
    read_prompt,
)

_LOADED_LATER = {"VlmClassifier", "is_vlm_config", "load_vlm"}


def __getattr__(name: str) -> Any:
    if name not in _LOADED_LATER:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module("hf_bgbench.models.vlm.load"), name)
    globals()[name] = value
    return value


__all__ = [
    "NO_ANSWER",
    "VLM_CLASS_SETS",
    "VLM_PROTOCOLS",
    "VLM_SCORES",
    "VlmClassifier",
    "VlmSettings",
    "is_vlm_config",
    "load_vlm",
    "read_prompt",
]
