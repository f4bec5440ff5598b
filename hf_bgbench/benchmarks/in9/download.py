"""``bgbench download in9``: the official Backgrounds Challenge release, ready to score.

Until ``bgbench/in9`` is on the Hub, a newcomer needs the authors' archive. This module
fetches it (resumable, see :mod:`hf_bgbench.hub.fetch`), records its sha256 (the authors publish
none), unpacks it safely, checks the release layout, and converts it with the release
converter (:func:`hf_bgbench.benchmarks.in9.convert.convert_in9_release`) into a Hub-layout folder
in the cache. Cache layout, under ``$HF_BGBENCH_CACHE`` or ``~/.cache/hf_bgbench``::

    downloads/backgrounds_challenge_data.tar.gz           # the archive (+ .sha256, .url)
    datasets/in9-release/                                 # README.md, data/, source.json

The converted folder appears only once complete (it is written as ``.in9-release.partial``
and renamed), so :func:`cached_in9_release` either finds a finished dataset or nothing, and
an interrupted conversion is simply redone on the next call.
"""

from __future__ import annotations

import urllib.parse
from pathlib import Path
from typing import Any

from hf_bgbench.benchmarks.in9.variants import IN9_VARIANTS
from hf_bgbench.hub.fetch import (
    ArchiveError,
    ChecksumError,
    DownloadError,
    by_hand_hint,
    safe_extract,
)
from hf_bgbench.hub.release_download import (
    ReleaseDownload,
    ReleaseRecipe,
    cached_release,
    evaluate_command,
    fetch_release,
    read_source,
    record_source_json,
    release_folder,
)
from hf_bgbench.spec import BenchmarkSpec

DEFAULT_IN9_URL = (
    "https://github.com/MadryLab/backgrounds_challenge/releases/download/data/"
    "backgrounds_challenge_data.tar.gz"
)
RELEASE_PAGE = "https://github.com/MadryLab/backgrounds_challenge"
# The authors publish no checksum, so none is pinned; pass ``sha256=`` to verify a known one.
IN9_SHA256: str | None = None
DATASET_DIRNAME = "in9-release"
RELEASE_TOP = "bg_challenge"
RELEASE_SPLIT = "val"
MASK_DIRNAME = "fg_mask"
IMAGE_SUFFIXES = (".jpeg", ".jpg", ".png")

__all__ = [
    "ArchiveError",
    "ChecksumError",
    "DEFAULT_IN9_URL",
    "DownloadError",
    "ReleaseDownload",
    "cached_in9_release",
    "download_in9",
    "in9_release_folder",
    "read_source",
]


def in9_release_folder(cache_dir: str | Path | None = None) -> Path:
    """Where the converted release lives (whether or not it is there yet)."""
    return release_folder(DATASET_DIRNAME, cache_dir)


def cached_in9_release(cache_dir: str | Path | None = None) -> Path | None:
    """The converted release folder if a finished download is cached, else None.

    For callers that fall back to it when ``bgbench/in9`` cannot be had from the Hub; use
    :func:`read_source` for the archive's sha256.
    """
    return cached_release(DATASET_DIRNAME, cache_dir)


def check_release_tree(top: Path, archive: Path) -> Path:
    """The ``bg_challenge`` folder under ``top``, or an ArchiveError naming what is missing."""
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


def _unpack_in9(archive: Path, dest: Path) -> Path:
    safe_extract(archive, dest)
    return check_release_tree(dest, archive)


def download_in9(
    url: str = DEFAULT_IN9_URL,
    cache_dir: str | Path | None = None,
    *,
    spec: BenchmarkSpec,
    sha256: str | None = IN9_SHA256,
    progress: bool = True,
    force: bool = False,
    keep_archive: bool = True,
) -> ReleaseDownload:
    """Download, verify, unpack and convert the official release for ``spec`` (the in9
    spec); returns where it is (:func:`fetch_release`; the sha256 also goes into the
    dataset's ``source.json``, ``build_report.json`` and card)."""
    recipe = ReleaseRecipe(
        benchmark="in9",
        dirname=DATASET_DIRNAME,
        archive_name="backgrounds_challenge_data.tar.gz",
        unpack=_unpack_in9,
        convert=lambda root, out, progress, _sha: _convert(root, out, spec, progress),
        record=_record_source,
        bad_archive_fix=_bad_archive_fix,
        disk_hint="The release needs about 3 GB there (archive, unpacked files, Parquet); ",
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


def _convert(root: Path, output: Path, spec: BenchmarkSpec, progress: bool) -> None:
    """The release converter, with the datasets progress bars off when ``progress`` is."""
    import datasets

    from hf_bgbench.benchmarks.in9.convert import convert_in9_release

    quiet = not progress and not datasets.are_progress_bars_disabled()
    if quiet:
        datasets.disable_progress_bars()
    try:
        convert_in9_release(root, output, spec)
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
