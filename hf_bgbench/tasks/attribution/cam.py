"""The passes of the ``attribution`` task (:mod:`hf_bgbench.tasks.attribution`): the
penultimate features of a split, the top-k images of each class per feature, and Grad-CAM
with respect to one feature (grad-cam with a target that returns that feature's activation)
compared with every attribute mask of the image (IoU of the map binarised at tau of its
maximum, :func:`hf_bgbench.metrics.saliency.saliency_iou`)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from hf_bgbench.data.loader import Geometry
from hf_bgbench.data.masks import ATTRIBUTE_MASKS, attribute_masks
from hf_bgbench.inference.cam import CamRunner, LayerChoice, choose_target_layer
from hf_bgbench.inference.model_step import ModelStep, backbone_features
from hf_bgbench.metrics.saliency import saliency_iou
from hf_bgbench.tasks.runner import Run

Pair = tuple[int, int]  # (class, feature)


class FeatureModel(torch.nn.Module):
    """[0, 1] images -> (N, D) penultimate features with gradients (the model step's
    normalisation and resize included): the module grad-cam explains."""

    def __init__(self, step: ModelStep):
        super().__init__()
        self.step = step
        self.model = step.classifier.model  # registered, so grad-cam finds its layers

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with torch.enable_grad():
            return backbone_features(self.step.classifier, self.step.prepare(x)).float()


class FeatureTarget:
    """A grad-cam target: the activation of penultimate feature ``feature``."""

    def __init__(self, feature: int):
        self.feature = feature

    def __call__(self, output: torch.Tensor) -> torch.Tensor:
        return output[self.feature]


@dataclass
class Features:
    """One split's pass: ids, benchmark labels and (n, D) penultimate features, in order."""

    ids: list[str]
    labels: np.ndarray
    values: np.ndarray
    skipped: list[dict[str, Any]]


def feature_pass(run: Run, ds: Any, rows: Sequence[int], geometry: Geometry | None, desc: str):
    skipped: list[dict[str, Any]] = []
    ids, labels, values = [], [], []
    batches = run.batches(ds, rows, skipped=skipped, desc=desc, geometry=geometry)
    try:
        for batch in batches:
            ids += batch.ids
            labels.append(batch.labels.numpy())
            values.append(run.step.features(batch.images).cpu().numpy())
    finally:
        batches.close()
    if not ids:
        return Features([], np.zeros(0, np.int64), np.zeros((0, 0), np.float32), skipped)
    return Features(ids, np.concatenate(labels), np.concatenate(values), skipped)


def examined(feats: Features, cls: int, most: int | None) -> list[int]:
    """The features examined for class ``cls``: all, or the ``most`` with the highest mean
    activation on the class's images (ties: the lower index)."""
    mean = feats.values[feats.labels == cls].mean(axis=0)
    order = np.argsort(-mean, kind="stable")
    return sorted(int(f) for f in order[: most or len(order)])


def top_images(feats: Features, pairs: Iterable[Pair], k: int) -> dict[Pair, list[int]]:
    """Per (class, feature): the positions of the class's ``k`` images with the highest
    activation of the feature, highest first (ties: the earlier image)."""
    out = {}
    for cls, f in pairs:
        where = np.flatnonzero(feats.labels == cls)
        order = np.argsort(-feats.values[where, f], kind="stable")
        out[(cls, f)] = [int(p) for p in where[order[:k]]]
    return out


@dataclass
class CamScores:
    """IoU sums and counts of one Grad-CAM pass: ``iou[(c, f, a)]`` (summed over the top
    images), ``present[(c, f, a)]`` (top images with attribute a), ``done[(c, f)]`` (top
    images read), the kept panels and the layer explained."""

    iou: dict[tuple[int, int, str], float] = field(default_factory=lambda: defaultdict(float))
    present: dict[tuple[int, int, str], int] = field(default_factory=lambda: defaultdict(int))
    done: dict[Pair, int] = field(default_factory=lambda: defaultdict(int))
    kept: list[dict[str, Any]] = field(default_factory=list)
    layer: LayerChoice | None = None

    def mean(self, cls: int, f: int, attribute: str) -> float:
        """Mean IoU over the top images read (an image without the attribute counts 0)."""
        n = self.done.get((cls, f), 0)
        return self.iou.get((cls, f, attribute), 0.0) / n if n else float("nan")


