"""Generative vision-language models scored as classifiers by a named, recorded rule."""

from hf_bgbench.models.vlm.load import VlmClassifier, is_vlm_config, load_vlm
from hf_bgbench.models.vlm.settings import (
    NO_ANSWER,
    VLM_CLASS_SETS,
    VLM_PROTOCOLS,
    VLM_SCORES,
    VlmSettings,
    read_prompt,
)

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
