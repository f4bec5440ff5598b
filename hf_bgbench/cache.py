"""Where bgbench keeps what it can reuse: one cache root for every kind of cached data.

``$HF_BGBENCH_CACHE``, else ``$XDG_CACHE_HOME/hf_bgbench``, else ``~/.cache/hf_bgbench``;
predictions live in ``<root>/predictions``, downloaded datasets in ``<root>/datasets``.
Every cache that holds data a number is computed from keeps a digest beside it, checked when
it is read (:func:`intact`): a damaged cache is made again, never read as data.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


def cache_root() -> Path:
    """The cache root (see the module docstring)."""
    if os.environ.get("HF_BGBENCH_CACHE"):
        return Path(os.environ["HF_BGBENCH_CACHE"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base).expanduser() / "hf_bgbench"


def file_sha256(path: str | Path, chunk: int = 16 << 20) -> str:
    """The sha256 of a file's bytes, read in chunks (about 2 GB/s here)."""
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def intact(what: str, path: str | Path, written: str | None, actual: Callable[[], str]) -> bool:
    """Whether the cached ``what`` at ``path`` is what was written: its digest ``actual()``
    equals the digest ``written`` beside it. A cache damaged on disk (same size, other
    bytes) would otherwise be read as data; a mismatch, or no digest (an older cache), is
    said as a warning naming the cache and its path, and the caller makes it again."""
    if written is not None and actual() == written:
        return True
    why = "its digest does not match" if written is not None else "it has no digest"
    log.warning("%s at %s is damaged or from an older bgbench (%s): made again", what, path, why)
    return False


def write_parquet_part(frame: Any, path: str | Path) -> None:
    """``frame`` as a Parquet cache part at ``path``, every page with a checksum, written
    under a temporary name and renamed (a part is complete or absent)."""
    tmp = Path(path).with_suffix(".tmp")
    frame.to_parquet(tmp, index=False, write_page_checksum=True)
    os.replace(tmp, path)


def read_parquet_part(what: str, path: str | Path) -> Any:
    """A Parquet cache part's rows (a DataFrame), its pages checked against their
    checksums; a torn or damaged part is said, removed, and None returned (its rows are
    computed again)."""
    import pyarrow.parquet as pq

    try:
        return pq.read_table(path, page_checksum_verification=True).to_pandas()
    except Exception as e:  # never read as data
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        log.warning("%s part %s is damaged (%s): removed; computed again", what, path, first)
        Path(path).unlink(missing_ok=True)
        return None
