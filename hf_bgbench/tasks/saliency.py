"""The ``saliency`` task: does the model look at the object? (RIVAL10; Moayeri et al., 2022;
SPEC §2 "Saliency alignment").

For every image of the benchmark's mask variant (IN-9 ``original`` + ``mask``; RIVAL10
``ordinary`` + ``object_mask``), Grad-CAM (the ``grad-cam`` package, through
:mod:`hf_bgbench.inference.cam`) on the predicted class -- or the true class -- gives a saliency
map at
the mask's size, compared with the object mask by the metric core
(:mod:`hf_bgbench.metrics.saliency`): IoU after max-normalising and binarising at 0.5, the
share of saliency inside the mask, and delta density (mean saliency on the object minus on
the background). On RIVAL10 also the share of saliency on each present attribute's mask.

Images reach the model through the public decode loader and model step: IN-9's 224x224
images with their masks as they are (resized on the device only when the model cannot take
them), RIVAL10's photos through the model's eval resize + centre crop applied alike to the
image and its masks. Numbers are averaged over images (per image, per class of the true
label, per attribute) with seeded percentile-bootstrap intervals.
"""

from __future__ import annotations

import heapq
import logging
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm.auto import tqdm

from hf_bgbench.data.loader import DataError, Geometry, decode_loader, iterate
from hf_bgbench.data.sources import DataSourceError
from hf_bgbench.inference.cam import (
    METHODS,
    CamRunner,
    ClassTarget,
    LayerChoice,
    choose_target_layer,
)
from hf_bgbench.inference.devices import default_batch_size
from hf_bgbench.inference.engine import default_num_workers
from hf_bgbench.inference.model_step import ModelStep
from hf_bgbench.metrics.saliency import delta_density, saliency_fraction_inside, saliency_iou
from hf_bgbench.results import make_document
from hf_bgbench.tasks import Task, register_task
from hf_bgbench.tasks.common import (
    masked_geometry,
    model_step_for,
    run_header,
    seeded_subset,
    start_task,
    write_run,
)
from hf_bgbench.tasks.saliency_summary import (
    attribute_shares,
    saliency_report_section,
    summarize,
    write_saliency_files,
)

log = logging.getLogger(__name__)

TARGETS = ("predicted", "true")
ACCELERATOR_BATCH_SIZE = 32  # on a GPU when none is given (a CPU: devices.CPU_BATCH_SIZE)
ATTRIBUTE_MASKS = "attribute_masks"  # RIVAL10: [{"attribute": str, "mask": Image}] per row
RESULT_KEYS = [
    "target",
    "method",
    "delta_density",
    "delta_density_ci95",
    "saliency_fraction_inside",
    "saliency_fraction_inside_ci95",
    "saliency_iou",
    "saliency_iou_ci95",
    "n_images",
]
SALIENCY_OUTPUTS = (
    "saliency.json",
    "saliency.md",
    "saliency_model_index.yaml",
    "saliency.png",
    "saliency_gallery.png",
    "saliency_per_image.parquet",
)


