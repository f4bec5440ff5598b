"""A served model behind any OpenAI-compatible endpoint (vLLM, SGLang, TGI, ``transformers
serve``, a hosted API), through the official ``openai`` client.

Each image goes at the benchmark's pixels as a lossless PNG data URL, then the question, in
one user turn; the server applies its own chat template. ``generate``: temperature 0, the
seed sent. ``next_token_logprobs``: one token generated with its ``top_logprobs`` (a
candidate absent from them gets -inf). ``continuation_logprobs``: vLLM's
``prompt_logprobs`` of the class string written as the assistant's answer
(``continue_final_message``). What a server can answer besides generation depends on what
it is (``--api-server``, :data:`SERVES`); a rule it cannot serve is refused before any
request.

At most ``max_concurrency`` requests run at once; 429, 5xx, timeouts and refused
connections are retried with backoff, saying what is awaited; every answer is cached on disk
as it arrives (:mod:`hf_bgbench.models.vlm.response_cache`), so a rerun asks only what was
never answered. An error body for one request (400, 413, 422) leaves that image unanswered
with its reason; a wrong key, an unknown model or a server that stays down stops the run,
saying how to resume. The key is read from an environment variable and written nowhere."""

from __future__ import annotations

import hashlib
import logging
import math
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from hf_bgbench.models.errors import ModelLoadError
from hf_bgbench.models.registry import ModelLoader, ModelRef, register_loader
from hf_bgbench.models.vlm.backend import (
    CONTINUATION,
    GENERATE,
    NEXT_TOKEN,
    Backend,
    Continuation,
    Generate,
    Generated,
    NextToken,
    Scored,
)
from hf_bgbench.models.vlm.load import outside_classifier
from hf_bgbench.models.vlm.response_cache import ResponseCache, request_key
from hf_bgbench.models.vlm.settings import ServedSettings
from hf_bgbench.models.vlm.wire import (
    TOP_LOGPROBS,
    ServedAnswerError,
    candidate_logprob,
    chat_messages,
    one_string_each,
    per_request,
    pngs,
    trailing_logprob,
)
from hf_bgbench.models.vlm.wire import generated as read_generated

log = logging.getLogger(__name__)

SERVES = {
    "generic": frozenset({GENERATE}),
    "transformers": frozenset({GENERATE}),
    "openai": frozenset({GENERATE, NEXT_TOKEN}),
    "tgi": frozenset({GENERATE, NEXT_TOKEN}),
    "sglang": frozenset({GENERATE, NEXT_TOKEN}),
    "vllm": frozenset({GENERATE, NEXT_TOKEN, CONTINUATION}),
}
"""What each kind of server answers: every one generates; OpenAI, TGI, SGLang and vLLM return
``top_logprobs`` of the answer's tokens; only vLLM returns the prompt's log-probabilities."""
WHY_UNSERVED = {
    "generic": "a server of unknown kind may return no log-probabilities; say what it is with "
    "--api-server vllm / sglang / tgi / openai when it returns them, or use --vlm-protocol "
    "open or choice-text",
    "transformers": "transformers serve ignores logprobs and top_logprobs (transformers 5.25); "
    "use --vlm-protocol open or choice-text",
}
RETRY_BASE_SECONDS = 1.0
RETRY_MAX_SECONDS = 60.0
RETRIED = (429, 500, 502, 503, 504)


class ServedModelError(ServedAnswerError):
    """The server cannot be asked at all (a wrong key, an unknown model, down for good)."""


