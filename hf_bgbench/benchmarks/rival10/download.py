"""``bgbench download rival10``: the authors' RIVAL10 release, converted for scoring.

Same steps as ``bgbench download in9`` (:mod:`hf_bgbench.benchmarks.in9.download`): fetch the
archive
(resumable, :mod:`hf_bgbench.hub.fetch`), record its sha256 (the authors publish none), unpack
it safely (:func:`safe_unzip`: no absolute paths, no ``..``, no links), check the layout
and convert it (:func:`hf_bgbench.benchmarks.rival10.convert.convert_rival10_release`) into a
Hub-layout folder in the cache::

    downloads/rival10.zip                       # the archive (+ .sha256, .url)
    datasets/rival10-release/                   # README.md, data/, build_report.json, source.json

RIVAL10's licence allows non-commercial research use and forbids redistribution: the
download stays on this machine (publish a copy only private or gated; see the card).
"""

from __future__ import annotations

import shutil
import stat
import zipfile
import zlib
from pathlib import Path, PurePosixPath, PureWindowsPath

from hf_bgbench.hub.fetch import ArchiveError, by_hand_hint
from hf_bgbench.hub.release_download import (
    ReleaseDownload,
    ReleaseRecipe,
    cached_release,
    evaluate_command,
    fetch_release,
    record_source_json,
    release_folder,
)
from hf_bgbench.spec import BenchmarkSpec

DEFAULT_RIVAL10_URL = (
    "https://app.box.com/index.php?rm=box_download_shared_file"
    "&shared_name=iflviwl5rbdgtur1rru3t8f7v2vp0gww&file_id=f_944375052992"
)
ARCHIVE_NAME = "rival10.zip"
DATASET_DIRNAME = "rival10-release"
SKIPPED_PREFIXES = ("__MACOSX/",)  # macOS resource forks some zips carry


def rival10_release_folder(cache_dir: str | Path | None = None) -> Path:
    """Where the converted release lives (whether or not it is there yet)."""
    return release_folder(DATASET_DIRNAME, cache_dir)


def cached_rival10_release(cache_dir: str | Path | None = None) -> Path | None:
    """The converted release folder if a finished download is cached, else None."""
    return cached_release(DATASET_DIRNAME, cache_dir)


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


def _unpack(archive: Path, dest: Path) -> Path:
    from hf_bgbench.benchmarks.rival10.release import Rival10LayoutError, find_rival10_root

    safe_unzip(archive, dest)
    try:
        return find_rival10_root(dest)
    except Rival10LayoutError as err:
        raise ArchiveError(f"{archive}: {err}") from None


def _convert(
    root: Path, output: Path, spec: BenchmarkSpec, progress: bool, sha256: str, workers: int
) -> None:
    from hf_bgbench.benchmarks.rival10.convert import convert_rival10_release

    convert_rival10_release(
        root, output, spec=spec, workers=workers, progress=progress, source_sha256=sha256
    )


def _bad_archive_fix(url: str, archive: Path) -> str:
    return (
        f"The cached copy {archive} was deleted: run the same command again to download it "
        f"afresh, or {by_hand_hint(url)}."
    )


def download_rival10(
    url: str = DEFAULT_RIVAL10_URL,
    cache_dir: str | Path | None = None,
    *,
    spec: BenchmarkSpec,
    sha256: str | None = None,
    progress: bool = True,
    force: bool = False,
    keep_archive: bool = True,
    workers: int = 1,
) -> ReleaseDownload:
    """Download, verify, unzip and convert the RIVAL10 release for ``spec`` (the rival10
    spec); returns where it is.

    A finished conversion in the cache is returned at once (unless ``force``, or ``sha256``
    names a different archive). The sha256 of what was downloaded is always recorded (next
    to the archive, in ``source.json``, ``build_report.json`` and the card) and returned.
    """
    recipe = ReleaseRecipe(
        benchmark="rival10",
        dirname=DATASET_DIRNAME,
        archive_name=ARCHIVE_NAME,
        unpack=_unpack,
        convert=lambda root, out, progress, sha: _convert(root, out, spec, progress, sha, workers),
        record=record_source_json,
        bad_archive_fix=_bad_archive_fix,
        fixed_name=True,  # the Box URL's path is index.php
    )
    return fetch_release(
        recipe,
        url,
        cache_dir,
        sha256=sha256,
        progress=progress,
        force=force,
        keep_archive=keep_archive,
    )


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