def run_saliency(
    model: Any,
    data: str | Path | None = None,
    *,
    benchmark: str = "in9",
    target: str = "predicted",
    target_layer: str | None = None,
    method: str = "gradcam",
    max_images: int | None = None,
    seed: int = 0,
    gallery: int = 16,
    resize_to_model_input: bool = False,
    batch_size: int | None = None,
    device: str | torch.device | None = None,
    num_workers: int | None = None,
    progress: bool = True,
    output_dir: str | Path | None = None,
    restrict_to_benchmark: bool = False,
    label_map: str = "auto",
    checkpoint: str | None = None,
    bootstrap_resamples: int = 1000,
) -> dict[str, Any]:
    """Saliency alignment of ``model`` (a model id or a loaded classifier) with the object
    masks of ``benchmark``. ``max_images`` takes a seeded random subset (``seed``; the ids
    are recorded). Returns the results document; with ``output_dir`` also writes
    saliency.json, saliency.md, saliency_model_index.yaml, saliency.png, the gallery of the
    ``gallery`` images with the lowest delta density (saliency_gallery.png) and the
    per-image values (saliency_per_image.parquet). ``batch_size`` defaults to 8 on a CPU
    and 32 on a GPU (:func:`hf_bgbench.inference.devices.default_batch_size`); the numbers do
    not depend on it."""
    if target not in TARGETS:
        raise ValueError(f"--target {target!r}: choose one of {', '.join(TARGETS)}.")
    if method not in METHODS:
        raise ValueError(f"--method {method!r}: choose one of {', '.join(METHODS)}.")
    if batch_size is not None and batch_size < 1:
        raise ValueError(f"--batch-size must be >= 1, got {batch_size}.")
    if gallery < 0:
        raise ValueError(f"--gallery must be 0 (none) or more, got {gallery}.")
    started = time.perf_counter()
    spec, reader = start_task("saliency", benchmark, data, output_dir)
    ds = _load_masked(reader, spec)
    rows = seeded_subset(len(ds), max_images, seed, stream=0, what="images")
    classifier, mapper, step = model_step_for(
        model,
        spec,
        reader,
        label_map=label_map,
        restrict_to_benchmark=restrict_to_benchmark,
        checkpoint=checkpoint,
        device=device,
        progress=progress,
    )
    if batch_size is None:
        batch_size = default_batch_size(step.device, ACCELERATOR_BATCH_SIZE)
    geometry, deviations = masked_geometry(step, spec, reader, ds, resize_to_model_input)
    workers = default_num_workers() if num_workers is None else num_workers
    columns = [c for c in (spec.mask_column, ATTRIBUTE_MASKS) if c in ds.column_names]
    loader = decode_loader(
        ds, rows, columns=columns, geometry=geometry, batch_size=batch_size, num_workers=workers
    )
    t0 = time.perf_counter()
    try:
        out = _run_images(
            loader, step, spec, target, target_layer, method, geometry, gallery, progress
        )
    except DataError as err:
        raise DataSourceError(f"{reader.location} [{spec.mask_variant}]: {err}") from None
    seconds = time.perf_counter() - t0
    if not out["ids"]:
        raise DataSourceError(f"{reader.location} [{spec.mask_variant}]: no readable image.")

    body = summarize(spec, out, seed=seed, resamples=bootstrap_resamples)
    body.update(run_header(classifier, model, spec, reader, mapper))
    body.update(
        protocol_deviations=deviations,
        variant=spec.mask_variant,
        mask_column=spec.mask_column,
        target=target,
        method=method,
        target_layer=out["layer"].describe(),
        seed=seed,
        subset={
            "seed": seed,
            "max_images": max_images,
            "ids": out["ids"] if max_images is not None else None,
        },
        skipped=out["skipped"],
        settings={
            "batch_size": batch_size,
            "device": str(step.device),
            "num_workers": workers,
            "target_rule": _target_rule(target, mapper.restrict),
            "maps": "grad-cam: ReLU, per-image min-max scaled to [0, 1], bilinear to the "
            "input size (= the mask's size)",
            "resized_to": list(step.resize_to) if step.resize_to else None,
            "geometry": None if geometry is None else _describe_geometry(geometry),
            "bootstrap": {"resamples": bootstrap_resamples, "seed": seed},
        },
        timing={
            "saliency_seconds": round(seconds, 3),
            "total_seconds": round(time.perf_counter() - started, 3),
            "images_per_second": round(len(out["ids"]) / max(seconds, 1e-9), 2),
        },
    )
    doc = make_document(
        "saliency", body, saliency_report_section(body, out["delta"]), head=RESULT_KEYS
    )
    if output_dir is not None:
        extra = write_saliency_files(out, spec, classifier, body)
        write_run(doc, output_dir, "saliency", extra, outputs=SALIENCY_OUTPUTS)
    return doc


def _load_masked(reader: Any, spec: Any) -> Any:
    """The mask variant with its object masks, and RIVAL10's attribute masks when there."""
    if spec.name != "rival10":
        return reader.load(spec.mask_variant, columns=(spec.mask_column,))
    try:
        return reader.load(spec.mask_variant, columns=(spec.mask_column, ATTRIBUTE_MASKS))
    except DataSourceError as err:
        if ATTRIBUTE_MASKS not in str(err):
            raise
        log.warning("%s; per-attribute shares are left out.", err)
        return reader.load(spec.mask_variant, columns=(spec.mask_column,))


def _target_rule(target: str, restrict: bool) -> str:
    if target == "true":
        return "the true class (the highest-scoring model class mapped to it)"
    if restrict:
        return "the predicted class (the highest-scoring model class mapped to the benchmark)"
    return "the predicted class (the model's argmax over all its classes)"


def _describe_geometry(geometry: Geometry) -> dict[str, Any]:
    return {
        "resize": geometry.resize,
        "crop": list(geometry.crop) if geometry.crop else None,
        "interpolation": geometry.interpolation,
    }


