"""``bgbench download in9``: the official Backgrounds Challenge release, ready to score.

Until ``bgbench/in9`` is on the Hub, a newcomer needs the authors' archive. This module
fetches it (resumable, see :mod:`hf_bgbench.fetch`), records its sha256 (the authors publish
none), unpacks it safely, checks the release layout, and converts it with the release
converter (:func:`hf_bgbench.builders.convert.convert_in9_release`) into a Hub-layout folder
in the cache. Cache layout, under ``$HF_BGBENCH_CACHE`` or ``~/.cache/hf_bgbench``::

    downloads/backgrounds_challenge_data.tar.gz           # the archive (+ .sha256, .url)
    datasets/in9-release/                                 # README.md, data/, source.json

The converted folder appears only once complete (it is written as ``.in9-release.partial``
and renamed), so :func:`cached_in9_release` either finds a finished dataset or nothing, and
an interrupted conversion is simply redone on the next call.
"""

from __future__ import annotations

import errno
import json
import os
import shlex
import shutil
import sys
import urllib.parse
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from hf_bgbench.cache import cache_root
from hf_bgbench.fetch import (
    ArchiveError,
    ChecksumError,
    DownloadError,
    by_hand_hint,
    fetch,
    normalize_sha256,
    safe_extract,
    sha256_file,
    write_sha256,
)

DEFAULT_IN9_URL = (
    "https://github.com/MadryLab/backgrounds_challenge/releases/download/data/"
    "backgrounds_challenge_data.tar.gz"
)
RELEASE_PAGE = "https://github.com/MadryLab/backgrounds_challenge"
# The authors publish no checksum, so none is pinned; pass ``sha256=`` to verify a known one.
IN9_SHA256: str | None = None
DATASET_DIRNAME = "in9-release"
SOURCE_NAME = "source.json"
SOURCE_FORMAT = "bgbench-download/1"
RELEASE_TOP = "bg_challenge"
RELEASE_SPLIT = "val"
MASK_DIRNAME = "fg_mask"
IMAGE_SUFFIXES = (".jpeg", ".jpg", ".png")
EVALUATE_MODEL = "tf_efficientnet_lite0"

__all__ = [
    "ArchiveError",
    "ChecksumError",
    "DEFAULT_IN9_URL",
    "DownloadError",
    "In9Download",
    "ReleaseDownload",
    "cached_in9_release",
    "default_cache_root",
    "download_in9",
    "evaluate_command",
    "in9_release_folder",
    "read_source",
]


@dataclass(frozen=True)
class ReleaseDownload:
    """Where a converted release is and what it was made from (IN-9, RIVAL10)."""

    path: Path  # the Hub-layout folder: load_dataset(str(path), "mixed_rand", split="test")
    sha256: str  # of the archive that was converted
    url: str  # where the archive came from
    archive: Path | None  # the cached archive (None once deleted)
    reused: bool  # True when an earlier finished conversion was returned as it was

    def __fspath__(self) -> str:
        return str(self.path)


In9Download = ReleaseDownload


def default_cache_root() -> Path:
    """``$HF_BGBENCH_CACHE``, else ``$XDG_CACHE_HOME/hf_bgbench``, else ``~/.cache/hf_bgbench``."""
    return cache_root()


def in9_release_folder(cache_dir: str | Path | None = None) -> Path:
    """Where the converted release lives (whether or not it is there yet)."""
    root = Path(cache_dir).expanduser() if cache_dir else default_cache_root()
    return root.absolute() / "datasets" / DATASET_DIRNAME


def read_source(folder: str | Path) -> dict[str, Any] | None:
    """The ``source.json`` of a downloaded dataset (url, sha256, bytes, dates), or None."""
    path = Path(folder) / SOURCE_NAME
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("format") == SOURCE_FORMAT else None


def cached_in9_release(cache_dir: str | Path | None = None) -> Path | None:
    """The converted release folder if a finished download is cached, else None.

    For callers that fall back to it when ``bgbench/in9`` cannot be had from the Hub; use
    :func:`read_source` for the archive's sha256.
    """
    folder = in9_release_folder(cache_dir)
    complete = (folder / "README.md").is_file() and read_source(folder) is not None
    return folder if complete else None


def evaluate_command(folder: str | Path, model: str = EVALUATE_MODEL) -> str:
    return f"bgbench evaluate {model} --data {shlex.quote(str(folder))}"


def _normalize_url(url: str) -> str:
    """A bare local path becomes a file:// URL."""
    if urllib.parse.urlparse(url).scheme.lower() in ("http", "https", "file"):
        return url
    path = Path(url).expanduser()
    if path.exists() or not urllib.parse.urlparse(url).scheme:
        return path.resolve().as_uri()
    return url  # an unsupported scheme: fetch() says so


