"""Files and folders: which files are photos, how a photo is decoded (:func:`open_image`,
the one guarded decode path), whether an output folder can be written, and the build report
every built or converted dataset folder carries."""

from __future__ import annotations

import io
import json
import os
import re
import socket
import tempfile
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

IMAGE_SUFFIXES = frozenset({".jpeg", ".jpg", ".png", ".bmp", ".webp"})
"""File suffixes read as photos (compared lower-case), everywhere in the package."""

REPORT_NAME = "build_report.json"
"""The report a build, conversion or download writes beside the data (what it was made from,
counts, skipped rows); read by ``bgbench validate`` and the cards."""


MAX_PIXELS_ENV = "BGBENCH_MAX_IMAGE_PIXELS"
"""Environment variable: the largest image (width x height, in pixels) bgbench decodes."""
DEFAULT_MAX_PIXELS = 178_956_970
"""PIL's own refusal threshold (2 x ``PIL.Image.MAX_IMAGE_PIXELS``): a guard against
decompression bombs; a 14000x14000 photo is above it."""


class ImageDecodeError(ValueError):
    """An image file cannot be decoded (the message names the file and what to do)."""


class ImageTooLarge(ImageDecodeError):
    """An image has more pixels than :func:`max_image_pixels`."""


class DecodeLimitError(ValueError):
    """``$BGBENCH_MAX_IMAGE_PIXELS`` is not a valid limit. Not an :class:`ImageDecodeError`:
    a setting of the whole run, never to be counted as one unreadable image after another."""


def max_image_pixels() -> int:
    """The largest image decoded: ``$BGBENCH_MAX_IMAGE_PIXELS`` or :data:`DEFAULT_MAX_PIXELS`;
    :class:`DecodeLimitError` (naming the variable and a valid value) when it is invalid."""
    value = os.environ.get(MAX_PIXELS_ENV, "").strip()
    if not value:
        return DEFAULT_MAX_PIXELS
    try:
        limit = int(value.replace("_", ""))
    except ValueError:
        limit = 0
    if limit < 1:
        raise DecodeLimitError(
            f"the environment variable {MAX_PIXELS_ENV}={value!r} is not a decode limit: give "
            f"a whole number of pixels, 1 or more (width x height of the largest image "
            f"decoded, e.g. {MAX_PIXELS_ENV}=300000000), or unset it for the default "
            f"{DEFAULT_MAX_PIXELS:,}."
        )
    return limit


def decode_settings() -> dict[str, int]:
    """How images are decoded where it departs from the default (``{}`` at the default):
    which images a run scores depends on it (a larger photo is skipped), so every prediction
    cache key and every build's parameters include it -- a cached or built result is never
    reused under another limit. Empty at the default, so caches and builds made before it
    was recorded stay valid. Read (and checked) each time: the variable may change between
    runs in one process."""
    limit = max_image_pixels()
    return {} if limit == DEFAULT_MAX_PIXELS else {"max_image_pixels": limit}


def eight_bit(image, where: str):
    """``image`` with 8-bit channels: 16-bit greyscale (PNG, TIFF: modes I;16*, I) scaled
    from 0-65535 to 0-255 (never clipped, which made it all white); float images refused."""
    import numpy as np
    from PIL import Image

    if image.mode.startswith("I;16") or image.mode == "I":
        values = np.asarray(image).astype(np.float64)
        top = 65535.0 if image.mode.startswith("I;16") or values.max(initial=0) > 255 else 255.0
        scaled = np.clip(np.rint(values * (255.0 / top)), 0, 255).astype(np.uint8)
        return Image.fromarray(scaled, "L")
    if image.mode == "F":
        raise ImageDecodeError(
            f"{where}: a 32-bit floating-point image (mode F), whose grey levels have no fixed "
            "range; save it as an 8- or 16-bit image."
        )
    return image


def open_image(source, where: str | None = None, *, eight_bits: bool = True):
    """The decoded PIL image of ``source`` (a path, encoded bytes, or a ``datasets`` image
    dict ``{"bytes", "path"}``), loaded and with 8-bit channels (:func:`eight_bit`; with
    ``eight_bits=False``: in the mode it is stored in, for checks of the stored format).

    Every reader and builder decodes through here. Raises :class:`ImageDecodeError` naming
    ``where`` (default: the path) for a file that is no image, truncated or unreadable, and
    :class:`ImageTooLarge` for one above :func:`max_image_pixels` (with the limit and how to
    raise it) -- callers skip and count such a file, or refuse it by name."""
    with _guarded(source, where) as (image, named):
        image.load()
        return eight_bit(image, named) if eight_bits else image.copy()


