"""The exact text a VLM is given: the chat template applied to the image and the question,
and the token ids of each class string and option letter."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from hf_bgbench.models.errors import ModelLoadError
from hf_bgbench.models.vlm.settings import LETTERS

SELF_FORMATTING = ("PaliGemmaProcessor",)
"""Processors of prefix-LM models without a chat template that place the image tokens, the
<bos> and the closing newline around the text themselves (PaliGemma 1 and 2)."""


def template_of(processor: Any) -> str | None:
    """The processor's chat template (None: a model whose processor formats the prompt)."""
    template = getattr(processor, "chat_template", None)
    if template is None:
        template = getattr(getattr(processor, "tokenizer", None), "chat_template", None)
    if isinstance(template, dict):
        template = template.get("default") or next(iter(template.values()), None)
    if template:
        return template
    if type(processor).__name__ in SELF_FORMATTING:
        return None
    raise ModelLoadError(
        f"The processor ({type(processor).__name__}) has no chat template, so the question "
        "cannot be put to the model in the form it was trained on. Save the model's processor "
        "with its chat template (chat_template.jinja) beside it: "
        "AutoProcessor.from_pretrained(<base>).save_pretrained(folder)."
    )


def render(processor: Any, text: str) -> str:
    """The prompt given to the processor with one image: the chat template applied (a user
    turn holding the image, then ``text``; the generation prompt added), or ``text`` for a
    self-formatting processor."""
    if template_of(processor) is None:  # the image token first, as the processor expects
        return f"{getattr(processor, 'image_token', '')}{text}"
    messages = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": text}]}]
    return processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)


def template_sha256(processor: Any) -> str | None:
    template = template_of(processor)
    return None if template is None else hashlib.sha256(template.encode()).hexdigest()


def answer_tokens(tokenizer: Any, choices: Sequence[str]) -> list[list[int]]:
    """The token ids of each class string as an answer (no special tokens); a string that
    tokenises to nothing is refused."""
    ids = [list(tokenizer(c, add_special_tokens=False)["input_ids"]) for c in choices]
    empty = [c for c, t in zip(choices, ids, strict=True) if not t]
    if empty:
        raise ModelLoadError(
            f"The class string(s) {empty} tokenise to nothing with this model's tokenizer, so "
            "they cannot be scored. Use class names the tokenizer can write."
        )
    return ids


def letter_tokens(tokenizer: Any, count: int) -> list[int]:
    """The token id of each option letter A, B, ... (each must be one token)."""
    if count > len(LETTERS):
        raise ModelLoadError(
            f"Multiple choice lists at most {len(LETTERS)} lettered options; there are {count} "
            "classes. Use --vlm-classes benchmark, or --vlm-protocol likelihood."
        )
    ids = [list(tokenizer(x, add_special_tokens=False)["input_ids"]) for x in LETTERS[:count]]
    long = [x for x, t in zip(LETTERS, ids, strict=False) if len(t) != 1]
    if long:
        raise ModelLoadError(
            f"The option letter(s) {long} are not one token each with this tokenizer, so the "
            "answer cannot be read from the next-token logits. Use --vlm-protocol likelihood."
        )
    return [t[0] for t in ids]


def options_text(choices: Sequence[str], order: Sequence[int]) -> str:
    """The lettered options, one a line: ``A. Dog``; ``order``: the classes in letter order."""
    return "\n".join(f"{LETTERS[i]}. {choices[c]}" for i, c in enumerate(order))
