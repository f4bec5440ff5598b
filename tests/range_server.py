"""A local HTTP file server on 127.0.0.1 that honours ``Range: bytes=N-`` (or, on request,
ignores it), can cut responses short, and logs what it was asked and sent."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class ServerState:
    files: dict[str, bytes]
    honour_range: bool = True
    cut_after: int | None = None  # send only this many body bytes in each of the first ...
    cuts: int = 1  # ... this many replies
    requests: list[dict[str, str | None]] = field(default_factory=list)
    bytes_sent: int = 0
    base_url: str = ""

    def url(self, path: str) -> str:
        return self.base_url + path


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        state = self.server.state
        wanted = self.headers.get("Range")
        state.requests.append({"path": self.path, "range": wanted})
        body = state.files.get(self.path)
        if body is None:
            self.send_error(404, "Not Found")
            return
        start = 0
        if wanted and state.honour_range:
            start = int(wanted.removeprefix("bytes=").split("-")[0])
            if start >= len(body):
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(body)}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        else:
            self.send_response(200)
        payload = body[start:]
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if state.cut_after is not None and state.cuts > 0:
            payload, state.cuts = payload[: state.cut_after], state.cuts - 1
        self.wfile.write(payload)
        state.bytes_sent += len(payload)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    state: ServerState


@contextmanager
def serve(files: dict[str, bytes], **options: object) -> Iterator[ServerState]:
    """Serve ``files`` (URL path -> bytes) until the block ends."""
    server = _Server(("127.0.0.1", 0), _Handler)
    server.state = ServerState(files=files, **options)  # type: ignore[arg-type]
    server.state.base_url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
