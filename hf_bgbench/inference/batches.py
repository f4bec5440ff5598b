"""The one decode loop: rows of a dataset through the public decode loader, with a progress
bar and the unreadable rows set aside. Every pass over images uses it (the engine, the
linear probe's features, the noise and saliency tasks, the challenge's backgrounds)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from tqdm.auto import tqdm

from hf_bgbench.data.loader import Batch, decode_loader, decoded_rows, finished, iterate
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
    if pipeline is None:
        loader = decode_loader(dataset, rows, **loader_options)
        source, count = iterate(loader), len(loader.dataset)
    else:
        batch_size = loader_options.pop("batch_size", 32)
        for name in LOADER_ONLY:
            loader_options.pop(name, None)
        decoded = decoded_rows(dataset, rows, **loader_options)
        source = (finished(b, decoded) for b in pipeline.batches(decoded, batch_size))
        count = len(decoded)
    return counted(source, skipped, desc, progress, count if total is None else total, initial)


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
