"""Fetch one large file with resume and a checksum, and unpack a tar.gz safely.

:func:`fetch` copies ``http(s)://`` or ``file://`` URLs into ``<dest>.part``; an existing
``.part`` is continued with an HTTP ``Range`` request (or a seek for local files) and the
download restarts from zero only when the server ignores the range. Interrupted transfers
are retried and resumed a few times. When complete, the sha256 is computed, checked against
the expected value if one is given (a mismatch deletes the file), written to
``<dest>.sha256`` in ``sha256sum`` format, and the ``.part`` is renamed to ``dest``.

:func:`safe_extract` unpacks a gzipped tar, refusing the whole archive at the first member
with an absolute path, a ``..`` component, a link leaving the folder or a device, and then
applying ``tarfile.data_filter`` (safe permissions) where Python has it.

Every failure is a :class:`DownloadError` (an ``OSError``) or :class:`ArchiveError` /
:class:`ChecksumError` (``ValueError``) whose message names the problem and the fix.
"""

from __future__ import annotations

import errno
import gzip
import hashlib
import http.client
import os
import shutil
import tarfile
import time
import urllib.error
import urllib.parse
import urllib.request
import zlib
from pathlib import Path
from typing import BinaryIO

from tqdm.auto import tqdm

CHUNK = 1 << 20
TIMEOUT_S = 60.0
RETRIES = 3
RETRY_WAIT_S = 2.0
USER_AGENT = "hf-bgbench (+https://github.com/MadryLab/backgrounds_challenge data download)"
_NETWORK_ERRORS = (OSError, http.client.HTTPException)


class DownloadError(OSError):
    """The file could not be fetched or stored (network, HTTP status, missing file, disk)."""


class ChecksumError(ValueError):
    """The downloaded bytes do not have the expected sha256."""


class ArchiveError(ValueError):
    """The archive is not a readable gzipped tar, or holds an unsafe member."""


def by_hand_hint(url: str) -> str:
    return (
        f"download the archive by hand from {url} and pass it with "
        "--url file:///path/to/archive.tar.gz"
    )


