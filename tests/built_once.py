"""Test data built once per test process and copied to each caller.

The synthetic datasets (tests/in9_fixture.py, tests/rival10_fixture.py) are deterministic, so
a second build would write the same bytes: the builders write one master copy into a folder
of this process (removed at exit) and give each caller a plain copy of it. A caller owns its
copy and may change it; the master copy is never handed out.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

_MASTERS = Path(tempfile.mkdtemp(prefix="bgbench-test-data-"))
atexit.register(shutil.rmtree, _MASTERS, True)


def built_folder(prefix: str) -> Path:
    """A new, empty folder for one master copy."""
    return Path(tempfile.mkdtemp(prefix=prefix, dir=_MASTERS))


def copy_built(master: Path, root: Path) -> Path:
    """Copy the master folder ``master`` into ``root`` (created if needed); returns ``root``.

    Files are copied without their timestamps (``shutil.copy``), as a fresh build writes them.
    """
    shutil.copytree(master, root, copy_function=shutil.copy, dirs_exist_ok=True)
    return root
