"""``bgbench download rival10``: the authors' RIVAL10 release, converted for scoring.

Same steps as ``bgbench download in9`` (:mod:`hf_bgbench.download`): fetch the archive
(resumable, :mod:`hf_bgbench.fetch`), record its sha256 (the authors publish none), unpack
it safely (:func:`safe_unzip`: no absolute paths, no ``..``, no links), check the layout
and convert it (:func:`hf_bgbench.builders.rival10.convert_rival10_release`) into a
Hub-layout folder in the cache::

    downloads/rival10.zip                       # the archive (+ .sha256, .url)
    datasets/rival10-release/                   # README.md, data/, build_report.json, source.json

RIVAL10's licence allows non-commercial research use and forbids redistribution: the
download stays on this machine (publish a copy only private or gated; see the card).
"""

from __future__ import annotations

import errno
import shutil
import stat
import zipfile
import zlib
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath, PureWindowsPath

from hf_bgbench.download import (
    SOURCE_FORMAT,
    ReleaseDownload,
    _archive_sha256,
    _existing,
    _normalize_url,
    _replace_folder,
    _say,
    default_cache_root,
    evaluate_command,
    read_source,
    record_source_json,
)
from hf_bgbench.fetch import ArchiveError, DownloadError, by_hand_hint, normalize_sha256

DEFAULT_RIVAL10_URL = (
    "https://app.box.com/index.php?rm=box_download_shared_file"
    "&shared_name=iflviwl5rbdgtur1rru3t8f7v2vp0gww&file_id=f_944375052992"
)
ARCHIVE_NAME = "rival10.zip"
DATASET_DIRNAME = "rival10-release"
SKIPPED_PREFIXES = ("__MACOSX/",)  # macOS resource forks some zips carry


def rival10_release_folder(cache_dir: str | Path | None = None) -> Path:
    """Where the converted release lives (whether or not it is there yet)."""
    root = Path(cache_dir).expanduser() if cache_dir else default_cache_root()
    return root.absolute() / "datasets" / DATASET_DIRNAME


def cached_rival10_release(cache_dir: str | Path | None = None) -> Path | None:
    """The converted release folder if a finished download is cached, else None."""
    folder = rival10_release_folder(cache_dir)
    complete = (folder / "README.md").is_file() and read_source(folder) is not None
    return folder if complete else None


def _unsafe(info: zipfile.ZipInfo) -> str | None:
    """Why a zip member must not be extracted (None if it is safe)."""
    name = info.filename
    if name.startswith(("/", "\\")) or PureWindowsPath(name).drive:
        return "absolute path"
    if ".." in PurePosixPath(name.replace("\\", "/")).parts:
        return "path leaves the folder ('..')"
    if stat.S_ISLNK(info.external_attr >> 16):
        return "symbolic link"
    return None


def safe_unzip(archive: str | Path, dest: str | Path) -> None:
    """Unpack the zip ``archive`` into ``dest``, refusing absolute paths, ``..`` and links
    (checked for every member before anything is written)."""
    archive, dest = Path(archive), Path(dest)
    try:
        with zipfile.ZipFile(archive) as zf:
            members = [m for m in zf.infolist() if not m.filename.startswith(SKIPPED_PREFIXES)]
            for member in members:
                why = _unsafe(member)
                if why:
                    raise ArchiveError(
                        f"{archive} holds an unsafe member {member.filename!r} ({why}); "
                        "refusing to extract it: this is not the archive it claims to be."
                    )
            dest.mkdir(parents=True, exist_ok=True)
            for member in members:
                target = dest / member.filename.replace("\\", "/")
                if member.is_dir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(member) as src, open(target, "wb") as out:
                    shutil.copyfileobj(src, out, 1 << 20)
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as err:
        raise ArchiveError(
            f"{archive} is not a complete zip archive ({type(err).__name__}: {err}): a "
            "corrupted download, or a file or web page (e.g. a sign-in page) that is not "
            "the archive."
        ) from None


