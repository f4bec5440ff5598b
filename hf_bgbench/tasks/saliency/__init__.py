"""The ``saliency`` task: does the model look at the object? (RIVAL10; Moayeri et al., 2022;
SPEC §2 "Saliency alignment").

For every image of the benchmark's mask variant (IN-9 ``original`` + ``mask``; RIVAL10
``ordinary`` + ``object_mask``), Grad-CAM on the predicted class -- or the true class --
gives a saliency map at the mask's size, compared with the object mask by the RIVAL10
authors' scores (:mod:`hf_bgbench.metrics.saliency`): IoU after max-normalising and
binarising at 0.5, the share of saliency inside the mask (saliency precision), delta density
(mean saliency on the object minus on the background), the average precision of the map as a
ranking of the mask's pixels, and the mask coverage of the most salient pixels holding 25,
50 and 75 % of the saliency (at 25 %: the saliency recall); where the data has attribute
masks (RIVAL10), also the share of saliency on each present attribute's mask.

Hooks over the runner: prepare = the mask variant (a seeded subset) at the size the model
takes (IN-9's 224x224 images as they are, RIVAL10's photos through the model's eval resize +
centre crop applied alike to image and masks); compute = the maps per batch
(:mod:`hf_bgbench.tasks.saliency.maps`); summarise = the protocol's ``aggregation``, by
default the authors' (``class-mean``: per predicted class a NaN-skipping mean, then the mean
over classes), with seeded percentile-bootstrap intervals, and the other aggregation (the
plain mean over images) as a secondary value (:mod:`hf_bgbench.tasks.saliency.summary`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hf_bgbench.data.loader import DataError, Geometry
from hf_bgbench.data.masks import ATTRIBUTE_MASKS
from hf_bgbench.data.sources import DataSourceError
from hf_bgbench.tasks.common import paper_value_deviations
from hf_bgbench.tasks.options import (
    REQUIRED,
    entry_signature,
)
from hf_bgbench.tasks.runner import Run, Summary, Task, execute, plain_geometry
from hf_bgbench.tasks.saliency.maps import SaliencyMaps, target_rule
from hf_bgbench.tasks.saliency.options import SaliencyOptions
from hf_bgbench.tasks.saliency.paired import PER_IMAGE_FILE, paired_values, per_image_files
from hf_bgbench.tasks.saliency.settings import SaliencyProtocolSettings
from hf_bgbench.tasks.saliency.summary import (
    RESULT_KEYS,
    saliency_report_section,
    summarize,
    write_saliency_files,
)

log = logging.getLogger(__name__)

ACCELERATOR_BATCH_SIZE = 32  # on a GPU when none is given (a CPU: devices.CPU_BATCH_SIZE)
MAPS = (
    "grad-cam: ReLU, per-image min-max scaled to [0, 1], bilinear to the input size (= the "
    "mask's size)"
)
SALIENCY_OUTPUTS = (
    "saliency.json",
    "saliency.md",
    "saliency_model_index.yaml",
    "saliency.png",
    "saliency_gallery.png",
    PER_IMAGE_FILE,
)


@dataclass
class _Work:
    ds: Any
    rows: list[int]
    columns: list[str]  # the mask column, and the attribute masks when the data has them
    geometry: Geometry | None


def _load_masked(run: Run) -> Any:
    """The mask variant with its object masks, and its attribute masks when it has them."""
    variant, mask = run.spec.mask_variant, run.spec.mask_column
    try:
        return run.reader.load(variant, columns=(mask, ATTRIBUTE_MASKS))
    except DataSourceError as err:
        if ATTRIBUTE_MASKS not in str(err):
            raise
        log.info("%s; per-attribute shares are left out.", err)
        return run.reader.load(variant, columns=(mask,))


def prepare(run: Run) -> _Work:
    ds = _load_masked(run)
    rows = run.subset(len(ds), run.options.max_images, what="images")
    run.start_model().check_gradients()  # before any pass: a VLM has no gradient map
    run.deviations += paper_value_deviations(run.protocol.settings.paper_values, run.options)
    columns = [c for c in (run.spec.mask_column, ATTRIBUTE_MASKS) if c in ds.column_names]
    return _Work(ds, rows, columns, run.masked_geometry(ds))


def compute(run: Run, work: _Work) -> dict[str, Any]:
    o, where = run.options, f"{run.reader.location} [{run.spec.mask_variant}]"
    maps = SaliencyMaps(
        run.step, run.spec.mask_column, o.target, o.target_layer, o.method, work.geometry, o.gallery
    )
    skipped = maps.out["skipped"]
    batches = run.batches(
        work.ds,
        work.rows,
        skipped=skipped,
        desc="saliency",
        columns=work.columns,
        geometry=work.geometry,
    )
    try:
        for batch in batches:
            maps.add(batch)
    except DataError as err:
        raise DataSourceError(f"{where}: {err}") from None
    finally:
        batches.close()
        maps.close()
    if skipped:
        log.warning("%d image(s) could not be read and were skipped.", len(skipped))
    if not maps.out["ids"]:
        raise DataSourceError(f"{where}: no readable image.")
    return maps.out


def summarise(run: Run, work: _Work, out: dict[str, Any]) -> Summary:
    o, spec = run.options, run.spec
    aggregation = run.protocol.settings.aggregation
    numbers = summarize(
        spec, out, seed=o.seed, resamples=o.bootstrap_resamples, aggregation=aggregation
    )
    subset_ids = out["ids"] if o.max_images is not None else None
    body = run.body(
        numbers,
        variant=spec.mask_variant,
        mask_column=spec.mask_column,
        target=o.target,
        method=o.method,
        target_layer=out["layer"].describe(),
        seed=o.seed,
        subset={"seed": o.seed, "max_images": o.max_images, "ids": subset_ids},
        skipped=out["skipped"],
        settings=run.settings(
            target_rule=target_rule(o.target, run.mapper.restrict),
            maps=MAPS,
            resized_to=run.resized_to(),
            geometry=plain_geometry(work.geometry),
            bootstrap={"resamples": o.bootstrap_resamples, "seed": o.seed},
        ),
        timing={
            "saliency_seconds": round(run.seconds, 3),
            "total_seconds": round(run.total_seconds(), 3),
            "images_per_second": round(len(out["ids"]) / max(run.seconds, 1e-9), 2),
        },
    )
    report = saliency_report_section(body, out["delta"])
    return Summary(
        body, report, RESULT_KEYS, lambda: write_saliency_files(out, spec, run.classifier, body)
    )


TASK = Task(
    name="saliency",
    description="saliency alignment: Grad-CAM vs the object mask (IoU, share inside, "
    "delta density, average precision, saliency recall)",
    options=SaliencyOptions,
    prepare=prepare,
    compute=compute,
    summarise=summarise,
    stem="saliency",
    outputs=SALIENCY_OUTPUTS,
    gpu_batch_size=ACCELERATOR_BATCH_SIZE,
    settings=SaliencyProtocolSettings,
    command_help="saliency alignment: does the model's Grad-CAM sit on the object?",
    per_image=per_image_files,
    paired=paired_values,
)


def run_saliency(model: Any, data: str | Path | None = None, **options: Any) -> dict[str, Any]:
    """Saliency alignment of ``model`` (a model id or a loaded classifier) with the object
    masks of the benchmark, with the :class:`SaliencyOptions` ``options``. ``max_images``
    takes a seeded random subset (``seed``; the ids are recorded). Returns the results
    document (each score averaged per predicted class, then over classes, as the RIVAL10
    authors do, unless the protocol's ``aggregation`` is ``image-pooled``; the other
    aggregation as ``<score>_image_mean`` / ``<score>_class_mean``); with ``output_dir`` also
    writes
    saliency.json, saliency.md, saliency_model_index.yaml, saliency.png, the gallery of the
    ``gallery`` images with the lowest delta density (saliency_gallery.png) and the
    per-image values (saliency_per_image.parquet). ``batch_size`` defaults to 8 on a CPU and
    32 on a GPU; the numbers do not depend on it."""
    return execute(TASK, model, data=data, **options)


run_saliency.__signature__ = entry_signature(SaliencyOptions, model=REQUIRED, data=None)
