"""The inference engine: a model step over a whole dataset, with a resumable cache.

Streams batches through the one decode loop
(:func:`hf_bgbench.inference.batches.decoded_batches`), runs the public model step
(:class:`hf_bgbench.inference.model_step.ModelStep`) and keeps a prediction cache on disk
keyed by (model, data, variant, protocol, decode limit) and image id, so a rerun or an
interrupted run only computes the images that are missing.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import datasets
import numpy as np
import pandas as pd
import torch
from PIL import Image

from hf_bgbench.cache import cache_root, read_parquet_part, write_parquet_part
from hf_bgbench.data.decoded_cache import DecodedImages
from hf_bgbench.data.loader import choose_decoder
from hf_bgbench.data.pipeline import DecodePipeline
from hf_bgbench.data.schema import ID, LABEL
from hf_bgbench.files import decode_settings
from hf_bgbench.inference.batches import counted, decoded_batches
from hf_bgbench.inference.model_step import ModelStep

log = logging.getLogger(__name__)

PREDICTION_COLUMNS = ["id", "label", "pred", "pred_model", "prob_true"]


def default_num_workers(device: torch.device | str | None = None, processes: int = 1) -> int:
    """Decode worker processes for a model on ``device`` (None: the CPU). On a CPU the
    forward's threads (one per core, torch's default) already use every core, and a worker
    takes its CPU from them: on 2 cores, tf_efficientnet_lite0, evaluate ran at 0.92 of the
    raw forward with no worker and 0.745 with two on release images, 0.68 and 0.57 on photos
    (bench/engine_throughput.py --workers default 0, 3 alternating rounds, 2026-11-27; a
    decode thread beside the forward did no better, 0.71). So on a CPU only the cores the
    forward leaves free get a worker -- counting the forward threads of every one of the
    run's ``processes`` (``accelerate launch``), which share the cores; on an accelerator
    the CPU is free for decoding: one per core. More than 4 gains nothing for one model."""
    cores = os.cpu_count() or 2
    if device is None or torch.device(device).type == "cpu":
        return max(0, min(4, cores // max(1, processes) - torch.get_num_threads()))
    return max(1, min(4, cores))


def capped_workers(requested: int) -> int:
    """``--workers`` as asked, at most one per CPU core this process may use (more only
    compete for the cores and each holds a copy of its batch), saying so when capped."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    cores = cores or 1
    if requested <= cores:
        return requested
    log.warning(
        "--workers %d: this machine gives the run %d CPU core(s); using %d decode worker(s).",
        requested,
        cores,
        cores,
    )
    return cores


def default_cache_dir() -> Path:
    """``<cache root>/predictions`` (see :mod:`hf_bgbench.cache`)."""
    return cache_root() / "predictions"


