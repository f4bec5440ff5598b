"""Files and folders: which files are photos, whether an output folder can be written, and
the build report every built or converted dataset folder carries."""

from __future__ import annotations

import json
import os
import socket
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

IMAGE_SUFFIXES = frozenset({".jpeg", ".jpg", ".png", ".bmp", ".webp"})
"""File suffixes read as photos (compared lower-case), everywhere in the package."""

REPORT_NAME = "build_report.json"
"""The report a build, conversion or download writes beside the data (what it was made from,
counts, skipped rows); read by ``bgbench validate`` and the cards."""


class OutputFolderError(OSError):
    """An output folder cannot be created or written; the message names the option."""


def is_image_file(path: Path) -> bool:
    """True for an existing file whose suffix is one of :data:`IMAGE_SUFFIXES`."""
    return path.suffix.lower() in IMAGE_SUFFIXES and path.is_file()


def ensure_writable_dir(path: str | Path, flag: str) -> bool:
    """Create ``path`` if needed and check that files can be written in it, before any work.

    ``flag`` names the option or argument that chose the folder (``--output``), so the error
    says what to change. Returns True when the folder was created here.
    """
    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise OutputFolderError(
            f"Cannot write to {flag} {folder}: it exists and is not a folder. Give {flag} a "
            "folder (new or existing)."
        )
    created = not folder.exists()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".bgbench-write-check-", dir=folder)
        os.close(fd)
        os.unlink(probe)
    except OSError as err:
        raise OutputFolderError(
            f"Cannot write to {flag} {folder} ({err.strerror or err}). Give {flag} a folder "
            "you can write to."
        ) from None
    return created


LOCK_NAME = ".bgbench-run.lock"
"""The file that holds an output folder for one run (:func:`output_lock`)."""


class OutputFolderBusy(OutputFolderError):
    """Another run is writing to the same output folder."""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


@contextmanager
def output_lock(folder: str | Path, flag: str = "--output") -> Iterator[Path]:
    """Hold ``folder`` for one run: a second run into it gets a clear error instead of both
    writing files there (a results folder always holds one run). The lock is a file created
    with O_EXCL holding the pid, host and start time; one left by a run that died (its pid
    is gone on this host) is taken over."""
    path = Path(folder) / LOCK_NAME
    host = socket.gethostname()
    for _ in range(2):
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            try:
                holder = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                holder = {}
            pid, there = holder.get("pid"), holder.get("host")
            if isinstance(pid, int) and there == host and not _alive(pid):
                path.unlink(missing_ok=True)  # its run died without releasing it
                continue
            raise OutputFolderBusy(
                f"Another bgbench run (pid {pid}, host {there}, started {holder.get('started')})"
                f" is writing to {flag} {folder}. Wait for it to finish or give {flag} another "
                f"folder; if no run is using it, delete {path}."
            ) from None
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            started = datetime.now(timezone.utc).isoformat(timespec="seconds")
            json.dump({"pid": os.getpid(), "host": host, "started": started}, out)
        break
    try:
        yield path
    finally:
        path.unlink(missing_ok=True)
