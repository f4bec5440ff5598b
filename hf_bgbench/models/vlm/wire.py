"""What the backends that put images on the wire share (a served endpoint, vLLM's engine):
the image as a lossless PNG data URL in an OpenAI-style chat message, and the reading of the
log-probabilities such servers return."""

from __future__ import annotations

import base64
import io
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from hf_bgbench.models.errors import ModelLoadError
from hf_bgbench.models.vlm.backend import Scored


class ServedAnswerError(ModelLoadError):
    """What a server returned cannot be read as the rule's answer at all."""


def png_bytes(image: torch.Tensor) -> bytes:
    """The (3, H, W) [0, 1] image as 8-bit PNG (the decoded pixels, exactly: uint8 / 255)."""
    from PIL import Image

    array = (image.detach().float().cpu().clamp(0, 1) * 255).round().to(torch.uint8)
    buffer = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(array.permute(1, 2, 0).numpy())).save(buffer, "PNG")
    return buffer.getvalue()


def chat_messages(png: bytes, text: str, answer: str | None) -> list[dict[str, Any]]:
    """One user turn (the image, then the question) and, for a continuation, the answer
    written as the assistant's turn."""
    url = "data:image/png;base64," + base64.b64encode(png).decode()
    content = [{"type": "image_url", "image_url": {"url": url}}, {"type": "text", "text": text}]
    messages: list[dict[str, Any]] = [{"role": "user", "content": content}]
    if answer is not None:
        messages.append({"role": "assistant", "content": answer})
    return messages


def candidate_logprob(top: Sequence[dict], candidate: str) -> float:
    """The log-probability that the next token is ``candidate``: the tokens among ``top``
    equal to it once stripped of spaces (``A``, `` A``), their probabilities summed; -inf
    when none is among them."""
    found = [t["logprob"] for t in top if str(t.get("token", "")).strip() == candidate]
    if not found:
        return -math.inf
    peak = max(found)
    return peak + math.log(sum(math.exp(v - peak) for v in found))


def trailing_logprob(prompt_logprobs: Sequence[dict | None], string: str) -> Scored:
    """The summed log-probability of the last prompt tokens that spell ``string`` (vLLM's
    ``prompt_logprobs``: per position, token id -> logprob, rank, decoded_token; the
    position's own token is the one whose rank is not the top list's)."""
    text, total, count = "", 0.0, 0
    for position in reversed(prompt_logprobs):
        if not position:
            break
        entry = _own_token(position)
        text = (entry.get("decoded_token") or "") + text
        total += float(entry["logprob"])
        count += 1
        if text.strip() == string.strip():
            return Scored(total, count)
        if len(text.strip()) > len(string) + 8:
            break
    raise ServedAnswerError(
        f"The prompt's last tokens do not spell the class string {string!r} (read "
        f"{text[-40:]!r}): the server's chat template wrote something after the answer."
    )


def _own_token(position: dict) -> dict:
    """The prompt token's own entry (with ``prompt_logprobs=0`` the only one)."""
    return (
        next(iter(position.values()))
        if len(position) == 1
        else max(position.values(), key=lambda e: e.get("rank", 0))
    )