def _targets(
    step: ModelStep, target: str, labels: torch.Tensor, table: torch.Tensor
) -> list[ClassTarget]:
    if target == "true":
        return [ClassTarget(table == int(y)) for y in labels]
    allowed = (table >= 0) if step.mapper.restrict else None
    return [ClassTarget(allowed) for _ in labels]


def _run_images(
    loader: torch.utils.data.DataLoader,
    step: ModelStep,
    spec: Any,
    target: str,
    target_layer: str | None,
    method: str,
    geometry: Geometry | None,
    gallery: int,
    progress: bool,
) -> dict[str, Any]:
    table = torch.as_tensor(step.mapper.table)
    out: dict[str, Any] = {k: [] for k in _PER_IMAGE}
    out.update(ids=[], skipped=[], attributes=[], gallery=[], layer=None)
    bar = tqdm(total=len(loader.dataset), desc="saliency", unit="img", disable=not progress)
    runner = None
    try:
        for batch in iterate(loader):
            out["skipped"].extend(batch.skipped)
            if batch.images is not None:
                if runner is None:
                    out["layer"] = _layer(step, batch.images.shape[-2:], target_layer)
                    runner = CamRunner(step.gradient_module(), out["layer"], method).__enter__()
                _one_batch(batch, runner, step, spec, target, table, geometry, gallery, out)
            bar.update(len(batch) + len(batch.skipped))
    finally:
        if runner is not None:
            runner.__exit__(None, None, None)
        bar.close()
    if out["skipped"]:
        log.warning("%d image(s) could not be read and were skipped.", len(out["skipped"]))
    out["gallery"] = [item for _, _, item in sorted(out["gallery"], key=lambda t: -t[0])]
    return out


_PER_IMAGE = (
    "labels",
    "target_class",
    "pred",
    "pred_model",
    "prob_true",
    "iou",
    "inside",
    "delta",
    "mask_area",
)


def _layer(step: ModelStep, hw: Any, name: str | None) -> LayerChoice:
    # the data's size: the model step resizes it as it will resize the images
    blank = torch.zeros(1, 3, *(int(v) for v in hw), device=step.device)
    return choose_target_layer(step.classifier.model, lambda: step.logits(blank), name)


def _one_batch(
    batch: Any,
    runner: CamRunner,
    step: ModelStep,
    spec: Any,
    target: str,
    table: torch.Tensor,
    geometry: Geometry | None,
    gallery: int,
    out: dict[str, Any],
) -> None:
    targets = _targets(step, target, batch.labels, table)
    maps, logits = runner(batch.images.float().div(255), targets)
    masks = batch.columns[spec.mask_column][:, 0].numpy() > 0
    if maps.shape[-2:] != masks.shape[-2:]:  # only if the model step changed the size
        maps = (
            torch.nn.functional.interpolate(
                torch.from_numpy(maps)[:, None], size=masks.shape[-2:], mode="bilinear"
            )[:, 0]
            .clamp_(0, 1)
            .numpy()
        )
    pred, pred_model, prob = step.mapper(logits, batch.labels)
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
        "mask_area": masks.mean(axis=(1, 2)).tolist(),
    }
    for key, vals in values.items():
        out[key].extend(vals)
    if ATTRIBUTE_MASKS in batch.columns:
        for i, row in enumerate(batch.columns[ATTRIBUTE_MASKS]):
            out["attributes"].append(attribute_shares(row, maps[i], geometry, batch.ids[i]))
    images = batch.images.permute(0, 2, 3, 1).numpy()
    for i, value in enumerate(delta.tolist()):
        if gallery and not np.isnan(value) and maps[i].max() > 0:  # a blank map shows nothing
            item = {
                "id": batch.ids[i],
                "label": int(batch.labels[i]),
                "target_class": targets[i].chosen,
                "delta": value,
                "image": images[i].copy(),
                "map": maps[i].astype(np.float16),
                "mask": masks[i].copy(),
            }
            entry = (-value, len(out["ids"]) + i, item)  # keep the lowest delta density
            if len(out["gallery"]) < gallery:
                heapq.heappush(out["gallery"], entry)
            else:
                heapq.heappushpop(out["gallery"], entry)
    out["ids"].extend(batch.ids)


SALIENCY = register_task(
    Task(
        name="saliency",
        description="saliency alignment: Grad-CAM vs the object mask (IoU, share inside, "
        "delta density)",
        run=lambda model, **kw: run_saliency(model, kw.pop("data", None), **kw),
        columns=(),
        outputs=SALIENCY_OUTPUTS,
    )
)
