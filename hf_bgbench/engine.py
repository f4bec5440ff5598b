"""The one inference engine: any classifier over any benchmark dataset.

Streams batches from a ``datasets.Dataset`` (decode + transform in DataLoader workers, off
the main process), runs the model under ``torch.inference_mode`` (AMP and channels_last on
CUDA), maps outputs to benchmark predictions, and keeps a prediction cache on disk keyed by
(model, data, variant, protocol) and image id, so a rerun or an interrupted run only
computes the images that are missing.
"""

from __future__ import annotations

import hashlib
import logging
import os
import uuid
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import datasets
import pandas as pd
import torch
from tqdm.auto import tqdm

from hf_bgbench.data.schema import ID, IMAGE, LABEL
from hf_bgbench.mapping import LabelMapper

log = logging.getLogger(__name__)

PREDICTION_COLUMNS = ["id", "label", "pred", "pred_model", "prob_true"]


class SupportsLogits(Protocol):
    """What the engine needs from a classifier (see :class:`hf_bgbench.models.Classifier`)."""

    model: torch.nn.Module
    fingerprint: str

    def logits(self, batch: torch.Tensor) -> torch.Tensor: ...


def default_device() -> torch.device:
    if torch.cuda.is_available():
        return torch.device("cuda")
    if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def default_num_workers() -> int:
    # Measured on 2 cores (bench/engine_throughput.py): two decode workers beside the model's
    # threads beat one; more than 4 gains nothing for one model.
    return max(1, min(4, os.cpu_count() or 2))


def default_cache_dir() -> Path:
    if "HF_BGBENCH_CACHE" in os.environ:
        return Path(os.environ["HF_BGBENCH_CACHE"])
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return base / "hf_bgbench" / "predictions"


def cache_key(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:24]


class _DecodedView(torch.utils.data.Dataset):
    """Rows ``indices`` of ``ds``, decoded and transformed; a bad image becomes an error row."""

    def __init__(self, ds: datasets.Dataset, indices: list[int], transform: Callable):
        self.ds = ds.select_columns([IMAGE, LABEL, ID]).cast_column(
            IMAGE, datasets.Image(decode=False)
        )
        self.indices = indices
        self.transform = transform
        self.decoder = datasets.Image()

    def __len__(self) -> int:
        return len(self.indices)

    def __getitem__(self, i: int):
        row = self.ds[self.indices[i]]
        try:
            image = self.decoder.decode_example(row[IMAGE])
            return self.transform(image), row[LABEL], row[ID], None
        except Exception as err:  # corrupt or unreadable image: counted and reported
            return None, row[LABEL], row[ID], f"{type(err).__name__}: {err}"


def _collate(items):
    good = [it for it in items if it[3] is None]
    bad = [{"id": it[2], "label": it[1], "reason": it[3]} for it in items if it[3] is not None]
    if not good:
        return None, None, [], bad
    x = torch.stack([it[0] for it in good])
    y = torch.tensor([it[1] for it in good], dtype=torch.long)
    return x, y, [it[2] for it in good], bad


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
    classifier: SupportsLogits,
    dataset: datasets.Dataset,
    mapper: LabelMapper,
    transform: Callable,
    *,
    batch_transform: Callable[[torch.Tensor], torch.Tensor] | None = None,
    batch_size: int = 32,
    num_workers: int | None = None,
    device: str | torch.device | None = None,
    cache: PredictionCache | None = None,
    flush_every: int = 256,
    desc: str = "predict",
    progress: bool = True,
) -> PredictionRun:
    """Run ``classifier`` over ``dataset``; reuse and extend ``cache`` when given.

    ``transform`` runs per image in the workers; ``batch_transform`` (e.g. normalisation of
    uint8 batches) runs per batch on the device.
    """
    ids = list(dataset[ID]) if len(dataset) else []
    if len(set(ids)) != len(ids):
        raise ValueError(f"{desc}: image ids repeat; every row needs a unique 'id'.")
    done = cache.load() if cache is not None else pd.DataFrame(columns=PREDICTION_COLUMNS)
    done = done[done["id"].isin(set(ids))]
    have = set(done["id"])
    todo = [i for i, image_id in enumerate(ids) if image_id not in have]

    device = torch.device(device) if device is not None else default_device()
    rows: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    if todo:
        workers = default_num_workers() if num_workers is None else num_workers
        loader = torch.utils.data.DataLoader(
            _DecodedView(dataset, todo, transform),
            batch_size=batch_size,
            num_workers=workers,
            collate_fn=_collate,
            pin_memory=device.type == "cuda",
            prefetch_factor=4 if workers > 0 else None,
        )
        bar = tqdm(total=len(ids), initial=len(have), desc=desc, unit="img", disable=not progress)
        pending: list[dict[str, Any]] = []
        try:
            for batch_rows, bad in _forward(
                classifier.to(device), loader, mapper, device, batch_transform
            ):
                skipped.extend(bad)
                rows.extend(batch_rows)
                pending.extend(batch_rows)
                if cache is not None and len(pending) >= flush_every:
                    cache.append(pending)
                    pending = []
                bar.update(len(batch_rows) + len(bad))
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


def _forward(classifier: SupportsLogits, loader, mapper: LabelMapper, device, batch_transform):
    """Yield (prediction rows, skipped items) per batch."""
    cuda = device.type == "cuda"
    if cuda:
        classifier.model.to(memory_format=torch.channels_last)
    amp = torch.autocast("cuda", dtype=torch.float16) if cuda else nullcontext()
    with torch.inference_mode():
        for x, y, batch_ids, bad in loader:
            if x is None:
                yield [], bad
                continue
            x = x.to(device, non_blocking=True)
            if batch_transform is not None:
                x = batch_transform(x)
            if cuda:
                x = x.contiguous(memory_format=torch.channels_last)
            with amp:
                logits = classifier.logits(x)
            pred, pred_model, prob = mapper(logits, y)
            rows = [
                {
                    "id": i,
                    "label": int(lab),
                    "pred": int(p),
                    "pred_model": int(pm),
                    "prob_true": float(pt),
                }
                for i, lab, p, pm, pt in zip(
                    batch_ids, y.tolist(), pred, pred_model, prob, strict=True
                )
            ]
            yield rows, bad