def cache_key(*parts: str) -> str:
    """The cache folder name of ``parts`` and of how images are decoded
    (:func:`hf_bgbench.files.decode_settings`): the decode limit decides which images are
    scored, so a cache filled under one limit never answers a run under another (a
    warm cache once scored a photo the limit skips). Raises for an invalid limit, before any
    cached row is read."""
    decoding = [json.dumps(settings, sort_keys=True)] if (settings := decode_settings()) else []
    return hashlib.sha256("\x1f".join([*parts, *decoding]).encode()).hexdigest()[:24]


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during a run; ``cached`` images are safe in the prediction cache (None: not
    known -- the run stopped before it had looked at the cache)."""

    def __init__(self, cached: int | None):
        super().__init__("interrupted" if cached is None else f"{cached} image(s) cached")
        self.cached = cached


@dataclass
class PredictionRun:
    """Predictions for one dataset, in dataset order, plus what was skipped and reused."""

    predictions: pd.DataFrame
    skipped: list[dict[str, Any]] = field(default_factory=list)
    computed: int = 0
    reused: int = 0
    decoder: str = "pil"  # how the images were decoded (hf_bgbench.data.loader.choose_decoder)
    # the decoded-image cache: off, read (no image decoded), written (complete after this
    # pass), unwritten (on, but this pass did not decode every row, so nothing was kept) or
    # unsupported transform (a per-image transform the cache key cannot describe)
    decode_cache: str = "off"


class PredictionCache:
    """Parquet parts under ``root/key/``; each part holds finished rows of PREDICTION_COLUMNS."""

    def __init__(self, root: Path, key: str):
        self.dir = Path(root) / key

    def load(self) -> pd.DataFrame:
        parts = sorted(self.dir.glob("part-*.parquet")) if self.dir.is_dir() else []
        frames = [f for p in parts if (f := read_parquet_part("prediction cache", p)) is not None]
        if not frames:
            return pd.DataFrame(columns=PREDICTION_COLUMNS)
        frame = pd.concat(frames, ignore_index=True)
        return frame.drop_duplicates("id", keep="last")

    def append(self, rows: pd.DataFrame | list[dict[str, Any]]) -> None:
        """Write ``rows`` (PREDICTION_COLUMNS) as one part. Part names are random, so the
        processes of a multi-process run write beside each other without colliding."""
        if len(rows) == 0:
            return
        self.dir.mkdir(parents=True, exist_ok=True)
        frame = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(rows)
        # PREDICTION_COLUMNS and the model's records
        write_parquet_part(frame, self.dir / f"part-{uuid.uuid4().hex}.parquet")


def predict(
    step: ModelStep,
    dataset: datasets.Dataset,
    *,
    rows: Sequence[int] | None = None,
    image_transform: Callable[[Image.Image], torch.Tensor] | None = None,
    batch_size: int = 32,
    num_workers: int | None = None,
    cache: PredictionCache | None = None,
    flush_every: int = 256,
    desc: str = "predict",
    progress: bool = True,
    decoder: str | None = None,
    decoded: DecodedImages | None = None,
    pipeline: DecodePipeline | None = None,
) -> PredictionRun:
    """Run ``step`` over rows ``rows`` of ``dataset`` (default: all); reuse and extend
    ``cache`` when given. Predictions come back in the order of ``rows``.

    ``image_transform`` (PIL -> uint8 tensor) runs per image in the decode workers; the
    model step normalises each uint8 batch on the device. Peak memory does not grow with
    the number of images: the prediction columns are allocated once, before the first
    forward pass, and filled in place (see :class:`_Columns`); the rows not yet cached are
    written out every ``flush_every`` images. ``decoder``: ``pil`` or ``torchvision``
    (default: :func:`hf_bgbench.data.loader.choose_decoder` for the step's device).
    ``decoded``: the dataset's decoded-image cache for this transform and decoder
    (:mod:`hf_bgbench.data.decoded_cache`): read instead of decoding when it is complete,
    written by a pass that decodes every row. ``pipeline``: the run's decode pipeline
    (:class:`~hf_bgbench.data.pipeline.DecodePipeline`), whose workers serve every pass of
    the run; without it a loader of ``num_workers`` serves this pass.
    """
    if decoder is None:
        decoder = choose_decoder(dataset, step.device, image_transform)
    work = _rows_of(dataset, rows, cache, desc)
    columns = _Columns([work.ids[k] for k in work.todo])
    skipped: list[dict[str, Any]] = []
    decode_cache = "off" if decoded is None else "unwritten"
    if work.todo:
        settings = _PassSettings(
            image_transform, batch_size, num_workers, desc, progress, decoder, decoded, pipeline
        )
        decode_cache = _predict_rows(
            step, dataset, settings, work, columns, skipped, cache, flush_every
        )
    return _prediction_run(work, columns, skipped, decoder, decode_cache, desc)


@dataclass
class _Rows:
    """The rows one :func:`predict` call covers: every id of the dataset, the rows asked
    for (positions) and their ids, the cached predictions it reuses (``done``, their ids
    ``have``) and the indices into ``ids`` it still has to predict (``todo``)."""

    all_ids: list[Any]
    positions: list[int]
    ids: list[Any]
    done: pd.DataFrame
    have: set[Any]
    todo: list[int]


@dataclass
class _PassSettings:
    """How :func:`predict` decodes the rows it has to predict: its arguments of those names."""

    image_transform: Callable[[Image.Image], torch.Tensor] | None
    batch_size: int
    num_workers: int | None
    desc: str
    progress: bool
    decoder: str
    decoded: DecodedImages | None
    pipeline: DecodePipeline | None


def _rows_of(
    dataset: datasets.Dataset, rows: Sequence[int] | None, cache: PredictionCache | None, desc: str
) -> _Rows:
    """The rows ``rows`` of ``dataset`` (None: all), the predictions of them ``cache`` holds
    and those still to predict; repeated ids are a ValueError."""
    all_ids = list(dataset.select_columns([ID])[ID]) if len(dataset) else []
    if len(set(all_ids)) != len(all_ids):
        raise ValueError(f"{desc}: image ids repeat; every row needs a unique 'id'.")
    positions = list(range(len(all_ids))) if rows is None else list(rows)
    ids = [all_ids[i] for i in positions]
    done = cache.load() if cache is not None else pd.DataFrame(columns=PREDICTION_COLUMNS)
    done = done[done["id"].isin(set(ids))]
    have = set(done["id"])
    todo = [k for k, image_id in enumerate(ids) if image_id not in have]
    return _Rows(all_ids, positions, ids, done, have, todo)


def _predict_rows(
    step: ModelStep,
    dataset: datasets.Dataset,
    settings: _PassSettings,
    work: _Rows,
    columns: _Columns,
    skipped: list[dict[str, Any]],
    cache: PredictionCache | None,
    flush_every: int,
) -> str:
    """Predict ``work``'s rows still to predict into ``columns`` (written to ``cache`` as
    they come); return what became of the decoded-image cache."""
    todo_rows = [work.positions[k] for k in work.todo]
    batches, decode_cache, filling = _open_batches(
        dataset, settings, step, work, todo_rows, skipped
    )
    _fill_columns(step, batches, columns, cache, flush_every, len(work.have))
    if filling:  # written once complete; not when stopped early or sizes differed
        decode_cache = "written" if settings.decoded.matches(work.all_ids) else "unwritten"
    return decode_cache


def _open_batches(
    dataset: datasets.Dataset,
    settings: _PassSettings,
    step: ModelStep,
    work: _Rows,
    todo_rows: list[int],
    skipped: list[dict[str, Any]],
) -> tuple[Any, str, bool]:
    """The batches of rows ``todo_rows``: read from the decoded-image cache when it is
    complete, else decoded (and filling that cache on a pass over every row); with the
    cache's state and whether this pass fills it."""
    workers = (
        default_num_workers(step.device) if settings.num_workers is None else settings.num_workers
    )
    decoded = settings.decoded
    index = decoded.matches(work.all_ids) if decoded is not None else None
    total, initial = len(work.ids), len(work.have)
    if index is not None:
        labels = dataset.select_columns([LABEL])[LABEL]
        rows_read = decoded.read(index, todo_rows, labels, batch_size=settings.batch_size)
        batches = counted(rows_read, skipped, settings.desc, settings.progress, total, initial)
        return batches, "read", False
    batches = decoded_batches(
        dataset,
        todo_rows,
        skipped=skipped,
        desc=settings.desc,
        progress=settings.progress,
        total=total,
        initial=initial,
        image_transform=settings.image_transform,
        batch_size=settings.batch_size,
        num_workers=workers,
        pin_memory=step.device.type == "cuda",
        decoder=settings.decoder,
        device=step.device,
        pipeline=settings.pipeline,
    )
    # only a pass over every row, in order, can leave a complete cache
    filling = decoded is not None and todo_rows == list(range(len(work.all_ids)))
    if filling:
        batches = decoded.fill(work.all_ids, batches, skipped)
    return batches, "off" if decoded is None else "unwritten", filling


