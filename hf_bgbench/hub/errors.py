"""The one answer to "does this error mean the Hugging Face Hub cannot be reached?".

Model loading, publishing and the data readers all meet the same errors from the same client
stack (huggingface_hub over httpx/httpx2 or requests; datasets and transformers wrap them in
``ConnectionError`` / ``OSError``), so they share :func:`is_hub_unreachable` and raise the one
:class:`HubUnreachableError`.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator

HTTP_CLIENT_MODULES = ("httpx", "httpx2", "httpcore", "httpcore2", "requests", "urllib3")
"""Packages whose own exceptions (other than HTTP status errors) are transport failures: no
DNS, no route, refused connection, timeout. Matched by module name because the HTTP stack under
huggingface_hub changes between versions."""

UNAVAILABLE_STATUSES = (502, 503, 504)
"""HTTP statuses that mean the Hub is there but cannot serve: bad gateway, unavailable,
gateway timeout."""

_OFFLINE_PHRASES = (
    "couldn't connect",
    "could not connect",
    "couldn't reach",
    "offline mode",
    "cannot find the requested files in the local cache",
    "cannot find the requested files in the disk cache",
)
"""What transformers and datasets say when they wrap a network failure in a plain OSError."""


class HubUnreachableError(ConnectionError, ValueError):
    """The Hugging Face Hub cannot be reached (network, ``HF_HUB_OFFLINE``) or refuses the
    credentials. The message says what to do.

    A ``ConnectionError`` (so an ``OSError``) for code that catches network failures, and a
    ``ValueError`` like every other error of this package that is written for a person.
    """


def error_chain(err: BaseException | None) -> Iterator[BaseException]:
    """``err``, then its ``__cause__`` (or ``__context__``), and so on; each error once."""
    seen: set[int] = set()
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        yield err
        err = err.__cause__ or err.__context__


def http_status(err: BaseException) -> int | None:
    """The HTTP status code carried by ``err`` (``err.response.status_code``), if any."""
    status = getattr(getattr(err, "response", None), "status_code", None)
    return status if isinstance(status, int) else None


def _hub_offline_types() -> tuple[type[BaseException], ...]:
    try:
        from huggingface_hub.errors import LocalEntryNotFoundError, OfflineModeIsEnabled
    except ImportError:  # pragma: no cover - older huggingface_hub
        from huggingface_hub.utils import LocalEntryNotFoundError, OfflineModeIsEnabled
    return (HubUnreachableError, LocalEntryNotFoundError, OfflineModeIsEnabled)


def _means_unreachable(err: BaseException) -> bool:
    if isinstance(err, (ConnectionError, TimeoutError, socket.gaierror)):
        return True
    if isinstance(err, _hub_offline_types()):
        return True
    status = http_status(err)
    if status in UNAVAILABLE_STATUSES:
        return True
    if status is None and type(err).__module__.split(".")[0] in HTTP_CLIENT_MODULES:
        return True
    if isinstance(err, OSError):
        message = str(err).lower()
        return any(phrase in message for phrase in _OFFLINE_PHRASES)
    return False


def is_hub_unreachable(err: BaseException) -> bool:
    """True when ``err``, or any error in its cause/context chain, means the Hub cannot be
    reached: offline mode (``HF_HUB_OFFLINE``), a file neither downloadable nor cached, a
    connection, DNS or timeout failure of the HTTP client, or a 502/503/504 answer.

    False for answers from a reachable Hub (repository not found, gated, 401/403) and for
    errors of our own code, so that a bug is never disguised as a network problem.
    """
    return any(_means_unreachable(e) for e in error_chain(err))