def image_size(source, where: str | None = None) -> tuple[int, int]:
    """(width, height) of ``source`` (as :func:`open_image` takes it) from its header alone,
    through the same guard: an unreadable or oversized image raises the same errors."""
    with _guarded(source, where) as (image, _):
        return image.size


@contextmanager
def _guarded(source, where: str | None):
    """The opened (not yet loaded) image of ``source`` and the name errors give it; every
    decoding error inside the block becomes an :class:`ImageDecodeError` naming it."""
    from PIL import Image, UnidentifiedImageError

    if isinstance(source, Mapping):
        data, path = source.get("bytes"), source.get("path")
        source = data if data else path
        where = where or (str(path) if path else None)
    if source is None:
        raise ImageDecodeError(f"{where or 'an image'}: no image (neither bytes nor a path).")
    if isinstance(source, str | Path):
        where = where or str(source)
    where = where or "an image given as bytes"
    limit = max_image_pixels()
    # set every time, the default included (PIL refuses above twice this), and given back
    # after: PIL's limit is process-wide, and the caller's own PIL code must not inherit
    # ours (a test that decoded under a tiny limit once broke a later Image.open)
    previous, Image.MAX_IMAGE_PIXELS = Image.MAX_IMAGE_PIXELS, max(1, limit // 2)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            fp = io.BytesIO(source) if isinstance(source, bytes | bytearray) else source
            with Image.open(fp) as image:
                yield image, where
    except Image.DecompressionBombError as err:
        found = re.search(r"\((\d+) pixels\)", str(err))
        size = f"{int(found.group(1)):,} pixels" if found else "too many pixels"
        raise ImageTooLarge(
            f"{where}: {size}, more than the {limit:,} bgbench decodes (a guard against "
            f"decompression bombs); downscale it, or raise the limit with the environment "
            f"variable {MAX_PIXELS_ENV}=N."
        ) from None
    except FileNotFoundError:
        raise ImageDecodeError(f"{where}: no such file.") from None
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, EOFError) as err:
        if isinstance(err, ImageDecodeError):
            raise
        what = "not an image PIL can read" if isinstance(err, UnidentifiedImageError) else err
        raise ImageDecodeError(f"{where}: cannot be decoded ({what}).") from None
    finally:
        Image.MAX_IMAGE_PIXELS = previous


class OutputFolderError(OSError):
    """An output folder cannot be created or written; the message names the option."""


def is_image_file(path: Path) -> bool:
    """True for an existing file whose suffix is one of :data:`IMAGE_SUFFIXES`."""
    return path.suffix.lower() in IMAGE_SUFFIXES and path.is_file()


def output_in_data(
    output: str | Path | None,
    data: object,
    output_flag: str = "--output",
    data_flag: str = "--data",
) -> str | None:
    """Why ``output`` cannot be written: it is the local data folder ``data`` or inside it
    (the run's files would land in the dataset, and the next run would read them as data);
    None when it is elsewhere, or ``data`` is no local folder (a Hub id, a loaded reader)."""
    if output is None or not isinstance(data, str | Path):
        return None
    source = Path(data).expanduser()
    if not source.is_dir():
        return None
    source, target = source.resolve(), Path(output).expanduser().resolve()
    if target != source and source not in target.parents:
        return None
    where = "is" if target == source else "is inside"
    return (
        f"{output_flag} {output} {where} the {data_flag} folder {data}: the results would be "
        f"written into the dataset (and read as data by the next run). Give {output_flag} a "
        f"folder outside it, e.g. {source.parent / (source.name + '_results')}."
    )


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


def check_folder(path: str | Path, option_flag: str, error: type[ValueError] = ValueError) -> None:
    """``path`` can be a folder: it is one, or it does not exist yet and nothing on its way
    is a file (it is created when needed). The error names ``option_flag``."""
    folder = Path(path).expanduser()
    step = nearest_existing(folder)
    if step is not None and not step.is_dir():
        where = "it is" if step == folder else f"{step} is"
        raise error(
            f"{option_flag} {path}: {where} a file, not a folder; give {option_flag} a "
            "folder (created when missing)."
        )


def nearest_existing(folder: Path) -> Path | None:
    """``folder`` or the nearest of its parents that exists (None: none does): what decides
    whether the folder can be made there."""
    return next((p for p in (folder, *folder.parents) if p.exists()), None)
