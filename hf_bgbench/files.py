"""Files and folders: which files are photos, whether an output folder can be written, and
the build report every built or converted dataset folder carries."""

from __future__ import annotations

import os
import tempfile
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