class OpenAICompatibleBackend(Backend):
    """``served_model`` at the endpoint of ``settings``."""

    name = "openai-compatible"
    answers_may_fail = True

    def __init__(self, served_model: str, settings: ServedSettings, cache_root: str):
        try:
            import openai
        except ImportError:
            raise ModelLoadError(
                "A served model is asked through the official openai client, which is not "
                "installed: pip install 'hf-bgbench[served]' (or pip install openai)."
            ) from None

        endpoint = settings.api_base or os.environ.get("OPENAI_BASE_URL")
        if not endpoint:
            raise ModelLoadError(
                f"openai:{served_model} names a served model but not where it is served: pass "
                "--api-base URL (e.g. http://localhost:8000/v1 for vLLM)."
            )
        parts = urlsplit(endpoint)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            # the client would retry for a minute, then advise starting a server
            source = "--api-base" if settings.api_base else "$OPENAI_BASE_URL"
            raise ModelLoadError(
                f"{source} {public_endpoint(endpoint)!r} is not an http(s) URL with a host: "
                "give the endpoint as http://HOST:PORT/v1 (e.g. http://localhost:8000/v1 for "
                "vLLM)."
            )
        self.served_model = served_model
        self.settings = settings
        self.endpoint = public_endpoint(endpoint)
        self.serves = SERVES[settings.server]
        self.why_unserved = WHY_UNSERVED.get(settings.server)
        key = os.environ.get(settings.api_key_env)
        self.key_source = f"${settings.api_key_env}" if key else "none"
        self.client = openai.OpenAI(
            base_url=endpoint, api_key=key or "EMPTY", max_retries=0, timeout=settings.timeout
        )
        self.cache = ResponseCache(cache_root, self.endpoint, served_model)
        self.pool = ThreadPoolExecutor(settings.max_concurrency, thread_name_prefix="bgbench-api")
        self.counts_lock = threading.Lock()
        self.counts = {"requests_sent": 0, "answers_from_cache": 0, "retries": 0}
        self.counts.update(prompt_tokens=0, completion_tokens=0)
        self.server_models: set[str] = set()
        self.fingerprints: set[str] = set()
        self.stopped = threading.Event()  # a fatal answer or Ctrl-C: nothing more is sent
        self.first_failure = ""  # the fatal answer's own message, said by every stopped request

    # ------------------------------------------------------------------ the request kinds

    def generate(self, requests: Sequence[Generate]) -> list[Generated]:
        def body(r: Generate) -> dict[str, Any]:
            return {"max_tokens": r.max_new_tokens, "temperature": 0, "seed": self.settings.seed}

        answers = self._map(GENERATE, requests, body)
        return [generated(a, r.text) for a, r in zip(answers, requests, strict=True)]

    def next_token_logprobs(self, requests: Sequence[NextToken]) -> list[list[float]]:
        def body(r: NextToken) -> dict[str, Any]:
            return {
                "max_tokens": 1,
                "temperature": 0,
                "seed": self.settings.seed,
                "logprobs": True,
                "top_logprobs": TOP_LOGPROBS,
            }

        answers = self._map(NEXT_TOKEN, requests, body)
        return [self._candidates(a, r.candidates) for a, r in zip(answers, requests, strict=True)]

    def continuation_logprobs(self, requests: Sequence[Continuation]) -> list[list[Scored]]:
        asked = one_string_each(requests)

        def body(r: Continuation) -> dict[str, Any]:
            return {
                "max_tokens": 1,
                "temperature": 0,
                "answer": r.strings[0],  # written as the assistant's turn (chat_messages)
                "extra_body": {
                    "prompt_logprobs": 0,
                    "continue_final_message": True,
                    "add_generation_prompt": False,
                },
            }

        answers = self._map(CONTINUATION, asked, body)
        scored = [self._continuation(a, r.strings[0]) for a, r in zip(answers, asked, strict=True)]
        return per_request(scored, requests)

    # ------------------------------------------------------------------ the record

    def record(self) -> dict[str, Any]:
        import openai

        return {
            "name": self.name,
            "endpoint": self.endpoint,
            "served_model": self.served_model,
            "server": self.settings.server,
            "api_key": self.key_source,
            "openai": openai.__version__,
            "max_concurrency": self.settings.max_concurrency,
            "image_encoding": "PNG data URL at the benchmark's pixels (lossless)",
            "next_token": f"the answer's first token's top {TOP_LOGPROBS} log-probabilities; "
            "a candidate's tokens with and without spaces summed, one outside them: none",
            "continuation": "prompt_logprobs of the class string written as the assistant's "
            "answer (continue_final_message)",
        }

    def generation(self, max_new_tokens: int) -> dict[str, Any]:
        return {"temperature": 0, "max_tokens": max_new_tokens, "seed": self.settings.seed}

    def usage(self) -> dict[str, Any]:
        with self.counts_lock:
            counts = dict(self.counts)
        counts["total_tokens"] = counts["prompt_tokens"] + counts["completion_tokens"]
        counts["server_model"] = sorted(self.server_models)
        counts["system_fingerprint"] = sorted(self.fingerprints)
        counts["cache"] = str(self.cache.folder)
        counts["cache_lines_unreadable"] = self.cache.unreadable  # cut short or damaged
        return counts

    def close(self) -> None:
        self.pool.shutdown(wait=True)

    # ------------------------------------------------------------------ asking

    def _map(self, kind: str, requests: Sequence[Any], body: Callable) -> list[dict]:
        """The answers to ``requests``, at most ``max_concurrency`` in flight; when one fails
        for good (or Ctrl-C), the requests not yet sent are dropped, never sent after it."""
        futures = [
            self.pool.submit(self._answer, kind, png, r.text, body(r))
            for png, r in zip(pngs(requests), requests, strict=True)
        ]
        try:
            return [f.result() for f in futures]
        except BaseException:
            self.stopped.set()
            for f in futures:
                f.cancel()
            raise

    def _answer(self, kind: str, png: bytes, text: str, body: dict) -> dict:
        """The cached answer to one request, else the server's (cached as it arrives)."""
        answer_text = body.pop("answer", None)
        sent = {"model": self.served_model, "text": text, "answer": answer_text, **body}
        key = request_key(kind, sent, hashlib.sha256(png).hexdigest())
        answer = self.cache.get(key)
        if answer is not None:
            self._count(answers_from_cache=1)
        else:
            answer = self._send(chat_messages(png, text, answer_text), body)
            if "error" not in answer:  # an error may be the server's passing state: not kept
                self.cache.put(key, answer)
        with self.counts_lock:  # what the server said it is, from its answers
            if answer.get("model"):
                self.server_models.add(answer["model"])
            if answer.get("system_fingerprint"):
                self.fingerprints.add(answer["system_fingerprint"])
        return answer

    def _send(self, messages: list, body: dict) -> dict:
        import openai

        tries = self.settings.retries + 1
        for attempt in range(1, tries + 1):
            if self.stopped.is_set():  # another request failed for good: not sent
                raise ServedModelError(
                    self.first_failure or "stopped: another request to the server failed for good"
                )
            try:
                response = self.client.chat.completions.create(
                    model=self.served_model, messages=messages, **body
                )
            except openai.APIStatusError as err:
                if err.status_code not in RETRIED:  # sent and answered, with an error
                    self._count(requests_sent=1)
                    return self._refused(err)
                failure, wait = f"HTTP {err.status_code}", _retry_after(err)
            except openai.APIConnectionError as err:  # timeouts too
                failure, wait = f"{type(err).__name__}: {err}", None
            else:
                self._count(requests_sent=1)
                return self._read(response)
            if attempt == tries:
                break
            wait = (
                wait
                if wait is not None
                else min(RETRY_MAX_SECONDS, RETRY_BASE_SECONDS * 2 ** (attempt - 1))
            )
            log.warning(
                "%s at %s: %s; waiting %.1f s before try %d of %d",
                self.served_model,
                self.endpoint,
                failure,
                wait,
                attempt + 1,
                tries,
            )
            self._count(retries=1)
            if self.stopped.wait(wait):  # woken by a fatal answer elsewhere: give up now
                continue
        raise self._stop(
            f"The server at {self.endpoint} did not answer after {tries} tries (last: "
            f"{failure}). The {len(self.cache.answers)} answers received so far are cached in "
            f"{self.cache.folder}; start the server and run the same command again: nothing "
            "already answered is asked twice."
        )

    def _stop(self, message: str) -> ServedModelError:
        """The error that stops the run; the first one's message is what every request stopped
        after it says, so the reason reaches the user whichever request is read first."""
        with self.counts_lock:
            self.first_failure = self.first_failure or message
        self.stopped.set()
        return ServedModelError(message)

    def _refused(self, err: Any) -> dict:
        status, message = err.status_code, _message(err)
        # every request would fail so: none is sent after it
        if status in (401, 403):
            raise self._stop(
                f"The server at {self.endpoint} refused the API key (HTTP {status}: {message}). "
                f"Put the key in ${self.settings.api_key_env} (--api-key-env names another "
                "variable)."
            ) from None
        if status == 404:
            raise self._stop(
                f"The server at {self.endpoint} has no model {self.served_model!r} (HTTP 404: "
                f"{message}). Its /v1/models lists what it serves; pass openai:<that name>."
            ) from None
        return {"error": f"HTTP {status}: {message}"}

    def _read(self, response: Any) -> dict:
        data = response.model_dump()
        usage = data.get("usage") or {}
        self._count(
            prompt_tokens=usage.get("prompt_tokens") or 0,
            completion_tokens=usage.get("completion_tokens") or 0,
        )
        choice = (data.get("choices") or [{}])[0]
        logprobs = (choice.get("logprobs") or {}).get("content") or []
        return {
            "content": (choice.get("message") or {}).get("content"),
            "finish_reason": choice.get("finish_reason"),
            "top_logprobs": logprobs[0].get("top_logprobs") if logprobs else None,
            "prompt_logprobs": data.get("prompt_logprobs"),
            "model": data.get("model"),  # what the server said it is
            "system_fingerprint": data.get("system_fingerprint"),
        }

    def _count(self, **added: int) -> None:
        with self.counts_lock:
            for k, v in added.items():
                self.counts[k] += v

    # ------------------------------------------------------------------ reading

    def _candidates(self, answer: dict, candidates: Sequence[str]) -> list[float]:
        if "error" in answer:
            return [-math.inf] * len(candidates)
        top = answer.get("top_logprobs")
        if top is None:
            raise ServedModelError(
                f"The server at {self.endpoint} returned no top_logprobs although --api-server "
                f"{self.settings.server} says it does, so the option letters cannot be read "
                "from log-probabilities. Use --vlm-protocol choice-text (the letter read from "
                "the answer's text, a different rule) or open."
            )
        return [candidate_logprob(top, c) for c in candidates]

    def _continuation(self, answer: dict, string: str) -> Scored:
        if "error" in answer:
            return Scored(-math.inf, 1)
        prompt = answer.get("prompt_logprobs")
        if not prompt:
            raise ServedModelError(
                f"The server at {self.endpoint} returned no prompt_logprobs, so a class "
                "string's likelihood cannot be read. Only vLLM returns them (--api-server "
                "vllm); use --vlm-protocol choice or open with another server."
            )
        return trailing_logprob(prompt, string)