def _fill_columns(
    step: ModelStep,
    batches: Any,
    columns: _Columns,
    cache: PredictionCache | None,
    flush_every: int,
    reused: int,
) -> None:
    """Predict every batch into ``columns``, appending to ``cache`` every ``flush_every``
    images and at the end; Ctrl-C is :class:`Interrupted`, counting what was kept."""
    try:
        for batch in batches:
            columns.fill(batch.ids, prediction_rows(step, batch))
            if cache is not None and columns.unsaved >= flush_every:
                cache.append(columns.take_unsaved())
    except KeyboardInterrupt:
        flushed = reused + columns.computed if cache is not None else 0
        raise Interrupted(flushed) from None
    finally:
        # Whatever finished is kept, so an interrupted run resumes where it stopped.
        if cache is not None and columns.unsaved:
            cache.append(columns.take_unsaved())
        batches.close()


def _prediction_run(
    work: _Rows,
    columns: _Columns,
    skipped: list[dict[str, Any]],
    decoder: str,
    decode_cache: str,
    desc: str,
) -> PredictionRun:
    """The run: the reused and new predictions in the order of the rows asked for."""
    frame = pd.concat([work.done, columns.frame()], ignore_index=True) if work.todo else work.done
    scored = set(frame["id"])  # built once: inside the comprehension it is O(n^2)
    frame = frame.set_index("id").reindex([i for i in work.ids if i in scored]).reset_index()
    frame = frame.astype({"label": "int64", "pred": "int64", "pred_model": "int64"})
    if skipped:
        log.warning("%s: %d image(s) could not be read and were skipped.", desc, len(skipped))
    return PredictionRun(
        frame,  # PREDICTION_COLUMNS, then any per-image records of the model (a VLM's)
        skipped,
        computed=columns.computed,
        reused=len(work.have),
        decoder=decoder,
        decode_cache=decode_cache,
    )