def check_release_tree(top: Path, archive: Path) -> Path:
    """The ``bg_challenge`` folder under ``top``, or an ArchiveError naming what is missing."""
    from hf_bgbench.benchmarks.in9 import IN9_VARIANTS

    root = top / RELEASE_TOP
    if not root.is_dir():
        found = sorted(p.name for p in top.iterdir())[:5]
        raise ArchiveError(
            f"{archive} has no top folder '{RELEASE_TOP}/' (it holds {found or 'nothing'}): "
            "it is not the Backgrounds Challenge release."
        )

    def has(dirname: str, suffixes: tuple[str, ...]) -> bool:
        folder = root / dirname / RELEASE_SPLIT
        return folder.is_dir() and any(
            p.suffix.lower() in suffixes
            for c in folder.iterdir()
            if c.is_dir()
            for p in c.iterdir()
        )

    missing = [
        f"{RELEASE_TOP}/{v}/{RELEASE_SPLIT}/" for v in IN9_VARIANTS if not has(v, IMAGE_SUFFIXES)
    ]
    if not has(MASK_DIRNAME, (".npy",)):
        missing.append(f"{RELEASE_TOP}/{MASK_DIRNAME}/{RELEASE_SPLIT}/")
    if missing:
        raise ArchiveError(
            f"{archive} is incomplete: missing (or empty) {', '.join(missing)}. The release "
            f"holds {RELEASE_TOP}/<variant>/{RELEASE_SPLIT}/<class-dir>/*.JPEG for "
            f"{', '.join(IN9_VARIANTS)} and {RELEASE_TOP}/{MASK_DIRNAME}/{RELEASE_SPLIT}/"
            "<class-dir>/*.npy."
        )
    return root


def record_source_json(folder: Path, source: dict[str, Any]) -> None:
    """source.json and the build report's ``source_archive`` of a downloaded release."""
    from hf_bgbench.builders.in9 import REPORT_NAME

    (folder / SOURCE_NAME).write_text(json.dumps(source, indent=2) + "\n", encoding="utf-8")
    report_path = folder / REPORT_NAME
    if report_path.is_file():
        report = json.loads(report_path.read_text(encoding="utf-8"))
        report["source_archive"] = source
        report_path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


def _record_source(folder: Path, source: dict[str, Any]) -> None:
    """source.json, the build report's ``source_archive`` and a card section."""
    record_source_json(folder, source)
    card = folder / "README.md"
    section = (
        "## Source archive\n\n"
        f"Downloaded by `bgbench download in9` from <{source['url']}> "
        f"({source['downloaded_at']}): `{source['archive']}`, {source['bytes']:,} bytes, "
        f"sha256 `{source['sha256']}`. The authors publish no checksum; compare this value "
        "with other copies to be sure two results were computed on the same data.\n\n"
    )
    text = card.read_text(encoding="utf-8")
    at = text.find("\n## Counts")
    text = text[: at + 1] + section + text[at + 1 :] if at >= 0 else text + "\n" + section
    card.write_text(text, encoding="utf-8")


def _say(progress: bool, message: str) -> None:
    if progress:
        print(message, file=sys.stderr, flush=True)


def _archive_sha256(archive: Path, url: str, expected: str | None, progress: bool) -> str:
    """The sha256 of ``archive``: reuse a finished download of the same URL, else fetch."""
    url_file = archive.with_name(archive.name + ".url")
    same_source = url_file.is_file() and url_file.read_text(encoding="utf-8").strip() == url
    if not same_source:
        for stale in (archive, archive.with_name(archive.name + ".part")):
            stale.unlink(missing_ok=True)
    if archive.is_file():
        _say(progress, f"using the archive downloaded earlier: {archive}")
        digest = sha256_file(archive)
        if expected is None or digest == expected:
            write_sha256(archive, digest)
            return digest
        archive.unlink()  # not the file the user asked for: fetch it again
    archive.parent.mkdir(parents=True, exist_ok=True)
    url_file.write_text(url + "\n", encoding="utf-8")
    _say(progress, f"downloading {url}")
    return fetch(url, archive, expected_sha256=expected, progress=progress)


