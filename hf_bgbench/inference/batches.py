"""The one decode loop: rows of a dataset through the public decode loader, with a progress
bar and the unreadable rows set aside. Every pass over images uses it (the engine, the
linear probe's features, the noise and saliency tasks, the challenge's backgrounds)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from tqdm.auto import tqdm

from hf_bgbench.data.loader import (
    Batch,
    DecodedRows,
    decoded_rows,
    finished,
    iterate,
    rows_loader,
)
from hf_bgbench.data.pipeline import DecodePipeline

LOADER_ONLY = ("num_workers", "pin_memory", "prefetch_factor")  # a pipeline sets its own


def decoded_batches(
    dataset: Any,
    rows: Sequence[int] | None = None,
    *,
    skipped: list[dict[str, Any]],
    desc: str,
    progress: bool,
    total: int | None = None,
    initial: int = 0,
    pipeline: DecodePipeline | None = None,
    **loader_options: Any,
) -> Iterator[Batch]:
    """The decoded batches of rows ``rows`` of ``dataset`` (default: all) that hold images.

    ``loader_options`` go to :func:`hf_bgbench.data.loader.decode_loader` (columns,
    geometry, image transform, batch size, workers, ...); with ``pipeline`` (a run's
    :class:`~hf_bgbench.data.pipeline.DecodePipeline`) its workers decode them instead, and
    the options on workers are its own. Rows that cannot be read are appended to
    ``skipped``; the bar (``desc``, ``total`` rows, starting at ``initial``) counts every row,
    read or not, once the caller is done with its batch. Close the generator (or exhaust it)
    to close the bar."""
    batch_size = loader_options.pop("batch_size", 32)
    loader = {k: loader_options.pop(k) for k in LOADER_ONLY if k in loader_options}
    decoded = decoded_rows(dataset, rows, **loader_options)
    source = rows_batches(decoded, batch_size, pipeline, **loader)
    count = len(decoded) if total is None else total
    return counted(source, skipped, desc, progress, count, initial)


def rows_batches(
    rows: DecodedRows,
    batch_size: int,
    pipeline: DecodePipeline | None = None,
    **loader: Any,
) -> Iterator[Batch]:
    """The finished batches of ``rows`` (a :class:`~hf_bgbench.data.loader.DecodedRows` or a
    subclass), in order: decoded by ``pipeline`` (a run's) when given, else by a
    :func:`~hf_bgbench.data.loader.rows_loader` with ``loader``'s options (workers, pinned
    memory, prefetch), which a pipeline replaces with its own."""
    if pipeline is not None:
        return (finished(b, rows) for b in pipeline.batches(rows, batch_size))
    return iterate(rows_loader(rows, batch_size, **loader))


def counted(
    batches: Iterator[Batch],
    skipped: list[dict[str, Any]],
    desc: str,
    progress: bool,
    total: int,
    initial: int = 0,
) -> Iterator[Batch]:
    """``batches`` (from a decode loader or the decoded-image cache) under a progress bar
    that counts every row, read or skipped; each batch's unreadable rows go to ``skipped``
    and a batch without images is not yielded."""
    bar = tqdm(total=total, initial=initial, desc=desc, unit="img", disable=not progress)
    try:
        for batch in batches:
            skipped.extend(batch.skipped)
            if batch.images is not None:
                yield batch
            bar.update(len(batch) + len(batch.skipped))
    finally:
        bar.close()
