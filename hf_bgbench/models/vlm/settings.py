"""How a generative vision-language model is turned into class scores: the named rule, its
prompt and its class strings. The rule is part of the number (published VLM accuracies differ
by points with the answer format alone), so every field here is recorded with the results."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from hf_bgbench.models.heads import ClassNames

VLM_PROTOCOLS = ("likelihood", "choice", "choice-text", "open")
LETTER_RULES = ("choice", "choice-text")
"""The rules that ask lettered multiple choice (``--circular``, the ``{choices}`` slot)."""
PAIR = "pair"
"""The rule a benchmark's protocol may set (never an option): each image's own two-way
question, its true class and the data's hard negative (:class:`PairQuestion`)."""
VLM_SCORES = ("mean", "sum")
VLM_CLASS_SETS = ("benchmark", "imagenet")
NO_ANSWER = "(no answer)"
"""The extra class of the rules that may give no answer (``open``; ``choice`` with rotations):
it maps to no benchmark class, so such an image counts as wrong, and it is counted."""

QUESTION = "What type of object is in this photo?"
SHORT_ANSWER = "Answer the question using a single word or phrase."
LETTER_ANSWER = "Answer with the option's letter from the given choices directly."
CHOICES_SLOT = "{choices}"
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


@dataclass(frozen=True)
class PairQuestion:
    """A benchmark's two-way question (:data:`PAIR`): ``prompt`` holds ``{first}`` (the true
    class) and ``{second}`` (the image's hard negative, the data's ``negative`` column);
    ``answer_words``: class name -> other words an answer may use for it; ``outer_first``:
    (inner, outer) name pairs where the outer name holds the inner one, tested first;
    ``column``: the data column of each image's hard negative; ``deviations``: how asking
    it here differs from its authors' code (recorded by every VLM run that asks it)."""

    prompt: str
    answer_words: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    outer_first: tuple[tuple[str, str], ...] = ()
    max_new_tokens: int = 512
    source: str = ""
    column: str = "negative"
    deviations: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for slot in ("{first}", "{second}"):
            if slot not in self.prompt:
                raise ValueError(f"a two-way question's prompt must hold {slot}.")
        if self.max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be >= 1, got {self.max_new_tokens}.")


@dataclass(frozen=True)
class VlmSettings:
    """One scoring rule. ``classes``: ``"imagenet"`` or the :class:`ClassNames` to score;
    ``prompt``: the user text (None: the rule's default; for ``choice`` it holds
    :data:`CHOICES_SLOT`); ``synonyms``: per class, the phrases an open answer may use;
    ``blockers``: compounds naming no class, whose words then name nothing ("hot dog")."""

    protocol: str = "likelihood"
    score: str = "mean"
    circular: int = 1
    classes: ClassNames | str = "imagenet"
    prompt: str | None = None
    prompt_source: str = "default"
    max_new_tokens: int = 16
    synonyms: tuple[tuple[str, ...], ...] | None = None
    synonyms_source: str | None = None
    blockers: tuple[str, ...] = ()  # compounds that name no class and block their words
    question: PairQuestion | None = None
    rule_source: str = "options"  # where the rule comes from: the options, or a protocol
    served: ServedSettings | None = None  # how a served model is reached (None: in process)

    def __post_init__(self) -> None:
        if (self.protocol == PAIR) != (self.question is not None):
            raise ValueError("the pair rule needs its question, and only it takes one.")
        if self.protocol not in (*VLM_PROTOCOLS, PAIR):
            raise ValueError(
                f"--vlm-protocol {self.protocol!r}: choose one of {', '.join(VLM_PROTOCOLS)}."
            )
        if self.score not in VLM_SCORES:
            raise ValueError(f"--vlm-score {self.score!r}: choose mean or sum.")
        if self.circular < 1:
            raise ValueError(f"--circular must be >= 1, got {self.circular}.")
        if self.circular > 1 and self.protocol not in LETTER_RULES:
            raise ValueError(
                "--circular rotates the options of a multiple-choice question: it needs "
                "--vlm-protocol choice."
            )
        if self.max_new_tokens < 1:
            raise ValueError(f"--vlm-max-new-tokens must be >= 1, got {self.max_new_tokens}.")
        if self.prompt is not None and self.protocol in LETTER_RULES:
            if CHOICES_SLOT not in self.prompt:
                raise ValueError(
                    f"A --vlm-prompt for --vlm-protocol choice must hold {CHOICES_SLOT} where "
                    "the lettered options go."
                )
        if (
            self.prompt is not None
            and self.protocol not in LETTER_RULES
            and CHOICES_SLOT in self.prompt
        ):
            raise ValueError(  # else given to the model as it stands, unfilled
                f"The --vlm-prompt holds {CHOICES_SLOT}, which only --vlm-protocol choice fills "
                f"with the lettered options; the {self.protocol} rule would ask it as written. "
                f"Remove {CHOICES_SLOT}, or use --vlm-protocol choice."
            )

    @property
    def may_abstain(self) -> bool:
        """Whether the rule may give no class (then :data:`NO_ANSWER` is a column)."""
        if self.protocol in ("open", "choice-text", PAIR):
            return True
        return self.protocol == "choice" and self.circular > 1

    def user_text(self, options: str = "", pair: tuple[str, str] = ("", "")) -> str:
        """The text given with the image: the question, for ``choice`` with the options, for
        ``pair`` with the image's two classes."""
        if self.question is not None:
            return self.question.prompt.format(first=pair[0], second=pair[1])
        if self.protocol in LETTER_RULES:
            template = self.prompt or f"{QUESTION}\n{CHOICES_SLOT}\n{LETTER_ANSWER}"
            return template.replace(CHOICES_SLOT, options)
        return self.prompt if self.prompt is not None else f"{QUESTION}\n{SHORT_ANSWER}"


