"""Where bgbench keeps what it can reuse: one cache root for every kind of cached data.

``$HF_BGBENCH_CACHE``, else ``$XDG_CACHE_HOME/hf_bgbench``, else ``~/.cache/hf_bgbench``;
predictions live in ``<root>/predictions``, downloaded datasets in ``<root>/datasets``.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    """The cache root (see the module docstring)."""
    if os.environ.get("HF_BGBENCH_CACHE"):
        return Path(os.environ["HF_BGBENCH_CACHE"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base).expanduser() / "hf_bgbench"
