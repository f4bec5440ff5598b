"""Fetching an official release archive and converting it into the cache, for any benchmark.

:func:`fetch_release` runs one :class:`ReleaseRecipe` (each benchmark's folder writes its
own, e.g. ``hf_bgbench/benchmarks/<name>/download.py``): fetch the archive (resumable,
:mod:`hf_bgbench.hub.fetch`; a finished download of the same URL is reused), record its sha256,
unpack it safely, check the layout, convert it into ``<cache>/datasets/<dirname>`` and write
``source.json``. The converted folder appears only once complete (it is written as
``.<dirname>.partial`` and renamed), so :func:`cached_release` finds a finished dataset or
nothing, and an interrupted conversion is simply redone on the next call.
"""

from __future__ import annotations

import errno
import json
import os
import shlex
import shutil
import sys
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from hf_bgbench.cache import cache_root
from hf_bgbench.files import REPORT_NAME
from hf_bgbench.hub.fetch import (
    ArchiveError,
    DownloadError,
    fetch,
    normalize_sha256,
    sha256_file,
    write_sha256,
)

SOURCE_NAME = "source.json"
SOURCE_FORMAT = "bgbench-download/1"
EVALUATE_MODEL = "tf_efficientnet_lite0"
"""The model the "score a model on it" hint after a download names (bundled, offline)."""


@dataclass(frozen=True)
class ReleaseDownload:
    """Where a converted release is and what it was made from."""

    path: Path  # the Hub-layout folder: load_dataset(str(path), "mixed_rand", split="test")
    sha256: str  # of the archive that was converted
    url: str  # where the archive came from
    archive: Path | None  # the cached archive (None once deleted)
    reused: bool  # True when an earlier finished conversion was returned as it was

    def __fspath__(self) -> str:
        return str(self.path)


def read_source(folder: str | Path) -> dict[str, Any] | None:
    """The ``source.json`` of a downloaded dataset (url, sha256, bytes, dates), or None."""
    path = Path(folder) / SOURCE_NAME
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("format") == SOURCE_FORMAT else None


def normalize_url(url: str) -> str:
    """A bare local path becomes a file:// URL."""
    if urllib.parse.urlparse(url).scheme.lower() in ("http", "https", "file"):
        return url
    path = Path(url).expanduser()
    if path.exists() or not urllib.parse.urlparse(url).scheme:
        return path.resolve().as_uri()
    return url  # an unsupported scheme: fetch() says so


def evaluate_command(folder: str | Path, model: str = EVALUATE_MODEL) -> str:
    """The ``bgbench evaluate`` command that scores ``model`` on a downloaded folder."""
    return f"bgbench evaluate {model} --data {shlex.quote(str(folder))}"


def record_source_json(folder: Path, source: dict[str, Any]) -> None:
    """source.json and the build report's ``source_archive`` of a downloaded release."""
    (folder / SOURCE_NAME).write_text(json.dumps(source, indent=2) + "\n", encoding="utf-8")
    report_path = folder / REPORT_NAME
    if report_path.is_file():
        report = json.loads(report_path.read_text(encoding="utf-8"))
        report["source_archive"] = source
        report_path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


def say(progress: bool, message: str) -> None:
    if progress:
        print(message, file=sys.stderr, flush=True)


def archive_sha256(archive: Path, url: str, expected: str | None, progress: bool) -> str:
    """The sha256 of ``archive``: reuse a finished download of the same URL, else fetch."""
    url_file = archive.with_name(archive.name + ".url")
    same_source = url_file.is_file() and url_file.read_text(encoding="utf-8").strip() == url
    if not same_source:
        for stale in (archive, archive.with_name(archive.name + ".part")):
            stale.unlink(missing_ok=True)
    if archive.is_file():
        say(progress, f"using the archive downloaded earlier: {archive}")
        digest = sha256_file(archive)
        if expected is None or digest == expected:
            write_sha256(archive, digest)
            return digest
        archive.unlink()  # not the file the user asked for: fetch it again
    archive.parent.mkdir(parents=True, exist_ok=True)
    url_file.write_text(url + "\n", encoding="utf-8")
    say(progress, f"downloading {url}")
    return fetch(url, archive, expected_sha256=expected, progress=progress)


@dataclass(frozen=True)
class ReleaseRecipe:
    """How one benchmark's official archive becomes a converted folder in the cache."""

    benchmark: str
    dirname: str  # datasets/<dirname> in the cache
    archive_name: str  # used when the URL's path names no file (or always, with fixed_name)
    unpack: Callable[[Path, Path], Path]  # (archive, dest) -> release root, or ArchiveError
    convert: Callable[[Path, Path, bool, str], None]  # (root, output, progress, sha256)
    record: Callable[[Path, dict[str, Any]], None]  # source.json (+ report, card)
    bad_archive_fix: Callable[[str, Path], str]
    disk_hint: str = ""  # how much space the release needs, for the disk-full error
    fixed_name: bool = False