class _Columns:
    """The predictions of the images ``ids``, as columns allocated once and filled in place.

    Measured (bench/evaluate_memory.py, glibc): small buffers kept per batch (one frame per
    batch) sit between the forward passes' large transient buffers and pin the heap, so the
    peak RSS grew with the number of batches (+1 GB at 4,050 images); columns allocated
    before the first forward pass keep it flat."""

    def __init__(self, ids: list[str]):
        self.ids = ids
        self.index = {image_id: k for k, image_id in enumerate(ids)}
        n = len(ids)
        self.values = {c: np.zeros(n, np.int64) for c in ("label", "pred", "pred_model")}
        self.values["prob_true"] = np.zeros(n, np.float64)
        self.scored = np.zeros(n, bool)
        self.saved = np.zeros(n, bool)
        self.computed = 0
        self.unsaved = 0

    def fill(self, batch_ids: Sequence[str], values: dict[str, Any]) -> None:
        at = np.fromiter((self.index[i] for i in batch_ids), np.int64, len(batch_ids))
        for column in values.keys() - self.values.keys():  # the model's per-image records
            self.values[column] = np.full(len(self.ids), None, dtype=object)
        for column, array in self.values.items():
            if array.dtype == object:
                for k, value in zip(at, values[column], strict=True):
                    array[k] = value
            else:
                array[at] = values[column]
        self.scored[at] = True
        self.computed += len(at)
        self.unsaved += len(at)

    def frame(self, mask: np.ndarray | None = None) -> pd.DataFrame:
        """PREDICTION_COLUMNS of the scored images (of ``mask`` when given)."""
        keep = np.flatnonzero(self.scored if mask is None else mask)
        data = {"id": [self.ids[k] for k in keep]}
        data.update({c: a[keep] for c, a in self.values.items()})
        return pd.DataFrame(data, columns=[*PREDICTION_COLUMNS, *self.extra_columns])

    @property
    def extra_columns(self) -> list[str]:
        return [c for c in self.values if c not in PREDICTION_COLUMNS]

    def take_unsaved(self) -> pd.DataFrame:
        """The scored images not yet written to the cache (now counted as written)."""
        mask = self.scored & ~self.saved
        self.saved |= mask
        self.unsaved = 0
        return self.frame(mask)


def merge_runs(shares: Sequence[PredictionRun]) -> PredictionRun:
    """One run from the runs of consecutive shares of a dataset (one per process)."""
    frames = [r.predictions for r in shares]
    return PredictionRun(
        pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0],
        [s for r in shares for s in r.skipped],
        computed=sum(r.computed for r in shares),
        reused=sum(r.reused for r in shares),
        decoder=shares[0].decoder,
        decode_cache=shares[0].decode_cache,
    )


def prediction_rows(step: ModelStep, batch) -> dict[str, np.ndarray]:
    """The PREDICTION_COLUMNS values of one batch (but ``id``), column by column."""
    out = step.predict(batch.images, batch.labels, batch.ids)
    return {
        "label": batch.labels.numpy(),
        "pred": out.pred,
        "pred_model": out.pred_model,
        "prob_true": out.prob_true,
        **out.extras,
    }
