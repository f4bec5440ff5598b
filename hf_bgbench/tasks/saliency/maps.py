"""The per-batch work of the ``saliency`` task (:mod:`hf_bgbench.tasks.saliency`): Grad-CAM on
the target class of each image (:mod:`hf_bgbench.inference.cam`), compared with its object
mask (and, when the data has them, its attributes' masks) by the metric core
(:mod:`hf_bgbench.metrics.saliency`), keeping the gallery of the images whose saliency sits
most on the background."""

from __future__ import annotations

import heapq
from typing import Any

import numpy as np
import torch

from hf_bgbench.data.loader import Batch, Geometry
from hf_bgbench.data.masks import ATTRIBUTE_MASKS
from hf_bgbench.inference.cam import CamRunner, ClassTarget, LayerChoice, choose_target_layer
from hf_bgbench.inference.model_step import ModelStep
from hf_bgbench.metrics.saliency import (
    COVERAGE_THRESHOLDS,
    delta_density,
    saliency_average_precision,
    saliency_fraction_inside,
    saliency_iou,
    saliency_mask_coverage,
)
from hf_bgbench.tasks.saliency.summary import attribute_shares

PER_IMAGE = (
    "labels",
    "target_class",
    "pred",
    "pred_model",
    "prob_true",
    "iou",
    "inside",
    "delta",
    "ap",
    *(f"coverage_{round(100 * t)}" for t in COVERAGE_THRESHOLDS),
    "mask_area",
)


def target_rule(target: str, restrict: bool) -> str:
    if target == "true":
        return "the true class (the highest-scoring model class mapped to it)"
    if restrict:
        return "the predicted class (the highest-scoring model class mapped to the benchmark)"
    return "the predicted class (the model's argmax over all its classes)"


class SaliencyMaps:
    """Saliency of each batch of images against its masks; ``out`` collects, per image,
    the values of :data:`PER_IMAGE` (the labels and predictions, then the scores: ``iou``,
    ``inside`` (fraction of saliency inside the mask), ``delta`` (delta density), ``ap``
    (average precision of the map against the mask) and ``coverage_25/50/75`` (mask
    coverage at 25/50/75 % of the cumulative saliency; at 25 %: the saliency recall), NaN
    where undefined), the attribute shares and the ``gallery`` lowest delta densities. The
    CAM runner opens on the first batch (its layer is chosen at the data's size) and closes
    with :meth:`close`."""

    def __init__(
        self,
        step: ModelStep,
        mask_column: str,
        target: str,
        target_layer: str | None,
        method: str,
        geometry: Geometry | None,
        gallery: int,
    ):
        self.step, self.mask_column, self.target = step, mask_column, target
        self.target_layer, self.method = target_layer, method
        self.geometry, self.gallery = geometry, gallery
        self.table = torch.as_tensor(step.mapper.table)
        self.out: dict[str, Any] = {k: [] for k in PER_IMAGE}
        self.out.update(ids=[], skipped=[], attributes=[], gallery=[], layer=None)
        self.runner: CamRunner | None = None

    def close(self) -> None:
        if self.runner is not None:
            self.runner.__exit__(None, None, None)
            self.runner = None
        self.out["gallery"] = [item for _, _, item in sorted(self.out["gallery"], key=_first)]

    def add(self, batch: Batch) -> None:
        out = self.out
        if self.runner is None:
            out["layer"] = self._layer(batch.images.shape[-2:])
            self.runner = CamRunner(self.step.gradient_module(), out["layer"], self.method)
            self.runner.__enter__()
        targets = self._targets(batch.labels)
        maps, logits = self.runner(batch.images.float().div(255), targets)
        masks = batch.columns[self.mask_column][:, 0].numpy() > 0
        if maps.shape[-2:] != masks.shape[-2:]:  # only if the model step changed the size
            maps = (
                torch.nn.functional.interpolate(
                    torch.from_numpy(maps)[:, None], size=masks.shape[-2:], mode="bilinear"
                )[:, 0]
                .clamp_(0, 1)
                .numpy()
            )
        pred, pred_model, prob = self.step.mapper(logits, batch.labels)
        delta = np.atleast_1d(delta_density(maps, masks))
        values = {
            "labels": batch.labels.tolist(),
            "target_class": [t.chosen for t in targets],
            "pred": pred.tolist(),
            "pred_model": pred_model.tolist(),
            "prob_true": prob.tolist(),
            "iou": np.atleast_1d(saliency_iou(maps, masks)).tolist(),
            "inside": np.atleast_1d(saliency_fraction_inside(maps, masks)).tolist(),
            "delta": delta.tolist(),
            "ap": np.atleast_1d(saliency_average_precision(maps, masks)).tolist(),
            "mask_area": masks.mean(axis=(1, 2)).tolist(),
        }
        coverage = saliency_mask_coverage(maps, masks, COVERAGE_THRESHOLDS).reshape(
            len(masks), len(COVERAGE_THRESHOLDS)
        )
        for j, t in enumerate(COVERAGE_THRESHOLDS):
            values[f"coverage_{round(100 * t)}"] = coverage[:, j].tolist()
        for key, vals in values.items():
            out[key].extend(vals)
        if ATTRIBUTE_MASKS in batch.columns:
            for i, row in enumerate(batch.columns[ATTRIBUTE_MASKS]):
                out["attributes"].append(
                    attribute_shares(row, maps[i], self.geometry, batch.ids[i])
                )
        self._keep_lowest(batch, targets, maps, masks, delta)
        out["ids"].extend(batch.ids)

    def _layer(self, hw: Any) -> LayerChoice:
        # the data's size: the model step resizes it as it will resize the images
        step = self.step
        blank = torch.zeros(1, 3, *(int(v) for v in hw), device=step.device)
        return choose_target_layer(
            step.classifier.model,
            lambda: step.logits(blank),
            self.target_layer,
            hint=getattr(step.classifier, "cam_layer", None),
        )

    def _targets(self, labels: torch.Tensor) -> list[ClassTarget]:
        if self.target == "true":
            return [ClassTarget(self.table == int(y)) for y in labels]
        allowed = (self.table >= 0) if self.step.mapper.restrict else None
        return [ClassTarget(allowed) for _ in labels]

    def _keep_lowest(self, batch: Batch, targets, maps, masks, delta) -> None:
        heap, seen = self.out["gallery"], len(self.out["ids"])
        images = batch.images.permute(0, 2, 3, 1).numpy()
        for i, value in enumerate(delta.tolist()):
            if self.gallery and not np.isnan(value) and maps[i].max() > 0:  # blank: nothing
                item = {
                    "id": batch.ids[i],
                    "label": int(batch.labels[i]),
                    "target_class": targets[i].chosen,
                    "delta": value,
                    "image": images[i].copy(),
                    "map": maps[i].astype(np.float16),
                    "mask": masks[i].copy(),
                }
                entry = (-value, seen + i, item)  # keep the lowest delta density
                if len(heap) < self.gallery:
                    heapq.heappush(heap, entry)
                else:
                    heapq.heappushpop(heap, entry)


def _first(entry: tuple) -> float:
    return -entry[0]
