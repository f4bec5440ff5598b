"""What the Space tells a visitor: a refusal in plain words (:class:`SpaceRefusal`), and any
other error turned into one (:func:`visitor_message`).

A visitor reads whole sentences that say what they can change: CLI flags become words,
commands and tracebacks are dropped, server paths, environment variables and exception
names are hidden. Pure functions, no Gradio.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from hf_bgbench.hub.errors import is_hub_unreachable


class SpaceRefusal(ValueError):
    """Something a visitor entered is refused; the message says why, in plain words."""


HUB_UNREACHABLE_MESSAGE = (
    "The Hugging Face Hub cannot be reached from this Space right now, and {what} is not "
    "stored on it. Try again later, or score the bundled tf_efficientnet_lite0."
)

_FLAG_WORDS = {
    "--data": "the dataset",
    "--benchmark": "the benchmark",
    "--variants": "the variants",
    "--label-map": "the label map",
    "--vlm-protocol": "the VLM rule",
    "--checkpoint": "a separate weights file (not available in this Space)",
    "--restrict-to-benchmark-classes": "the option 'argmax only over the benchmark's classes'",
    "--resize-to-model-input": "resizing to the model's input (not available in this Space)",
    "--allow-mismatched-ids": "scoring only the shared images (not available in this Space)",
    "--output": "the output folder",
}
_COMMAND = re.compile(r"`[^`]*`")
_FLAG = re.compile(r"--[a-z][a-z0-9-]*")
_ABS_PATH = re.compile(r"(?<![\w/:.])(?:/[\w.@+-]+){2,}/?")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z(])")
# server internals a visitor cannot act on: environment variables, exception class names
_ENV_VAR = re.compile(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]{2,}\b")
_CLASS_NAME = re.compile(r"\b[A-Z][A-Za-z0-9]*(?:Error|Exception|Warning)\b")
_INTERNAL_ASIDE = re.compile(
    r"\s*\((?:[^()]*(?:Error|Exception|Warning|said|[A-Z0-9]_[A-Z0-9])[^()]*)\)"
)
MAX_MESSAGE = 700
UNEXPECTED_MESSAGE = (
    "The job failed with an unexpected error. If it keeps failing, tell the Space's "
    "maintainers; meanwhile, please try another model or dataset."
)
PICKLE_MESSAGE = (
    "This model's weights are stored as a pickle file, which can run code when it is "
    "loaded, so this Space refuses it. Pick a model that publishes safetensors weights."
)
REMOTE_CODE_MESSAGE = (
    "This model needs custom Python code from its repository, which this Space never runs. "
    "Pick a model whose architecture ships with timm, transformers or open_clip."
)


def _known_message(err: BaseException) -> str | None:
    """A whole message for the errors a visitor can meet whose own text is written for a
    command-line user (commands, environment variables, library internals)."""
    from hf_bgbench.hub.errors import error_chain
    from hf_bgbench.models.errors import RemoteCodeRefusedError, UnsafeCheckpointError

    chain = list(error_chain(err))
    if any(isinstance(e, UnsafeCheckpointError) for e in chain):
        return PICKLE_MESSAGE
    if any(isinstance(e, RemoteCodeRefusedError) for e in chain):
        return REMOTE_CODE_MESSAGE
    if is_hub_unreachable(err):
        return HUB_UNREACHABLE_MESSAGE.format(what="what this job needs (model or dataset)")
    return None


def visitor_message(err: BaseException, hide: Mapping[str, str] | None = None) -> str:
    """``err`` as a message for a web visitor: whole sentences (never cut mid-sentence, at
    most :data:`MAX_MESSAGE` characters), CLI flags as words, shell commands dropped, the
    strings of ``hide`` (e.g. a dataset's server path -> its allow-list name) and any other
    absolute path replaced, no traceback."""
    if isinstance(err, SpaceRefusal):
        return str(err)
    known = _known_message(err)
    if known:
        return known
    text = " ".join(str(err).split())
    for secret, shown in sorted((hide or {}).items(), key=lambda kv: -len(kv[0])):
        if secret:
            text = text.replace(secret, shown)
    text = _ABS_PATH.sub("(a file on the server)", text)
    text = _INTERNAL_ASIDE.sub("", text)
    sentences = []
    for sentence in _SENTENCE.split(text):
        if _COMMAND.search(sentence) and ("bgbench " in sentence or "hf auth" in sentence):
            continue  # advice to run a command: the visitor has no shell here
        if _ENV_VAR.search(sentence) or _CLASS_NAME.search(sentence):
            continue  # server internals: nothing the visitor can change
        sentence = _COMMAND.sub(lambda m: m.group(0).strip("`"), sentence)
        sentence = _FLAG.sub(lambda m: _FLAG_WORDS.get(m.group(0), "a setting"), sentence)
        sentences.append(sentence)
    kept: list[str] = []
    for sentence in sentences:
        if kept and len(" ".join([*kept, sentence])) > MAX_MESSAGE:
            break
        kept.append(sentence)
    message = " ".join(kept).strip()
    if not isinstance(err, (ValueError, OSError)) or not message:
        return UNEXPECTED_MESSAGE
    if message[-1] not in ".!?)":
        message += "."
    return message