def read_prompt(path: str | None) -> tuple[str | None, str]:
    """(prompt text, its source) from ``--vlm-prompt FILE`` (None: the default prompt)."""
    if path is None:
        return None, "default"
    try:
        text = Path(path).read_text(encoding="utf-8-sig").strip()  # without a BOM
    except UnicodeDecodeError as e:  # it said "cannot read it", as for a missing file
        raise ValueError(
            f"--vlm-prompt {path} is not UTF-8 text ({e}): save the question as a plain UTF-8 "
            "text file."
        ) from None
    except OSError as e:
        raise ValueError(f"--vlm-prompt {path}: cannot read it ({e}).") from e
    if not text:
        raise ValueError(f"--vlm-prompt {path} is empty: write the question the model is asked.")
    return text, f"file {Path(path).name}"


def class_string(name: str) -> str:
    """A class name as a person writes an answer: spaces for underscores, a capital first."""
    words = " ".join(name.replace("_", " ").split())
    return words[:1].upper() + words[1:]


SERVER_KINDS = ("generic", "vllm", "sglang", "tgi", "openai", "transformers")
"""What an OpenAI-compatible server is, which says what it can answer besides generation
(:data:`hf_bgbench.models.vlm.backends.openai_api.SERVES`)."""


@dataclass(frozen=True)
class ServedSettings:
    """How a served model is reached and asked: ``api_base`` (the endpoint, e.g.
    ``http://localhost:8000/v1``), ``api_key_env`` (the environment variable holding the key:
    never written anywhere), ``server`` (:data:`SERVER_KINDS`), at most ``max_concurrency``
    requests at once, ``retries`` on 429 / 5xx / timeouts, ``timeout`` seconds a request,
    the answers cached in ``cache_dir`` (None: under bgbench's cache root), ``seed`` sent
    with each generation where the server takes one."""

    api_base: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    server: str = "generic"
    max_concurrency: int = 4
    retries: int = 5
    timeout: float = 120.0
    cache_dir: str | None = None
    seed: int = 0
    tensor_parallel_size: int | None = None  # vLLM's engine: GPUs one model spans (None: all)

    def __post_init__(self) -> None:
        if self.server not in SERVER_KINDS:
            raise ValueError(
                f"--api-server {self.server!r}: choose one of {', '.join(SERVER_KINDS)}."
            )
        if self.max_concurrency < 1:
            raise ValueError(f"--max-concurrency must be >= 1, got {self.max_concurrency}.")
        if self.retries < 0:
            raise ValueError(f"--api-retries must be >= 0, got {self.retries}.")
        if self.tensor_parallel_size is not None and self.tensor_parallel_size < 1:
            raise ValueError(
                f"--tensor-parallel-size must be >= 1, got {self.tensor_parallel_size}."
            )
        if not self.timeout > 0:
            raise ValueError(f"--api-timeout must be > 0 seconds, got {self.timeout}.")