def download_in9(
    url: str = DEFAULT_IN9_URL,
    cache_dir: str | Path | None = None,
    *,
    sha256: str | None = IN9_SHA256,
    progress: bool = True,
    force: bool = False,
    keep_archive: bool = True,
) -> ReleaseDownload:
    """Download, verify, unpack and convert the official release; returns where it is.

    A finished conversion in the cache is returned at once (unless ``force``, or ``sha256``
    names a different archive). ``sha256`` (64 hex digits) is checked when given; the sha256
    of what was downloaded is always written next to the archive, into the dataset's
    ``source.json``, ``build_report.json`` and card, and returned.
    """
    expected = normalize_sha256(sha256)
    url = _normalize_url(url)
    folder = in9_release_folder(cache_dir)
    known = read_source(folder) if cached_in9_release(cache_dir) else None
    if known and not force and expected in (None, known.get("sha256")):
        archive = folder.parent.parent / "downloads" / str(known.get("archive", ""))
        return ReleaseDownload(folder, known["sha256"], known["url"], _existing(archive), True)

    name = Path(urllib.parse.urlparse(url).path).name or "backgrounds_challenge_data.tar.gz"
    archive = folder.parent.parent / "downloads" / name
    digest = _archive_sha256(archive, url, expected, progress)
    downloaded_at = datetime.fromtimestamp(archive.stat().st_mtime, timezone.utc)
    source = {
        "format": SOURCE_FORMAT,
        "benchmark": "in9",
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
        _say(progress, f"unpacking {archive}")
        try:
            safe_extract(archive, extracted)
            root = check_release_tree(extracted, archive)
        except ArchiveError as err:
            for path in (archive, archive.with_name(archive.name + ".url")):
                path.unlink(missing_ok=True)
            fix = _bad_archive_fix(url, archive)
            raise ArchiveError(f"{err} (downloaded from {url}) {fix}") from None
        _say(progress, f"converting to the Hub layout in {folder}")
        try:
            _convert(root, partial, progress)
        except ValueError as err:  # the converter's layout errors
            raise ArchiveError(
                f"the release in {archive} (from {url}) could not be converted: {err} The "
                "archive is kept; if it is the official one, please report this."
            ) from None
        source["converted_at"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
        _record_source(partial, source)
        _replace_folder(partial, folder)
    except OSError as err:
        if err.errno in (errno.ENOSPC, errno.EDQUOT) or "No space left" in str(err):
            raise DownloadError(
                f"disk full while unpacking/converting in {folder.parent.parent}: {err}. The "
                "release needs about 3 GB there (archive, unpacked files, Parquet); free some "
                "space or pass --cache-dir DIR on a bigger disk."
            ) from None
        raise
    finally:
        shutil.rmtree(extracted, ignore_errors=True)
        shutil.rmtree(partial, ignore_errors=True)
    if not keep_archive:
        archive.unlink(missing_ok=True)
    return ReleaseDownload(folder, digest, url, _existing(archive), False)


def _convert(root: Path, output: Path, progress: bool) -> None:
    """The release converter, with the datasets progress bars off when ``progress`` is."""
    import datasets

    from hf_bgbench.builders.convert import convert_in9_release

    quiet = not progress and not datasets.are_progress_bars_disabled()
    if quiet:
        datasets.disable_progress_bars()
    try:
        convert_in9_release(root, output)
    finally:
        if quiet:
            datasets.enable_progress_bars()


def _bad_archive_fix(url: str, archive: Path) -> str:
    if urllib.parse.urlparse(url).scheme == "file":
        return (
            f"The cached copy {archive} was deleted. Pass the official archive "
            f"({DEFAULT_IN9_URL}) with --url."
        )
    return (
        f"The cached copy {archive} was deleted: run the same command again to download it "
        f"afresh, or {by_hand_hint(url)}."
    )


def _existing(path: Path) -> Path | None:
    return path if path.is_file() else None


def _replace_folder(new: Path, target: Path) -> None:
    """Put ``new`` at ``target``; an older ``target`` is moved aside, then deleted."""
    old = target.with_name(f".{target.name}.old")
    shutil.rmtree(old, ignore_errors=True)
    if target.exists():
        os.replace(target, old)
    os.replace(new, target)
    shutil.rmtree(old, ignore_errors=True)


def describe(result: ReleaseDownload) -> str:
    """What the CLI prints: where the dataset is, its checksum, and how to score it."""
    state = "already downloaded" if result.reused else "ready"
    lines = [
        f"IN-9 (official Backgrounds Challenge release) is {state}: {result.path}",
        f"  archive sha256: {result.sha256}"
        + (f"  ({result.archive})" if result.archive else "  (archive deleted)"),
        "Score a model on it:",
        f"  {evaluate_command(result.path)}",
    ]
    return "\n".join(lines)


def unreachable_hint(url: str = DEFAULT_IN9_URL) -> str:
    """The fix to print when the IN-9 data cannot be had from the Hub."""
    return (
        "run `bgbench download in9` to fetch and convert the official release (or download "
        f"{url} by hand and run `bgbench download in9 --url file:///path/to/archive.tar.gz`)"
    )
