"""The Backgrounds Challenge's on-disk cache: one row per decided foreground.

Like ``evaluate``'s prediction cache (:class:`hf_bgbench.inference.engine.PredictionCache`): Parquet
parts under ``<root>/<key>/``, each written whole (temporary file + rename), so an
interrupted run keeps every foreground it decided and a rerun computes only the rest. The
key names everything a row depends on -- the model's weights and preprocessing, the data of
both variants, the exact backgrounds (one key per chunk of them), the label protocol, the
input resize and the mode -- and nothing it does not (batch size, workers, device).

A row of an early-stop run holds the verdict, the recorded fooling background (its id) with
the prediction on that composite, how many composites the foreground took and -- for a
vulnerable one -- which backgrounds it tried and which fooled it (positions in the chunk), so
that a resumed run's schedule starts from the counts these imply; a row of a full-matrix run
holds the predictions on every background of the chunk instead.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from hf_bgbench.cache import cache_root, read_parquet_part, write_parquet_part
from hf_bgbench.inference.engine import cache_key

CACHE_COLUMNS = [
    "id",
    "label",
    "clean_pred",
    "vulnerable",
    "fooling_bg",
    "pred",
    "composites",
    "tried",
    "fooled",
    "row",
]


def default_challenge_cache_dir() -> Path:
    """``<cache root>/challenge`` (see :mod:`hf_bgbench.cache`), beside evaluate's
    ``predictions``."""
    return cache_root() / "challenge"


@dataclass(frozen=True)
class CacheIdentity:
    """What a challenge row depends on, short of the backgrounds of its chunk."""

    model: str  # classifier fingerprint
    foreground_data: str  # reader fingerprint of the foreground variant
    background_data: str  # reader fingerprint of the background variant
    foreground_variant: str
    background_variant: str
    protocol: str  # label mapping protocol
    resize: str  # input resize applied to composites ("none" or "HxW")
    mode: str  # early_stop / full_matrix
    numerics: Sequence[str] = ()  # how the forward computes (Run.numerics)

    def key(self, background_ids: Sequence[str]) -> str:
        backgrounds = hashlib.sha256("\x1f".join(background_ids).encode()).hexdigest()
        return cache_key(
            self.model,
            self.foreground_data,
            self.background_data,
            self.foreground_variant,
            self.background_variant,
            self.protocol,
            self.resize,
            self.mode,
            backgrounds,
            *self.numerics,
        )


@dataclass
class CachedRow:
    label: int
    clean_pred: int
    vulnerable: bool
    fooling_bg: str | None
    pred: int | None
    composites: int
    row: np.ndarray | None = None  # full matrix: predictions over the chunk
    tried: np.ndarray | None = None  # early stop, vulnerable: positions tried, in order
    fooled: list[int] = field(default_factory=list)  # ... of those, the ones that fooled it


class ChallengeCache:
    """Decided foregrounds of one chunk of backgrounds, by foreground id."""

    def __init__(self, root: Path, key: str):
        self.dir = Path(root) / key

    def load(self) -> dict[str, CachedRow]:
        parts = sorted(self.dir.glob("part-*.parquet")) if self.dir.is_dir() else []
        rows: dict[str, CachedRow] = {}
        frames = [read_parquet_part("challenge cache", part) for part in parts]
        for frame in (f for f in frames if f is not None):
            for rec in frame.to_dict("records"):
                rows[rec["id"]] = CachedRow(
                    label=int(rec["label"]),
                    clean_pred=int(rec["clean_pred"]),
                    vulnerable=bool(rec["vulnerable"]),
                    fooling_bg=rec["fooling_bg"] if isinstance(rec["fooling_bg"], str) else None,
                    pred=None if pd.isna(rec["pred"]) else int(rec["pred"]),
                    composites=int(rec["composites"]),
                    row=_array(rec["row"]),
                    tried=_array(rec["tried"]),
                    fooled=[int(v) for v in rec["fooled"]] if rec["fooled"] is not None else [],
                )
        return rows

    def append(self, rows: dict[str, CachedRow]) -> None:
        """Write ``rows`` as one part (complete or absent)."""
        if not rows:
            return
        self.dir.mkdir(parents=True, exist_ok=True)
        records = [
            {
                "id": image_id,
                "label": r.label,
                "clean_pred": r.clean_pred,
                "vulnerable": r.vulnerable,
                "fooling_bg": r.fooling_bg,
                "pred": r.pred,
                "composites": r.composites,
                "tried": None if r.tried is None else r.tried.astype(np.int32).tolist(),
                "fooled": list(r.fooled),
                "row": None if r.row is None else r.row.astype(np.int16).tolist(),
            }
            for image_id, r in rows.items()
        ]
        frame = pd.DataFrame(records, columns=CACHE_COLUMNS)
        frame["pred"] = frame["pred"].astype("Int64")
        write_parquet_part(frame, self.dir / f"part-{uuid.uuid4().hex}.parquet")


def _array(value: Any) -> np.ndarray | None:
    return None if value is None else np.asarray(value, np.int64)
