"""The noise of the noise analysis (:mod:`hf_bgbench.tasks.noise`): the levels, the seeded
per-image draws, the noisy copies (one multiply-add per region), and the batcher that forwards
them in full batches through the model step."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np
import torch

from hf_bgbench.data.loader import Batch, DataError
from hf_bgbench.data.masks import MASK_THRESHOLD, attribute_masks
from hf_bgbench.inference.model_step import ModelStep
from hf_bgbench.tasks.noise.levels import (
    FG,
    NoiseSettings,
)


class Batcher:
    """Collects images (with their labels and result slots) and forwards them in full
    batches of ``batch_size``; predictions land in ``pred`` / ``prob`` at the slots."""

    def __init__(self, step: ModelStep, batch_size: int, n_slots: int):
        self.step, self.batch_size = step, batch_size
        self.pred = np.full(n_slots, -2, np.int64)
        self.prob = np.zeros(n_slots, np.float32)
        self.pending: tuple[torch.Tensor, torch.Tensor, np.ndarray] | None = None
        self.forwarded = 0

    def add(self, x: torch.Tensor, labels: torch.Tensor, slots: np.ndarray) -> None:
        if self.pending is not None and self.pending[0].shape[1:] != x.shape[1:]:
            self.finish()  # another image size: close the batch of the previous size
        if self.pending is not None:
            px, pl, ps = self.pending
            x, labels, slots = (
                torch.cat([px, x]),
                torch.cat([pl, labels]),
                np.concatenate([ps, slots]),
            )
        full = len(x) - len(x) % self.batch_size
        for start in range(0, full, self.batch_size):
            stop = start + self.batch_size
            self._forward(x[start:stop], labels[start:stop], slots[start:stop])
        self.pending = (x[full:], labels[full:], slots[full:]) if full < len(x) else None

    def finish(self) -> None:
        if self.pending is not None:
            self._forward(*self.pending)
            self.pending = None

    def _forward(self, x: torch.Tensor, labels: torch.Tensor, slots: np.ndarray) -> None:
        out = self.step.predict(x, labels)
        self.pred[slots] = out.pred
        self.prob[slots] = out.prob_true
        self.forwarded += len(x)


def decode_chunk(batch_size: int, trials: int) -> int:
    """Images decoded at once: enough that their noisy copies fill about one batch."""
    return max(1, min(16, math.ceil(batch_size / (2 * trials))))


def noisy_predictions(
    batches: Iterable[Batch],
    n: int,
    step: ModelStep,
    noise: NoiseSettings,
    batch_size: int,
    mask_column: str,
    skipped: list[dict[str, Any]],
    *,
    attributes: str | None = None,
    geometry: Any = None,
) -> dict[str, Any]:
    """Each decoded image (``n`` at most, with its mask) once, clean; per level, all trials'
    noisy copies through the batcher. ``skipped``: the unreadable rows the batches set aside.

    Slots: the clean image i at i; its copy (level l, region r, trial t) at
    n + ((i * L + l) * 2 + r) * T + t, L = len(levels). With ``attributes`` (the attribute
    masks' column, sized by ``geometry``), each attribute's mask also gets the object copy's
    noise alone: ``out["attributes"][i]`` = {attribute: bool (L, T) correct}."""
    batcher = Batcher(step, batch_size, n + n * _copies_per_image(noise))
    ids: list[str] = []
    labels: list[int] = []
    by_attribute: list[dict[str, np.ndarray]] = []
    for batch in batches:
        parts = _attribute_parts(batch, attributes, geometry, step.device) if attributes else None
        _forward_batch(batch, len(ids), n, batcher, noise, mask_column, parts)
        if parts is not None:
            by_attribute.extend(_attribute_results(parts))
        ids.extend(batch.ids)
        labels.extend(batch.labels.tolist())
    batcher.finish()
    return _predictions(batcher, ids, labels, n, noise) | {
        "skipped": skipped,
        "forwarded": batcher.forwarded,
        "attributes": by_attribute if attributes else None,
    }


def _copies_per_image(noise: NoiseSettings) -> int:
    """The noisy copies of one image: one per level, region (object, background) and trial."""
    return len(noise.levels) * 2 * noise.trials


def _forward_batch(
    batch: Batch,
    first: int,
    n: int,
    batcher: Batcher,
    noise: NoiseSettings,
    mask_column: str,
    parts: list | None,
) -> None:
    """Adds the images of ``batch`` (rows ``first`` on) to the batcher clean, then per level
    all trials' noisy copies at their slots; with ``parts``, each attribute's noise alone."""
    step, trials = batcher.step, noise.trials
    per_image = _copies_per_image(noise)
    offsets = np.arange(per_image).reshape(len(noise.levels), 2 * trials)
    rows = np.arange(first, first + len(batch))
    x = batch.images.to(step.device).float().div_(255)
    m = (batch.columns[mask_column].to(step.device) >= MASK_THRESHOLD).float()
    y = batch.labels
    batcher.add(x, y, rows)
    repeated = y.repeat_interleave(2 * trials)
    for level_index, level in enumerate(noise.levels):
        z = noise.draw(batch.ids, x.shape[1:], level, step.device)
        copies = noise.copies(x, m, z, level).flatten(0, 2)
        slots = n + (rows[:, None] * per_image + offsets[level_index]).ravel()
        batcher.add(copies, repeated, slots)
        if parts is not None:
            _attribute_copies(parts, x, y, z, level, level_index, noise, step, batcher.batch_size)


def _predictions(
    batcher: Batcher, ids: list[str], labels: list[int], n: int, noise: NoiseSettings
) -> dict[str, Any]:
    """The ids and labels of the images read, and the batcher's predictions and true-class
    probabilities: clean per image, noisy per (image, level, region, trial)."""
    k = len(ids)
    noisy = n + np.arange(k * _copies_per_image(noise))
    shape = (k, len(noise.levels), 2, noise.trials)
    return {
        "ids": ids,
        "labels": np.asarray(labels, np.int64),
        "clean_pred": batcher.pred[:k],
        "clean_prob": batcher.prob[:k].astype(np.float64),
        "pred": batcher.pred[noisy].reshape(shape),
        "prob": batcher.prob[noisy].reshape(shape).astype(np.float64),
    }


def _attribute_results(parts: list) -> list[dict[str, np.ndarray]]:
    """Per image of the parts: {attribute: bool (L, T) correct}, its levels stacked."""
    return [
        {a: np.stack(c) for a, c in zip(names, correct, strict=True)} for names, _, correct in parts
    ]


def _attribute_parts(batch: Batch, column: str, geometry: Any, device: Any) -> list:
    """Per image of ``batch``: (attribute names, float (k, 1, H, W) masks on ``device``, one
    list of per-level correct arrays per attribute, filled by :func:`_attribute_copies`)."""
    parts = []
    for entries in batch.columns[column]:
        names, masks = attribute_masks(entries, geometry)
        tensor = torch.from_numpy(masks).to(device).float().unsqueeze(1) if names else None
        parts.append((names, tensor, [[] for _ in names]))
    return parts


def _attribute_copies(
    parts: list,
    x: torch.Tensor,
    labels: torch.Tensor,
    z: torch.Tensor,
    level: float,
    level_index: int,
    noise: NoiseSettings,
    step: ModelStep,
    batch_size: int,
) -> None:
    """Each image's noise ``z`` (its object copy's draw) on each attribute's mask alone,
    forwarded in batches of ``batch_size``; appends (T,) correct per attribute."""
    for i, (names, masks, correct) in enumerate(parts):
        if not names:
            continue
        if masks.shape[-2:] != x.shape[-2:]:
            raise DataError(
                f"attribute masks are {masks.shape[-2]}x{masks.shape[-1]} but the image is "
                f"{x.shape[-2]}x{x.shape[-1]}; attribute masks must have their image's size."
            )
        k = len(names)
        copies = noise.copies(
            x[i : i + 1].expand(k, -1, -1, -1), masks, z[i : i + 1].expand(k, *z.shape[1:]), level
        )
        flat = copies[:, FG].flatten(0, 1)  # (k * T, 3, H, W): noise on the attribute only
        preds = np.concatenate(
            [
                step.predict(flat[s : s + batch_size], int(labels[i])).pred
                for s in range(0, len(flat), batch_size)
            ]
        )
        right = (preds == int(labels[i])).reshape(k, noise.trials)
        for j in range(k):
            correct[j].append(right[j])