def sha256_file(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(CHUNK):
            digest.update(block)
    return digest.hexdigest()


def normalize_sha256(value: str | None) -> str | None:
    """Lower-case hex, or a ValueError saying what a sha256 looks like."""
    if value is None or value == "":
        return None
    text = value.strip().lower()
    if len(text) != 64 or any(c not in "0123456789abcdef" for c in text):
        raise ValueError(
            f"--sha256 {value!r} is not a sha256: expected 64 hexadecimal characters "
            "(as printed by `sha256sum FILE`)."
        )
    return text


def _disk_full(path: Path, err: OSError, need: int | None = None) -> DownloadError:
    """``path``: the file or folder being written."""
    folder = path if path.is_dir() else path.parent
    free = shutil.disk_usage(folder).free
    wanted = f"needs {need / 1e9:.2f} GB more, " if need is not None else ""
    return DownloadError(
        f"disk full while writing {path} ({wanted}{free / 1e9:.2f} GB free: {err.strerror}). "
        f"Free some space there or pass --cache-dir DIR on a bigger disk; a partial download "
        "is kept and resumes on the next run."
    )


def _check_space(path: Path, need: int | None) -> None:
    if need and shutil.disk_usage(path.parent).free < need:
        raise _disk_full(path, OSError(errno.ENOSPC, "not enough free space"), need)


def _copy(src: BinaryIO, part: Path, mode: str, have: int, total: int | None, bar: tqdm) -> None:
    """Append/write ``src`` to ``part``; network errors pass through, disk errors do not."""
    with open(part, mode) as out:
        while True:
            block = src.read(CHUNK)
            if not block:
                return
            try:
                out.write(block)
            except OSError as err:
                if err.errno in (errno.ENOSPC, errno.EDQUOT):
                    raise _disk_full(part, err, None if total is None else total - have) from None
                raise DownloadError(f"could not write {part}: {err}") from None
            have += len(block)
            bar.update(len(block))


def _content_range(value: str | None) -> tuple[int | None, int | None]:
    """(start, total) of a ``Content-Range: bytes a-b/n`` header (``bytes */n`` for a 416)."""
    if not value or not value.startswith("bytes "):
        return None, None
    span, _, size = value[6:].partition("/")
    start = int(span.split("-")[0]) if span[:1].isdigit() else None
    return start, int(size) if size.isdigit() else None


def _bar(url: str, have: int, total: int | None, progress: bool) -> tqdm:
    name = Path(urllib.parse.urlparse(url).path).name or url
    return tqdm(
        total=total,
        initial=have,
        unit="B",
        unit_scale=True,
        unit_divisor=1024,
        desc=name,
        disable=not progress,
        leave=True,
    )


# What one transfer attempt ended with.
DONE, SHORT, RESTART = "done", "short", "restart"


def _http_attempt(url: str, part: Path, progress: bool) -> str:
    """One request: DONE (``part`` holds the whole file), SHORT (it ended early) or RESTART
    (the ``.part`` cannot be continued and was deleted)."""
    have = part.stat().st_size if part.exists() else 0
    headers = {"User-Agent": USER_AGENT, "Accept-Encoding": "identity"}
    if have:
        headers["Range"] = f"bytes={have}-"
    request = urllib.request.Request(url, headers=headers)
    try:
        response = urllib.request.urlopen(request, timeout=TIMEOUT_S)
    except urllib.error.HTTPError as err:
        if err.code == 416 and have:
            _, total = _content_range(err.headers.get("Content-Range"))
            if total == have:
                return DONE  # the .part was already complete
            part.unlink()  # larger than the file, or the server cannot say: start over
            return RESTART
        raise DownloadError(_http_message(url, err)) from None
    except urllib.error.URLError as err:
        raise DownloadError(_unreachable(url, err.reason)) from None
    except _NETWORK_ERRORS as err:
        raise DownloadError(_unreachable(url, err)) from None
    with response:
        start, total = _content_range(response.headers.get("Content-Range"))
        if response.status == 206 and start != have:
            part.unlink(missing_ok=True)  # a range we did not ask for
            return RESTART
        if have and response.status == 206:
            mode = "ab"
        else:
            have, mode = 0, "wb"  # no range support (or a different one): restart
            length = response.headers.get("Content-Length")
            total = int(length) if length and length.isdigit() else None
        _check_space(part, None if total is None else total - have)
        with _bar(url, have, total, progress) as bar:
            _copy(response, part, mode, have, total, bar)
    return DONE if total is None or part.stat().st_size == total else SHORT


def _file_attempt(url: str, part: Path, progress: bool) -> str:
    src = Path(urllib.request.url2pathname(urllib.parse.urlparse(url).path))
    if not src.is_file():
        raise DownloadError(
            f"no file at {src} (from {url}): check the path; a file URL is "
            "file:///absolute/path/to/archive.tar.gz"
        )
    total = src.stat().st_size
    have = part.stat().st_size if part.exists() else 0
    if have > total:
        have = 0
    _check_space(part, total - have)
    with open(src, "rb") as f, _bar(url, have, total, progress) as bar:
        f.seek(have)
        _copy(f, part, "ab" if have else "wb", have, total, bar)
    return DONE if part.stat().st_size == total else SHORT


def _http_message(url: str, err: urllib.error.HTTPError) -> str:
    status = f"HTTP {err.code} {err.reason}"
    if err.code == 404:
        return (
            f"{url} answered {status}: the archive is not at that address (it may have "
            f"moved; see the authors' release page). Check the URL, or {by_hand_hint(url)}."
        )
    if err.code in (401, 403):
        return f"{url} refused the download ({status}); {by_hand_hint(url)}."
    return f"{url} answered {status}; try again later, or {by_hand_hint(url)}."


def _unreachable(url: str, reason: object) -> str:
    host = urllib.parse.urlparse(url).hostname or url
    return (
        f"could not reach {host}: {reason}; check the internet connection (or the "
        f"HTTPS_PROXY setting), or {by_hand_hint(url)}."
    )


def fetch(
    url: str,
    dest: str | Path,
    *,
    expected_sha256: str | None = None,
    progress: bool = True,
    retries: int = RETRIES,
) -> str:
    """Download ``url`` to ``dest`` (resuming ``dest.part``); returns the sha256 (hex)."""
    dest = Path(dest)
    expected = normalize_sha256(expected_sha256)
    scheme = urllib.parse.urlparse(url).scheme.lower()
    if scheme not in ("http", "https", "file"):
        raise ValueError(
            f"cannot download {url!r}: only http(s):// and file:// URLs are supported "
            "(a local archive is file:///path/to/archive.tar.gz)."
        )
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    attempt = _file_attempt if scheme == "file" else _http_attempt
    failures = restarts = 0
    while True:
        try:
            outcome = attempt(url, part, progress)
            if outcome == DONE:
                break
            if outcome == RESTART and restarts == 0:
                restarts += 1
                continue
            reason = "the transfer ended early"
        except DownloadError:
            raise
        except _NETWORK_ERRORS as err:
            reason = f"{type(err).__name__}: {err}"
        failures += 1
        got = part.stat().st_size if part.exists() else 0
        if failures > retries:
            raise DownloadError(
                f"the download from {url} was interrupted after {got / 1e6:.1f} MB "
                f"({reason}); run the same command again to resume where it stopped, "
                f"or {by_hand_hint(url)}."
            )
        time.sleep(RETRY_WAIT_S * failures)
    digest = sha256_file(part)
    if expected is not None and digest != expected:
        part.unlink()
        raise ChecksumError(
            f"sha256 mismatch for {url}: got {digest}, expected {expected}. The bad download "
            f"was deleted ({part}). Run again to download it afresh; if the mismatch persists, "
            "the file at the URL is not the one the checksum is for (check --sha256)."
        )
    os.replace(part, dest)
    write_sha256(dest, digest)
    return digest


def write_sha256(path: Path, digest: str) -> Path:
    """``<path>.sha256`` in ``sha256sum`` format (``sha256sum -c`` checks it)."""
    out = path.with_name(path.name + ".sha256")
    out.write_text(f"{digest}  {path.name}\n", encoding="utf-8")
    return out


def _check_member(member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo:
    """Refuse absolute names, ``..``, devices and links leaving ``dest`` (the ``data``
    filter's rules, also for Pythons without ``tarfile.data_filter``)."""
    name = member.name
    if name.startswith(("/", "\\")) or os.path.isabs(name):
        raise ArchiveError(f"absolute path {name!r}")
    if ".." in Path(name).parts:
        raise ArchiveError(f"path {name!r} leaves the folder ('..')")
    if member.isdev():
        raise ArchiveError(f"device or pipe {name!r}")
    if member.issym() or member.islnk():
        base = os.path.dirname(name) if member.issym() else ""
        target = os.path.realpath(os.path.join(dest, base, member.linkname))
        root = os.path.realpath(dest)
        try:
            inside = os.path.commonpath([target, root]) == root
        except ValueError:  # another drive
            inside = False
        if not inside:
            raise ArchiveError(f"link {name!r} -> {member.linkname!r} points outside the folder")
    return member


def safe_extract(archive: str | Path, dest: str | Path) -> None:
    """Unpack the gzipped tar ``archive`` into ``dest``, refusing unsafe members."""
    archive, dest = Path(archive), Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    data_filter = getattr(tarfile, "data_filter", None)

    def member_filter(member: tarfile.TarInfo, path: str) -> tarfile.TarInfo | None:
        try:
            _check_member(member, path)  # stricter: refuses what data_filter would rewrite
            return member if data_filter is None else data_filter(member, path)
        except (tarfile.TarError, ArchiveError) as err:
            raise ArchiveError(
                f"{archive} holds an unsafe member {member.name!r} ({err}); refusing to "
                "extract it: this is not the archive it claims to be."
            ) from None

    try:
        with tarfile.open(archive, mode="r:gz") as tar:
            if data_filter is not None:
                tar.extractall(dest, filter=member_filter)
            else:
                for member in tar:
                    if member_filter(member, str(dest)) is not None:
                        tar.extract(member, dest)
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile) as err:
        raise ArchiveError(
            f"{archive} is not a complete gzipped tar archive ({type(err).__name__}: {err}): "
            "a corrupted download, or a file or web page that is not the archive."
        ) from None
    except OSError as err:
        if err.errno in (errno.ENOSPC, errno.EDQUOT):
            raise _disk_full(dest, err) from None
        raise