def release_folder(dirname: str, cache_dir: str | Path | None = None) -> Path:
    """``<cache root>/datasets/<dirname>``: where a converted release lives (or will)."""
    root = Path(cache_dir).expanduser() if cache_dir else cache_root()
    return root.absolute() / "datasets" / dirname


def cached_release(dirname: str, cache_dir: str | Path | None = None) -> Path | None:
    """The converted release folder ``datasets/<dirname>`` if a finished download is
    cached (card and ``source.json`` written), else None."""
    folder = release_folder(dirname, cache_dir)
    complete = (folder / "README.md").is_file() and read_source(folder) is not None
    return folder if complete else None


def fetch_release(
    recipe: ReleaseRecipe,
    url: str,
    cache_dir: str | Path | None,
    *,
    sha256: str | None,
    progress: bool,
    force: bool,
    keep_archive: bool,
) -> ReleaseDownload:
    """Download (resumable), verify, unpack and convert an official release; returns where
    it is. A finished conversion in the cache is returned at once (unless ``force``, or
    ``sha256`` names a different archive). ``sha256`` (64 hex digits) is checked when given;
    the sha256 of what was downloaded is always written next to the archive and recorded
    (``recipe.record``), and returned."""
    expected = normalize_sha256(sha256)
    url = normalize_url(url)
    folder = release_folder(recipe.dirname, cache_dir)
    known = read_source(folder) if cached_release(recipe.dirname, cache_dir) else None
    if known and not force and expected in (None, known.get("sha256")):
        archive = folder.parent.parent / "downloads" / str(known.get("archive", ""))
        return ReleaseDownload(folder, known["sha256"], known["url"], existing(archive), True)

    name = "" if recipe.fixed_name else Path(urllib.parse.urlparse(url).path).name
    archive = folder.parent.parent / "downloads" / (name or recipe.archive_name)
    digest = archive_sha256(archive, url, expected, progress)
    downloaded_at = datetime.fromtimestamp(archive.stat().st_mtime, timezone.utc)
    source = {
        "format": SOURCE_FORMAT,
        "benchmark": recipe.benchmark,
        "url": url,
        "archive": archive.name,
        "bytes": archive.stat().st_size,
        "sha256": digest,
        "sha256_verified": expected is not None,
        "downloaded_at": downloaded_at.isoformat(timespec="seconds"),
    }
    extracted = archive.with_name(archive.name + ".extracted")
    partial = folder.with_name(f".{folder.name}.partial")
    try:
        for stale in (extracted, partial):
            shutil.rmtree(stale, ignore_errors=True)  # left by an interrupted run
        say(progress, f"unpacking {archive}")
        try:
            root = recipe.unpack(archive, extracted)
        except ArchiveError as err:
            for path in (archive, archive.with_name(archive.name + ".url")):
                path.unlink(missing_ok=True)
            fix = recipe.bad_archive_fix(url, archive)
            raise ArchiveError(f"{err} (downloaded from {url}) {fix}") from None
        say(progress, f"converting to the Hub layout in {folder}")
        try:
            recipe.convert(root, partial, progress, digest)
        except ValueError as err:  # the converter's layout errors
            raise ArchiveError(
                f"the release in {archive} (from {url}) could not be converted: {err} The "
                "archive is kept; if it is the official one, please report this."
            ) from None
        source["converted_at"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
        recipe.record(partial, source)
        replace_folder(partial, folder)
    except OSError as err:
        if err.errno in (errno.ENOSPC, errno.EDQUOT) or "No space left" in str(err):
            raise DownloadError(
                f"disk full while unpacking/converting in {folder.parent.parent}: {err}. "
                f"{recipe.disk_hint}free some space or pass --cache-dir DIR on a bigger disk."
            ) from None
        raise
    finally:
        shutil.rmtree(extracted, ignore_errors=True)
        shutil.rmtree(partial, ignore_errors=True)
    if not keep_archive:
        archive.unlink(missing_ok=True)
    return ReleaseDownload(folder, digest, url, existing(archive), False)


def existing(path: Path) -> Path | None:
    return path if path.is_file() else None


def replace_folder(new: Path, target: Path) -> None:
    """Put ``new`` at ``target``; an older ``target`` is moved aside, then deleted."""
    old = target.with_name(f".{target.name}.old")
    shutil.rmtree(old, ignore_errors=True)
    if target.exists():
        os.replace(target, old)
    os.replace(new, target)
    shutil.rmtree(old, ignore_errors=True)
