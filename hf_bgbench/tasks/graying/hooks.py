"""The graying task's hooks over the runner (see :mod:`hf_bgbench.tasks.graying`),
imported at their first call: the task registry and the command line load no torch."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from hf_bgbench.data.loader import Batch, DataError, Geometry
from hf_bgbench.data.masks import ATTRIBUTE_MASKS, attribute_masks
from hf_bgbench.inference.model_step import ModelStep
from hf_bgbench.probe.adam_head import ADAM_RECIPE, gray_background
from hf_bgbench.probe.features import probe_note
from hf_bgbench.tasks.deviations import paper_value_deviations
from hf_bgbench.tasks.graying.options import GrayingError
from hf_bgbench.tasks.graying.report import build_report
from hf_bgbench.tasks.graying.summary import PER_IMAGE_FILE, RESULT_KEYS, summarize
from hf_bgbench.tasks.run_model import ModelRequest, model_step_for
from hf_bgbench.tasks.runner import MaskedImages, Run, Summary


@dataclass
class _Work:
    images: MaskedImages  # with the attribute masks when the data has them
    gray_step: ModelStep | None  # the head re-fitted on grey-background train images
    refit: dict[str, Any]  # whether it was fitted (its probe record) or why not


def prepare(run: Run) -> _Work:
    spec = run.spec

    def needs(err: Exception) -> GrayingError:
        return GrayingError(
            f"Graying keeps the object and greys the rest, so it needs {spec.mask_variant!r} "
            f"with its {spec.mask_column!r} column: {err}"
        )

    # with the attribute masks when the data has them: each attribute is grayed alone too
    images = run.load_masked(needs=needs)
    run.start_model()
    run.deviations += paper_value_deviations(run.protocol.settings.paper_values, run.options)
    images.geometry = run.masked_geometry(images.ds)
    gray_step, refit = _gray_head(run)
    return _Work(images, gray_step, refit)


def _skip_reason(run: Run) -> str | None:
    """Why no head is re-fitted on grey-background train images (None: one is)."""
    o = run.options
    record = getattr(run.classifier, "probe_record", None)
    if not o.refit_head:
        return "--no-refit-head was given"
    if record is None:
        return (
            f"the model is scored through its own classes (--label-map {o.label_map}), not "
            "through a linear head on frozen features, so there is no head to re-fit"
        )
    if record["recipe"]["name"] != ADAM_RECIPE["name"]:
        return (
            f"the re-fitted head follows the authors' finetuner.py ({ADAM_RECIPE['name']}, "
            f"the paper protocol's head); this run's head is {record['recipe']['name']}"
        )
    return None


def _gray_head(run: Run) -> tuple[ModelStep | None, dict[str, Any]]:
    """(the model step of the head re-fitted on grey-background train images, its record):
    the scoring head's recipe, seed, normalisation and cache folder, with every train and
    held-out photo grayed outside its object mask at ``--gray`` (the probe machinery fits
    or reuses it; see :func:`hf_bgbench.probe.features.probed_classifier`)."""
    reason = _skip_reason(run)
    if reason is not None:
        run.deviations.append(
            "Only the first number of Fig. 8 (the scoring head's accuracy on grayed images): "
            f"the head re-fitted on grey-background train images is not computed ({reason})."
        )
        return None, {"fitted": False, "reason": reason}
    o, record = run.options, run.classifier.probe_record
    request = ModelRequest(
        label_map="probe",
        restrict_to_benchmark=o.restrict_to_benchmark,
        device=run.device,
        progress=run.progress,
    )
    _, mapper, step = model_step_for(
        run.classifier.base,
        run.spec,
        run.reader,
        request,
        recipe=record["recipe"]["name"],
        normalise=record.get("normalise", True),  # heads cached before the option: True
        seed=record["seed"],
        cache_dir=Path(record["cache_path"]).parent,
        gray_background=float(o.gray),
    )
    if mapper.protocol != run.mapper.protocol:  # both heads speak the benchmark's classes
        raise GrayingError(f"the re-fitted head maps labels as {mapper.protocol!r}.")
    step.resize_to = run.step.resize_to  # the geometry the scoring head's step was given
    gray_record = step.classifier.probe_record
    run.deviations += [d for d in gray_record.get("deviations", ()) if d not in run.deviations]
    return step, {"fitted": True, "probe": {**gray_record, "note": probe_note(gray_record)}}


def _grayed_attributes(
    run: Run, x: torch.Tensor, label: torch.Tensor, entries: Any, geometry: Geometry | None
) -> dict[str, tuple[int, float]]:
    """{attribute: (prediction, true-class probability)} with that attribute's mask grayed
    (Moayeri et al.'s attr_importance.py: x (1 - m_a) + 0.5 m_a)."""
    names, masks = attribute_masks(entries, geometry)
    if not names:
        return {}
    if masks.shape[1:] != tuple(x.shape[-2:]):
        raise DataError(
            f"attribute masks are {masks.shape[1]}x{masks.shape[2]} but the image is "
            f"{x.shape[-2]}x{x.shape[-1]}; attribute masks must have their image's size."
        )
    m = torch.from_numpy(masks).to(x.device).float().unsqueeze(1)  # (k, 1, H, W)
    ablated = x.unsqueeze(0) * (1 - m) + float(run.options.gray) * m
    out = run.step.predict(ablated, label.repeat(len(names)))
    return {n: (int(p), float(q)) for n, p, q in zip(names, out.pred, out.prob_true, strict=True)}


def compute(run: Run, work: _Work) -> dict[str, Any]:
    skipped: list[dict[str, Any]] = []
    ids, labels, pred, prob, attributes = [], [], [], [], []
    gray = float(run.options.gray)
    geometry = work.images.geometry

    def step(batch: Batch) -> None:
        """Each image clean and grayed (and grayed through the re-fitted head)."""
        x = batch.images.to(run.step.device).float().div_(255)
        grayed = gray_background(x, batch.columns[run.spec.mask_column], gray)
        out = run.step.predict(torch.cat([x, grayed]), torch.cat([batch.labels] * 2))
        k = len(batch)
        preds, probs = [out.pred[:k], out.pred[k:]], [out.prob_true[:k], out.prob_true[k:]]
        if work.gray_step is not None:  # the grayed copies through the re-fitted head
            refit = work.gray_step.predict(grayed, batch.labels)
            preds.append(refit.pred)
            probs.append(refit.prob_true)
        ids.extend(batch.ids)
        labels.append(batch.labels.numpy())
        pred.append(np.stack(preds, axis=1))
        prob.append(np.stack(probs, axis=1))
        for i, entries in enumerate(batch.columns.get(ATTRIBUTE_MASKS, [None] * k)):
            attributes.append(
                _grayed_attributes(run, x[i], batch.labels[i : i + 1], entries, geometry)
            )

    def bad_data(err: Exception) -> GrayingError:
        return GrayingError(f"Graying cannot use the data: {err}")

    run.each_batch(work.images, step, skipped=skipped, desc="graying", error=bad_data)
    if not ids:
        raise GrayingError(f"{run.reader.location} [{run.spec.mask_variant}]: no readable image.")
    return {
        "ids": ids,
        "labels": np.concatenate(labels).astype(np.int64),
        "pred": np.concatenate(pred),  # (n, 2): clean, grayed (, grayed by the re-fitted head)
        "prob": np.concatenate(prob).astype(np.float64),
        "attributes": attributes if ATTRIBUTE_MASKS in work.images.columns else None,
        "skipped": skipped,
    }


def summarise(run: Run, work: _Work, out: dict[str, Any]) -> Summary:
    o = run.options
    aggregation = run.protocol.settings.aggregation
    numbers, _, frame = summarize(run.spec, out, o.seed, aggregation, o.gray)
    body = run.body(
        numbers,
        **run.masked_record(out, work.images.geometry),
        refit_head=work.refit,
        timing={
            "graying_seconds": round(run.seconds, 3),
            "total_seconds": round(run.total_seconds(), 3),
        },
    )
    files = {PER_IMAGE_FILE: lambda path: frame.to_parquet(path, index=False)}
    return Summary(body, build_report(body), RESULT_KEYS, lambda: files)
