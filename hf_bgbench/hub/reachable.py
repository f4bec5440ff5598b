"""Whether the Hugging Face Hub can be reached, asked once per process before the first Hub
request of a model or dataset id.

Where it cannot (no DNS, no route, a refused port, no answer within
:data:`PROBE_SECONDS`), huggingface_hub -- and through it transformers and datasets -- is
switched to offline mode, which reads only the local Hugging Face cache, and the user is
told once. Without this, every request failed after its own retries: 24 requests and 51 s
before an unknown model id was refused on a machine without a network."""

from __future__ import annotations

import logging
import os
import socket
from urllib.parse import urlparse

log = logging.getLogger(__name__)

PROBE_SECONDS = 3.0
_reachable: bool | None = None  # asked once per process


def hub_offline() -> bool:
    """Whether Hub requests are off: ``HF_HUB_OFFLINE`` set, or the Hub found unreachable."""
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE)


def check_hub() -> None:
    """Ask, once per process, whether the Hub answers; where it does not, offline mode is
    switched on and said once. Nothing is asked in offline mode (``HF_HUB_OFFLINE``)."""
    global _reachable
    if _reachable is not None or hub_offline():
        return
    from huggingface_hub import constants

    url = urlparse(constants.ENDPOINT)
    host, port = url.hostname or "huggingface.co", url.port or (443 if url.scheme != "http" else 80)
    try:
        socket.create_connection((host, port), timeout=PROBE_SECONDS).close()
        _reachable = True
    except OSError as err:
        _reachable = False
        go_offline(f"{host}:{port}: {err}")


def go_offline(why: str) -> None:
    """Offline mode for the rest of the process, said once: only the local cache is read."""
    from huggingface_hub import constants

    os.environ["HF_HUB_OFFLINE"] = "1"
    constants.HF_HUB_OFFLINE = True
    try:
        import datasets.config

        datasets.config.HF_HUB_OFFLINE = True
    except ImportError:
        pass
    log.warning(
        "the Hugging Face Hub cannot be reached (%s); working offline: only the local Hugging "
        "Face cache is read (set HF_HUB_OFFLINE=1 to skip this check)",
        why,
    )
