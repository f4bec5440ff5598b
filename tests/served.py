"""Servers for the served-model tests, on localhost, offline.

:class:`TransformersServe`: the real ``transformers serve`` (transformers' own
OpenAI-compatible server) on a tiny VLM folder, in a process of its own; its access log
counts the requests it answered.

:class:`VllmShapedServer`: an HTTP server answering ``/v1/chat/completions`` with bodies in
vLLM's shape (``logprobs.content[0].top_logprobs``; ``prompt_logprobs``: per prompt position,
token id -> logprob, rank, decoded_token), each number a function of the image's bytes and
the question (:func:`letter_logprobs`, :func:`token_logprobs`), so a test computes the
expected scores independently. It can be told to answer the next requests with an error
status first (429 with Retry-After, 500, 400 with an error body)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerProcess:
    """A server command (``argv``, with ``{port}`` where its port goes) in a process of its
    own on a free port (or ``port``), its output in ``log``; ready once ``/health`` answers."""

    def __init__(self, argv: list[str], log: Path, port: int | None = None, wait: float = 120):
        self.argv, self.log, self.wait = argv, log, wait
        self.port = port or free_port()
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> ServerProcess:
        argv = [a.replace("{port}", str(self.port)) for a in self.argv]
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}
        env["OMP_NUM_THREADS"] = "1"
        with self.log.open("a") as out:
            self.process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + self.wait
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{argv[0]} ended: {self.log.read_text()[-2000:]}")
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=2)
                return self
            except OSError:
                time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"{argv[0]} did not start: {self.log.read_text()[-2000:]}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(30)


class TransformersServe(ServerProcess):
    """``transformers serve <folder>`` on the CPU."""

    def __init__(self, folder: Path, log: Path):
        cli = str(Path(sys.executable).with_name("transformers"))
        super().__init__([cli, "serve", str(folder), "--port", "{port}", "--device", "cpu"], log)

    def answered(self) -> int:
        """Chat completions answered so far (the access log's lines)."""
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return text.count('"POST /v1/chat/completions HTTP/1.1" 200')


LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _digest(*parts: str | bytes) -> bytes:
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else p.encode())
    return h.digest()


def image_bytes(messages: list) -> bytes:
    url = messages[0]["content"][0]["image_url"]["url"]
    return base64.b64decode(url.split(",", 1)[1])


def question(messages: list) -> str:
    return messages[0]["content"][1]["text"]


def letter_logprobs(image: bytes, text: str, count: int) -> dict[str, float]:
    """The top log-probabilities the server reports for an answer's first token: the first
    ``count`` letters (one of them, chosen by the digest, left out), and ``" "+letter``
    for one more, and a word that is no letter."""
    d = _digest(image, text)
    out = {LETTERS[i]: -0.1 - d[i] / 64 for i in range(count) if i != d[30] % count}
    out[" " + LETTERS[d[31] % count]] = -3.0 - d[29] / 64
    out["The"] = -0.05
    return out


def token_logprobs(image: bytes, text: str, answer: str) -> list[tuple[str, float]]:
    """The answer string's tokens (two characters each) and their log-probabilities."""
    pieces = [answer[i : i + 2] for i in range(0, len(answer), 2)]
    return [(p, -0.25 - _digest(image, text, p, str(i))[0] / 32) for i, p in enumerate(pieces)]


class VllmShapedServer:
    """A server answering in vLLM's shape (see the module docstring)."""

    def __init__(self, model: str = "org/tiny-vlm"):
        self.model = model
        self.requests: list[dict] = []
        self.statuses: list[int] = []  # answered (in order) before any body
        self.status_of: Callable[[dict], int] | None = None  # a status chosen by the request
        self.letters = 9
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(body)
                status = server.statuses.pop(0) if server.statuses else 200
                status = server.status_of(body) if server.status_of else status
                if status != 200:
                    payload = {"error": {"message": f"scripted {status}", "code": status}}
                    return self._send(status, payload, {"Retry-After": "0"})
                self._send(200, server.answer(body))

            def _send(self, status: int, payload: dict, headers: dict | None = None) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> VllmShapedServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def answer(self, body: dict) -> dict:
        image, text = image_bytes(body["messages"]), question(body["messages"])
        choice: dict = {
            "index": 0,
            "message": {"role": "assistant", "content": "A", "tool_calls": []},
            "logprobs": None,
            "finish_reason": "length",
            "stop_reason": None,
        }
        out = {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": self.model,
            "choices": [choice],
            "usage": {"prompt_tokens": 50, "total_tokens": 51, "completion_tokens": 1},
            "prompt_logprobs": None,
        }
        if body.get("logprobs"):
            top = letter_logprobs(image, text, self.letters)
            entries = [
                {"token": t, "logprob": v, "bytes": list(t.encode())} for t, v in top.items()
            ]
            first = max(entries, key=lambda e: e["logprob"])
            choice["logprobs"] = {"content": [{**first, "top_logprobs": entries}]}
        if body.get("prompt_logprobs") is not None:
            answer = body["messages"][-1]["content"]
            prompt = [None] + [
                {str(1000 + i): {"logprob": -1.0, "rank": 1, "decoded_token": "x"}}
                for i in range(5)
            ]
            for i, (piece, value) in enumerate(token_logprobs(image, text, answer)):
                prompt.append(
                    {str(2000 + i): {"logprob": value, "rank": 2, "decoded_token": piece}}
                )
            out["prompt_logprobs"] = prompt
        return out
