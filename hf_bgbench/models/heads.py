"""What a zero-shot or generative model's head is asked to cover, as plain data: the choices
the command line offers and the class names with their source. No model code: the command
line's help reads these without loading torch (:mod:`hf_bgbench.models.zero_shot` builds the
heads)."""

from __future__ import annotations

from dataclasses import dataclass

TEMPLATE_SETS = ("openai", "simple")
CLASS_SETS = ("imagenet", "benchmark")  # --zero-shot-classes: the published head, or a named one
PROMPTS_STEP = "embedding the class prompts"  # the text step's progress bar (also the Space's)


@dataclass(frozen=True)
class ClassNames:
    """Class names with where they come from (recorded), e.g. a benchmark's own classes."""

    names: tuple[str, ...]
    source: str
