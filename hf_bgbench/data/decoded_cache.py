"""Decoded images kept on disk: a dataset decoded once, read back by every later model.

Decoding is what a model waits for once the forward is fast: on two CPU cores
the decode workers take CPU from the forward's threads, and on a GPU even many workers
decode fewer images per second than the model scores. But a model's input pixels depend
only on the data, the per-image geometry (resize, crop, interpolation), the decoder and the
decode limit -- not on the model. So the uint8 tensors a first model's pass decodes are
written here as they go by, and every later pass with the same key reads them back from a
memory-mapped file instead of decoding: the same bytes, so the same predictions.

Layout, under ``<cache root>/decoded/<key>/``::

    images.u8    uint8, rows x C x H x W, row k = the dataset's row k (zeros where skipped)
    index.json   {"version", "shape", "rows", "ids", "skipped": {row: reason}, "bytes",
                  "sha256": of images.u8, checked before the file is read}

A folder is written under a temporary name and renamed when every row has been decoded,
so it is either complete or absent. Rows that could not be decoded are kept with their
reason and reported again as skipped on every read, never silently dropped.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import uuid
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import torch

from hf_bgbench.cache import cache_root, file_sha256, intact
from hf_bgbench.data.loader import UNSUPPORTED, Batch, tensor_geometry

log = logging.getLogger(__name__)

VERSION = 2  # 2: the images' sha256 in the index
IMAGES = "images.u8"
INDEX = "index.json"


def default_decoded_dir() -> Path:
    """``<cache root>/decoded`` (see :mod:`hf_bgbench.cache`)."""
    return cache_root() / "decoded"


def pixels_key(transform: Any) -> str | None:
    """What decides the pixels a per-image ``transform`` makes of a decoded image (its
    resize, crop and interpolation, and a model transform's full description), for the
    cache key; None for a transform the loader cannot describe (then nothing is cached)."""
    from torchvision import transforms as T

    geometry = tensor_geometry(transform)
    if geometry is UNSUPPORTED:
        return None
    described = repr(transform) if isinstance(transform, T.Compose) else type(transform).__name__
    return f"{geometry!r}|{described}"


class DecodedImages:
    """The decoded images of one dataset under one key (data, geometry, decoder, decode
    limit: the caller hashes them into ``key``), at ``root/key``."""

    def __init__(self, root: str | Path, key: str):
        self.folder = Path(root) / key
        self.checked: tuple[int, int] | None = None  # (size, mtime) of the file found intact

    def index(self) -> dict[str, Any] | None:
        """The complete cache's index, or None when there is none (or it is unreadable, or
        its images are not the bytes written: then it is filled again, never trusted)."""
        images = self.folder / IMAGES
        try:
            index = json.loads((self.folder / INDEX).read_text())
            stat = images.stat()
        except (OSError, ValueError):
            return None
        if index.get("version") != VERSION or stat.st_size != index.get("bytes"):
            return None
        state = (stat.st_size, stat.st_mtime_ns)
        if self.checked != state:  # hashed once per file state, not at every look
            if not intact(
                "decoded-image cache", images, index.get("sha256"), lambda: file_sha256(images)
            ):
                return None
            self.checked = state
        return index

    def matches(self, ids: Sequence[str]) -> dict[str, Any] | None:
        """The index when it holds exactly the rows ``ids`` (the dataset's ids, in order)."""
        index = self.index()
        if index is None or index["ids"] != list(ids):
            return None
        return index

    def read(
        self,
        index: dict[str, Any],
        positions: Sequence[int],
        labels: Sequence[int],
        *,
        batch_size: int,
    ) -> Iterator[Batch]:
        """Batches of the dataset rows ``positions`` (their ``labels``, from the dataset),
        read from the file; a row skipped when it was decoded is in its batch's
        ``skipped``, with its reason, as the decode loader has it. The next batch is read
        in a thread while the caller uses this one (the copy releases the GIL), so a fast
        model does not wait on the disk or the page cache."""
        rows = int(index["rows"])
        images = np.memmap(
            self.folder / IMAGES, dtype=np.uint8, mode="r", shape=(rows, *index["shape"])
        )
        ids, reasons = index["ids"], index["skipped"]

        def batch(chunk: Sequence[int]) -> Batch:
            good = [k for k in chunk if str(k) not in reasons]
            bad = [
                {"id": ids[k], "label": int(labels[k]), "reason": reasons[str(k)]}
                for k in chunk
                if str(k) in reasons
            ]
            if not good:
                return Batch(None, None, [], {}, bad)
            return Batch(
                torch.from_numpy(np.ascontiguousarray(images[good])),
                torch.tensor([int(labels[k]) for k in good], dtype=torch.long),
                [ids[k] for k in good],
                {},
                bad,
            )

        chunks = [positions[at : at + batch_size] for at in range(0, len(positions), batch_size)]
        with ThreadPoolExecutor(max_workers=1) as reader:
            ahead = reader.submit(batch, chunks[0]) if chunks else None
            for k in range(len(chunks)):
                current = ahead.result()
                ahead = reader.submit(batch, chunks[k + 1]) if k + 1 < len(chunks) else None
                yield current

    def fill(
        self, ids: Sequence[str], batches: Iterator[Batch], skipped: list[dict[str, Any]]
    ) -> Iterator[Batch]:
        """Pass ``batches`` (of every row of the dataset whose ids are ``ids``; the rows
        they could not read collected in ``skipped``) through, writing each image to the
        file; once they are exhausted, the cache is complete. A pass that stops early, or
        images of different sizes, leave no cache."""
        writer = _Writer(self.folder, list(ids))
        try:
            for batch in batches:
                writer.put(batch)
                yield batch
            placed = writer.finish(skipped)
            if placed is not None:  # hashed as it was written: not hashed again to be read
                self.checked = placed
        finally:
            writer.discard()


class _Writer:
    """Rows written into a temporary folder, renamed to ``folder`` when complete."""

    def __init__(self, folder: Path, ids: list[str]):
        self.folder, self.ids = folder, ids
        self.row = {image_id: k for k, image_id in enumerate(ids)}
        self.tmp = folder.with_name(f"{folder.name}.tmp-{uuid.uuid4().hex[:8]}")
        self.images: np.memmap | None = None
        self.shape: tuple[int, ...] | None = None
        self.written: set[int] = set()  # rows decoded or skipped
        self.skipped: dict[str, str] = {}  # row -> reason
        self.dead = False

    def put(self, batch: Batch) -> None:
        if self.dead or batch.images is None or not len(batch):
            return
        images = batch.images.detach().to("cpu", torch.uint8).numpy()
        if self.images is None:
            self.shape = tuple(images.shape[1:])
            self.tmp.mkdir(parents=True, exist_ok=True)
            self.images = np.memmap(
                self.tmp / IMAGES, dtype=np.uint8, mode="w+", shape=(len(self.ids), *self.shape)
            )
        if tuple(images.shape[1:]) != self.shape:  # a later batch at another size: no cache
            self.dead = True
            return
        rows = [self.row[str(image_id)] for image_id in batch.ids]
        self.images[rows] = images
        self.written.update(rows)

    def finish(self, skipped: list[dict[str, Any]]) -> tuple[int, int] | None:
        """Complete the cache and rename it into place; the (size, mtime) of the images file
        it placed (None: none placed -- rows missing, or another process's copy won)."""
        for entry in skipped:
            k = self.row.get(str(entry["id"]))
            if k is not None:
                self.skipped[str(k)] = str(entry["reason"])
                self.written.add(k)
        if self.dead or self.images is None or len(self.written) != len(self.ids):
            return None
        self.images.flush()
        size = (self.tmp / IMAGES).stat().st_size
        digest = file_sha256(self.tmp / IMAGES)
        index = {
            "version": VERSION,
            "shape": list(self.shape or ()),
            "rows": len(self.ids),
            "ids": self.ids,
            "skipped": self.skipped,
            "bytes": size,
            "sha256": digest,
        }
        (self.tmp / INDEX).write_text(json.dumps(index))
        self.images = None
        leftover = DecodedImages(self.folder.parent, self.folder.name)
        if self.folder.exists() and leftover.index() is None:  # unreadable: replaced
            shutil.rmtree(self.folder, ignore_errors=True)
        try:
            os.replace(self.tmp, self.folder)  # another process's complete copy wins
        except OSError:
            return None
        log.info("decoded images kept for the next run: %s (%.1f MB)", self.folder, size / 1e6)
        placed = (self.folder / IMAGES).stat()
        return placed.st_size, placed.st_mtime_ns

    def discard(self) -> None:
        self.images = None
        shutil.rmtree(self.tmp, ignore_errors=True)
