"""Who a request comes from, and what they hold in Gradio's queue.

A client is known by what it cannot forge (:func:`client_address`, :func:`client_key`): behind
``BGBENCH_SPACE_TRUSTED_PROXIES`` proxies, the ``X-Forwarded-For`` entry the outermost of them
appended, else the connection's address. The queue of the demo being served (:func:`serve`)
says how many jobs a client holds, waiting or running (:func:`jobs_of`), and whether it still
reads its job's updates (:func:`listening`, :class:`Attention`: a client that leaves them
unread for ``BGBENCH_SPACE_UNREAD_SECONDS`` is no longer waited for).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gradio as gr

from hf_bgbench.space.settings import TRUSTED_PROXIES, UNREAD_SECONDS

UNREAD_MESSAGES = 5  # updates a client leaves unread before it counts as not listening
SERVED: list[gr.Blocks] = []  # the demo being served (:func:`serve`): its queue outside an event


def client_address(
    forwarded: Sequence[str], socket_host: str | None, trusted_proxies: int
) -> str | None:
    """The address a request comes from, as far as the client cannot forge it.

    ``forwarded``: the ``X-Forwarded-For`` header values in order (several headers count as
    one list); ``socket_host``: the connection's peer; ``trusted_proxies``: how many proxies
    of the operator's stand in front of the app. Each proxy *appends* the address it saw, so
    the entry ``trusted_proxies`` from the end is the one the outermost trusted proxy wrote;
    anything left of it the client may have written itself. With no trusted proxy, or a
    header shorter than the proxies (a request that did not pass them), the header is not
    read at all: the connection's own address."""
    entries = [e.strip() for value in forwarded for e in str(value).split(",")]
    entries = [e for e in entries if e]
    if trusted_proxies > 0 and len(entries) >= trusted_proxies:
        return entries[-trusted_proxies]
    return socket_host


def client_key(request: Any) -> str | None:
    """Who a request comes from, by what the client cannot forge
    (:func:`client_address`): behind ``TRUSTED_PROXIES`` proxies
    the ``X-Forwarded-For`` entry the outermost of them appended, else the connection's
    address. ``request``: a ``gr.Request`` or the queue's own request."""
    if request is None:
        return None
    headers = getattr(request, "headers", None) or {}
    if hasattr(headers, "getlist"):  # every X-Forwarded-For header, in order
        forwarded = headers.getlist("x-forwarded-for")
    else:  # a request Gradio stored as a plain dict
        forwarded = [headers.get("x-forwarded-for", "")] if hasattr(headers, "get") else []
    host = getattr(getattr(request, "client", None), "host", None)
    return client_address(forwarded, host, TRUSTED_PROXIES)


def serve(demo: gr.Blocks) -> None:
    """Make ``demo`` the one whose queue the checks read when no event is running."""
    SERVED[:] = [demo]


def _queue() -> Any:
    from gradio.context import LocalContext

    blocks = LocalContext.blocks.get(None) or (SERVED[-1] if SERVED else None)
    return getattr(blocks, "_queue", None)


def jobs_in(group: str) -> tuple[list[Any], list[Any]]:
    """(running, waiting) events of concurrency group ``group`` in Gradio's queue, live
    ones only (none when it cannot be read)."""
    queue = _queue()
    if queue is None:
        return [], []
    try:
        waiting = list(queue.event_queue_per_concurrency_id[group].queue)
    except (AttributeError, KeyError):
        waiting = []
    running = [e for job in getattr(queue, "active_jobs", []) or [] if job for e in job]

    def live(events: list[Any]) -> list[Any]:
        return [
            e
            for e in events
            if getattr(e, "concurrency_id", None) == group and getattr(e, "alive", True)
        ]

    return live(running), live(waiting)


def jobs_of(key: str | None, group: str) -> int:
    """Jobs of concurrency group ``group`` from client ``key`` waiting or running (Gradio's
    queue; 0 when it cannot be read)."""
    if key is None:
        return 0
    running, waiting = jobs_in(group)
    return sum(client_key(getattr(e, "request", None)) == key for e in running + waiting)


def listening(request: gr.Request | None) -> bool:
    """Whether the visitor of ``request`` still reads its job's updates: Gradio keeps the
    updates a client has not read yet per session; a page that went away reads none."""
    queue = _queue()
    session = getattr(request, "session_hash", None)
    if queue is None or session is None:
        return True
    try:
        unread = queue.pending_messages_per_session[session].qsize()
    except (AttributeError, KeyError):
        return True
    return unread <= UNREAD_MESSAGES


class Attention:
    """Stops waiting for a client that leaves its updates unread for ``seconds``."""

    def __init__(self, request: gr.Request | None, seconds: float | None = None) -> None:
        import time

        self.request, self.clock = request, time.monotonic
        self.seconds = UNREAD_SECONDS if seconds is None else seconds
        self.since: float | None = None

    def gone(self) -> bool:
        if listening(self.request):
            self.since = None
            return False
        self.since = self.since if self.since is not None else self.clock()
        return self.clock() - self.since > self.seconds
