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
from hf_bgbench.models.vlm.backend import Continuation, Generated, Request, Scored

TOP_LOGPROBS = 20
"""The most ``top_logprobs`` OpenAI's API and vLLM's server and engine accept by default."""


class ServedAnswerError(ModelLoadError):
    """What a server returned cannot be read as the rule's answer at all."""


def png_bytes(image: torch.Tensor) -> bytes:
    """The (3, H, W) [0, 1] image as 8-bit PNG (the decoded pixels, exactly: uint8 / 255)."""
    from PIL import Image

    array = (image.detach().float().cpu().clamp(0, 1) * 255).round().to(torch.uint8)
    buffer = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(array.permute(1, 2, 0).numpy())).save(buffer, "PNG")
    return buffer.getvalue()


def pngs(requests: Sequence[Request]) -> list[bytes]:
    """Each request's image as PNG, each distinct image encoded once (a rule asks one image
    several times: each rotation, each class string)."""
    encoded: dict[int, bytes] = {}
    for r in requests:
        if id(r.image) not in encoded:
            encoded[id(r.image)] = png_bytes(r.image)
    return [encoded[id(r.image)] for r in requests]


def one_string_each(requests: Sequence[Continuation]) -> list[Continuation]:
    """The continuation requests split into one request a string (a served model scores one
    string written as the answer per request), in order."""
    return [Continuation(r.image, r.text, (s,)) for r in requests for s in r.strings]


def per_request(scored: Sequence[Scored], requests: Sequence[Continuation]) -> list[list[Scored]]:
    """The answers to :func:`one_string_each`'s requests, grouped back per original request."""
    out, i = [], 0
    for r in requests:
        out.append(list(scored[i : i + len(r.strings)]))
        i += len(r.strings)
    return out


def generated(content: str | None, *, filtered: bool = False, echo_of: str = "") -> Generated:
    """A generated answer read: the text, or None and why there is none. ``echo_of``: the
    question a server may echo back -- an answer that holds it is no answer (its words would
    be matched as the model's), never trimmed by a guess of what to strip."""
    if filtered:
        return Generated(None, "the server filtered the answer (content_filter)")
    if not content or not content.strip():
        return Generated(None, "an empty answer")
    if echo_of.strip() and echo_of.strip() in content:
        return Generated(None, "the answer repeats the question (the server echoed it)")
    return Generated(content)


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