def _layer(step: ModelStep, model: FeatureModel, hw: Any) -> LayerChoice:
    """The layer the saliency task explains, found at the data's size."""
    blank = torch.zeros(1, 3, *(int(v) for v in hw), device=step.device)
    hint = getattr(step.classifier, "cam_layer", None)
    return choose_target_layer(step.classifier.model, lambda: model(blank), hint=hint)


def cam_pass(
    run: Run,
    ds: Any,
    feats: Features,
    tops: dict[Pair, list[int]],
    geometry: Geometry | None,
    tau: float,
    *,
    desc: str,
    keep: bool = False,
    layer: LayerChoice | None = None,
) -> CamScores:
    """Grad-CAM of feature f on each top image of every (c, f) in ``tops``; IoU with each
    attribute mask of the image. ``keep``: the images, maps and masks are kept too."""
    if not tops:
        return CamScores(layer=layer)
    jobs = _jobs(tops)
    position = {i: p for p, i in enumerate(feats.ids)}
    row_of = {i: r for r, i in enumerate(ds["id"])}
    rows = sorted(row_of[feats.ids[p]] for p in jobs)
    scores, model, skipped = CamScores(layer=layer), FeatureModel(run.step), []
    batches = run.batches(
        ds, rows, skipped=skipped, desc=desc, columns=(ATTRIBUTE_MASKS,), geometry=geometry
    )
    runner = None
    try:
        for batch in batches:
            if runner is None:
                scores.layer = scores.layer or _layer(run.step, model, batch.images.shape[-2:])
                runner = CamRunner(model, scores.layer).__enter__()
            work = [(i, c, f) for i, name in enumerate(batch.ids) for c, f in jobs[position[name]]]
            _score_batch(scores, runner, batch, work, geometry, tau, run.batch_size, keep=keep)
    finally:
        batches.close()
        if runner is not None:
            runner.__exit__(None, None, None)
    return scores


def _jobs(tops: dict[Pair, list[int]]) -> dict[int, list[Pair]]:
    """Per image position: the (class, feature) pairs whose top images it is among."""
    jobs: dict[int, list[Pair]] = defaultdict(list)
    for pair, positions in tops.items():
        for p in positions:
            jobs[p].append(pair)
    return jobs


def _score_batch(
    scores: CamScores,
    runner: CamRunner,
    batch: Any,
    work: list[tuple[int, int, int]],
    geometry: Geometry | None,
    tau: float,
    chunk_size: int,
    *,
    keep: bool,
) -> None:
    """Grad-CAM of each (image index, class, feature) of ``work`` on one batch, ``chunk_size``
    maps at a time, scored into ``scores`` (and kept as panels when ``keep``)."""
    masks = [attribute_masks(e, geometry) for e in batch.columns[ATTRIBUTE_MASKS]]
    for start in range(0, len(work), chunk_size):
        chunk = work[start : start + chunk_size]
        x = batch.images[[i for i, _, _ in chunk]].float().div(255)
        maps, _ = runner(x, [FeatureTarget(f) for _, _, f in chunk])
        for (i, c, f), cam in zip(chunk, maps, strict=True):
            _score(scores, c, f, cam, *masks[i], tau)
            if keep:
                scores.kept.append(_panel(batch, i, c, f, cam, masks[i]))


def _score(scores: CamScores, c: int, f: int, cam: np.ndarray, names, masks, tau) -> None:
    scores.done[(c, f)] += 1
    if not names:
        return
    ious = np.atleast_1d(saliency_iou(np.broadcast_to(cam, masks.shape), masks, tau))
    for name, iou in zip(names, np.nan_to_num(ious, nan=0.0).tolist(), strict=True):
        scores.iou[(c, f, name)] += iou
        scores.present[(c, f, name)] += 1


def _panel(batch, i: int, c: int, f: int, cam: np.ndarray, masks) -> dict[str, Any]:
    names, arrays = masks
    return {
        "id": batch.ids[i],
        "class": c,
        "feature": f,
        "image": batch.images[i].permute(1, 2, 0).numpy().copy(),
        "map": cam.astype(np.float16),
        "masks": dict(zip(names, arrays, strict=True)),
    }