def download_rival10(
    url: str = DEFAULT_RIVAL10_URL,
    cache_dir: str | Path | None = None,
    *,
    sha256: str | None = None,
    progress: bool = True,
    force: bool = False,
    keep_archive: bool = True,
    workers: int = 1,
) -> ReleaseDownload:
    """Download, verify, unpack and convert the RIVAL10 release; returns where it is.

    A finished conversion in the cache is returned at once (unless ``force``, or ``sha256``
    names a different archive). The sha256 of what was downloaded is always recorded (next
    to the archive, in ``source.json``, ``build_report.json`` and the card) and returned.
    """
    from hf_bgbench.builders.rival10 import convert_rival10_release
    from hf_bgbench.data.rival10_release import find_rival10_root

    expected = normalize_sha256(sha256)
    url = _normalize_url(url)
    folder = rival10_release_folder(cache_dir)
    known = read_source(folder) if cached_rival10_release(cache_dir) else None
    if known and not force and expected in (None, known.get("sha256")):
        archive = folder.parent.parent / "downloads" / str(known.get("archive", ""))
        return ReleaseDownload(folder, known["sha256"], known["url"], _existing(archive), True)

    archive = folder.parent.parent / "downloads" / ARCHIVE_NAME
    digest = _archive_sha256(archive, url, expected, progress)
    source = {
        "format": SOURCE_FORMAT,
        "benchmark": "rival10",
        "url": url,
        "archive": archive.name,
        "bytes": archive.stat().st_size,
        "sha256": digest,
        "sha256_verified": expected is not None,
        "downloaded_at": datetime.fromtimestamp(archive.stat().st_mtime, timezone.utc).isoformat(
            timespec="seconds"
        ),
    }
    extracted = archive.with_name(archive.name + ".extracted")
    partial = folder.with_name(f".{folder.name}.partial")
    try:
        for stale in (extracted, partial):
            shutil.rmtree(stale, ignore_errors=True)  # left by an interrupted run
        _say(progress, f"unpacking {archive}")
        try:
            safe_unzip(archive, extracted)
            root = find_rival10_root(extracted)
        except (ArchiveError, ValueError) as err:
            for path in (archive, archive.with_name(archive.name + ".url")):
                path.unlink(missing_ok=True)
            raise ArchiveError(
                f"{err} (downloaded from {url}). The cached copy {archive} was deleted: run "
                f"the same command again to download it afresh, or {by_hand_hint(url)}."
            ) from None
        _say(progress, f"converting to the Hub layout in {folder}")
        convert_rival10_release(
            root, partial, workers=workers, progress=progress, source_sha256=digest
        )
        source["converted_at"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
        record_source_json(partial, source)
        _replace_folder(partial, folder)
    except OSError as err:
        if err.errno in (errno.ENOSPC, errno.EDQUOT) or "No space left" in str(err):
            raise DownloadError(
                f"disk full while unpacking/converting in {folder.parent.parent}: {err}. Free "
                "some space or pass --cache-dir DIR on a bigger disk."
            ) from None
        raise
    finally:
        shutil.rmtree(extracted, ignore_errors=True)
        shutil.rmtree(partial, ignore_errors=True)
    if not keep_archive:
        archive.unlink(missing_ok=True)
    return ReleaseDownload(folder, digest, url, _existing(archive), False)


def describe_rival10(result: ReleaseDownload) -> str:
    """What the CLI prints: where the dataset is, its checksum, and how to score it."""
    state = "already downloaded" if result.reused else "ready"
    return "\n".join(
        [
            f"RIVAL10 (official release) is {state}: {result.path}",
            f"  archive sha256: {result.sha256}"
            + (f"  ({result.archive})" if result.archive else "  (archive deleted)"),
            "  licence: non-commercial research only, no redistribution (see its README.md)",
            "Score a model on it:",
            f"  {evaluate_command(result.path)} --benchmark rival10",
        ]
    )