def public_endpoint(url: str) -> str:
    """``url`` without credentials (user:password@, query string, fragment)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))


def generated(answer: dict, question: str) -> Generated:
    """A server's generation answer read (:func:`~hf_bgbench.models.vlm.wire.generated`);
    an error body is no answer, with the error as its reason."""
    if "error" in answer:
        return Generated(None, answer["error"])
    filtered = answer.get("finish_reason") == "content_filter"
    return read_generated(answer.get("content"), filtered=filtered, echo_of=question)


def _retry_after(err: Any) -> float | None:
    headers = getattr(getattr(err, "response", None), "headers", None) or {}
    try:
        return min(RETRY_MAX_SECONDS, float(headers.get("retry-after")))
    except (TypeError, ValueError):
        return None


def _message(err: Any) -> str:
    body = getattr(err, "body", None)
    if isinstance(body, dict):
        body = body.get("error", body)
        body = body.get("message", body) if isinstance(body, dict) else body
    return str(body or err)[:300]


# --------------------------------------------------------------------------- its loader


def load_served_vlm(ref: ModelRef) -> Any:
    """``openai:<served name>``: the served model behind ``--api-base``, scored by the rule
    of ``ref.vlm``, refused before any request when the server cannot serve the rule."""
    from hf_bgbench.cache import cache_root

    served = ref.vlm.served or ServedSettings()
    root = served.cache_dir or str(cache_root() / "api_answers")
    backend = OpenAICompatibleBackend(ref.target, served, root)
    resolved = f"openai:{ref.target}@{backend.endpoint}"
    clf = outside_classifier(ref.model_id, backend, ref.vlm, resolved)
    clf.normalisation = "the server's own processor"
    per_image = requests_per_image(clf.vlm)
    if per_image > MANY_REQUESTS:  # said before the first request: it is paid for
        log.warning(
            "%s: the %s rule sends %d requests per image (one per class string); "
            "--vlm-protocol choice sends %d, open 1",
            ref.model_id,
            clf.vlm["protocol"],
            per_image,
            clf.vlm.get("rotations") or 1,
        )
    return clf


MANY_REQUESTS = 20
"""Requests per image above which a run says what it will cost before it starts."""


def requests_per_image(record: dict) -> int:
    """How many requests the rule of ``record`` (results' ``vlm``) sends per image."""
    if record["protocol"] == "likelihood":
        return len(record["choices"])
    return int(record.get("rotations") or 1)


register_loader(
    ModelLoader(
        "openai-compatible",
        "openai",
        "generative VLMs served behind an OpenAI-compatible endpoint (vLLM, SGLang, TGI, "
        "transformers serve, hosted APIs): openai:<served name> with --api-base URL",
        load_served_vlm,
        kind="generative",
        by_name_only=True,
        priority=55,
    )
)
