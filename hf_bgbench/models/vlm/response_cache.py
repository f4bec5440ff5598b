"""A served model's answers kept on disk, so an interrupted run resumes without asking a
question twice (a served model is slow, rate-limited and paid for).

One folder per endpoint and served model; one JSON line per answer, appended (and flushed)
as it arrives, keyed by the request kind, its body with the image replaced by the image's
sha256, with the answer's own sha256. A line cut short by a killed run, or one whose answer
no longer matches its sha256 (a damaged file), is skipped when read and counted: its
request is asked again and its answer appended anew."""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path
from typing import Any

FILE = "answers.jsonl"


def request_key(kind: str, body: dict[str, Any], image_sha256: str) -> str:
    """The cache key of one request: its kind and body (the image by its hash)."""
    payload = json.dumps({"kind": kind, "body": body, "image": image_sha256}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


def answer_sha256(answer: Any) -> str:
    """The sha256 of an answer as JSON (keys sorted): what its cache line says it was."""
    return hashlib.sha256(json.dumps(answer, sort_keys=True).encode()).hexdigest()


class ResponseCache:
    """The answers of ``served_model`` at ``endpoint`` kept under ``root``."""

    def __init__(self, root: str | Path, endpoint: str, served_model: str):
        name = hashlib.sha256(f"{endpoint}|{served_model}".encode()).hexdigest()[:24]
        self.folder = Path(root) / name
        self.path = self.folder / FILE
        self.lock = threading.Lock()
        self.answers: dict[str, Any] = {}
        self.unreadable = 0  # lines cut short by a killed run
        self.cut_short = False  # the file ends inside a line: the next answer starts a new one
        self.folder.mkdir(parents=True, exist_ok=True)
        about = self.folder / "about.json"
        if not about.exists():  # which endpoint and model the folder holds (no credential)
            about.write_text(json.dumps({"endpoint": endpoint, "served_model": served_model}))
        if self.path.exists():
            self._read()

    def _read(self) -> None:
        data = self.path.read_bytes()
        self.cut_short = bool(data) and not data.endswith(b"\n")
        with self.path.open(encoding="utf-8", errors="replace") as f:
            for line in f:
                try:
                    entry = json.loads(line)
                    intact = entry["sha256"] == answer_sha256(entry["answer"])
                except (json.JSONDecodeError, KeyError, TypeError):
                    intact = False
                if intact:
                    self.answers[entry["key"]] = entry["answer"]
                else:
                    self.unreadable += 1

    def get(self, key: str) -> Any | None:
        with self.lock:
            return self.answers.get(key)

    def put(self, key: str, answer: Any) -> None:
        entry = {"key": key, "answer": answer, "sha256": answer_sha256(answer)}
        line = json.dumps(entry) + "\n"
        with self.lock:
            if self.cut_short:
                line, self.cut_short = "\n" + line, False
            self.answers[key] = answer
            with self.path.open("a", encoding="utf-8") as f:
                f.write(line)
                f.flush()
