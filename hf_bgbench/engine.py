"""The inference engine: a model step over a whole dataset, with a resumable cache.

Streams batches through the public decode loader (:func:`hf_bgbench.data.loader.
decode_loader`), runs the public model step (:class:`hf_bgbench.model_step.ModelStep`) and
keeps a prediction cache on disk keyed by (model, data, variant, protocol) and image id, so
a rerun or an interrupted run only computes the images that are missing.
"""

from __future__ import annotations

import hashlib
import logging
import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import datasets
import pandas as pd
import torch
from PIL import Image
from tqdm.auto import tqdm

from hf_bgbench.cache import cache_root
from hf_bgbench.data.loader import decode_loader, iterate
from hf_bgbench.data.schema import ID
from hf_bgbench.model_step import ModelStep

log = logging.getLogger(__name__)

PREDICTION_COLUMNS = ["id", "label", "pred", "pred_model", "prob_true"]


def default_num_workers() -> int:
    # Measured on 2 cores (bench/engine_throughput.py): two decode workers beside the model's
    # threads beat one; more than 4 gains nothing for one model.
    return max(1, min(4, os.cpu_count() or 2))


def default_cache_dir() -> Path:
    """``<cache root>/predictions`` (see :mod:`hf_bgbench.cache`)."""
    return cache_root() / "predictions"


def cache_key(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:24]


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during a run; ``cached`` images are safe in the prediction cache."""

    def __init__(self, cached: int):
        super().__init__(f"{cached} image(s) cached")
        self.cached = cached


@dataclass
class PredictionRun:
    """Predictions for one dataset, in dataset order, plus what was skipped and reused."""

    predictions: pd.DataFrame
    skipped: list[dict[str, Any]] = field(default_factory=list)
    computed: int = 0
    reused: int = 0


class PredictionCache:
    """Parquet parts under ``root/key/``; each part holds finished rows of PREDICTION_COLUMNS."""

    def __init__(self, root: Path, key: str):
        self.dir = Path(root) / key

    def load(self) -> pd.DataFrame:
        parts = sorted(self.dir.glob("part-*.parquet")) if self.dir.is_dir() else []
        if not parts:
            return pd.DataFrame(columns=PREDICTION_COLUMNS)
        frame = pd.concat([pd.read_parquet(p) for p in parts], ignore_index=True)
        return frame.drop_duplicates("id", keep="last")

    def append(self, rows: list[dict[str, Any]]) -> None:
        if not rows:
            return
        self.dir.mkdir(parents=True, exist_ok=True)
        target = self.dir / f"part-{uuid.uuid4().hex}.parquet"
        tmp = target.with_suffix(".tmp")
        pd.DataFrame(rows, columns=PREDICTION_COLUMNS).to_parquet(tmp, index=False)
        os.replace(tmp, target)  # a part is either complete or absent


def predict(
    step: ModelStep,
    dataset: datasets.Dataset,
    *,
    image_transform: Callable[[Image.Image], torch.Tensor] | None = None,
    batch_size: int = 32,
    num_workers: int | None = None,
    cache: PredictionCache | None = None,
    flush_every: int = 256,
    desc: str = "predict",
    progress: bool = True,
) -> PredictionRun:
    """Run ``step`` over ``dataset``; reuse and extend ``cache`` when given.

    ``image_transform`` (PIL -> uint8 tensor) runs per image in the decode workers; the
    model step normalises each uint8 batch on the device.
    """
    ids = list(dataset[ID]) if len(dataset) else []
    if len(set(ids)) != len(ids):
        raise ValueError(f"{desc}: image ids repeat; every row needs a unique 'id'.")
    done = cache.load() if cache is not None else pd.DataFrame(columns=PREDICTION_COLUMNS)
    done = done[done["id"].isin(set(ids))]
    have = set(done["id"])
    todo = [i for i, image_id in enumerate(ids) if image_id not in have]

    rows: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    if todo:
        workers = default_num_workers() if num_workers is None else num_workers
        loader = decode_loader(
            dataset,
            todo,
            image_transform=image_transform,
            batch_size=batch_size,
            num_workers=workers,
            pin_memory=step.device.type == "cuda",
        )
        bar = tqdm(total=len(ids), initial=len(have), desc=desc, unit="img", disable=not progress)
        pending: list[dict[str, Any]] = []
        try:
            for batch in iterate(loader):
                skipped.extend(batch.skipped)
                batch_rows = prediction_rows(step, batch) if batch.images is not None else []
                rows.extend(batch_rows)
                pending.extend(batch_rows)
                if cache is not None and len(pending) >= flush_every:
                    cache.append(pending)
                    pending = []
                bar.update(len(batch_rows) + len(batch.skipped))
        except KeyboardInterrupt:
            flushed = len(have) + len(rows) if cache is not None else 0
            raise Interrupted(flushed) from None
        finally:
            # Whatever finished is kept, so an interrupted run resumes where it stopped.
            if cache is not None:
                cache.append(pending)
            bar.close()
    frame = pd.concat([done, pd.DataFrame(rows, columns=PREDICTION_COLUMNS)], ignore_index=True)
    scored = set(frame["id"])  # built once: inside the comprehension it is O(n^2)
    frame = frame.set_index("id").reindex([i for i in ids if i in scored]).reset_index()
    frame = frame.astype({"label": "int64", "pred": "int64", "pred_model": "int64"})
    if skipped:
        log.warning("%s: %d image(s) could not be read and were skipped.", desc, len(skipped))
    return PredictionRun(frame[PREDICTION_COLUMNS], skipped, computed=len(rows), reused=len(have))


def prediction_rows(step: ModelStep, batch) -> list[dict[str, Any]]:
    """One PREDICTION_COLUMNS row per image of ``batch``."""
    out = step.predict(batch.images, batch.labels)
    return [
        {"id": i, "label": int(y), "pred": int(p), "pred_model": int(pm), "prob_true": float(pt)}
        for i, y, p, pm, pt in zip(
            batch.ids, batch.labels.tolist(), out.pred, out.pred_model, out.prob_true, strict=True
        )
    ]
