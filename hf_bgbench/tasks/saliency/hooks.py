"""The saliency task's hooks over the runner (see :mod:`hf_bgbench.tasks.saliency`),
imported at their first call: the task registry and the command line load no torch."""

from __future__ import annotations

import logging
from typing import Any

from hf_bgbench.data.sources import DataSourceError
from hf_bgbench.tasks.deviations import paper_value_deviations
from hf_bgbench.tasks.runner import MaskedImages, Run, Summary, plain_geometry
from hf_bgbench.tasks.saliency.maps import SaliencyMaps, target_rule
from hf_bgbench.tasks.saliency.report import build_report
from hf_bgbench.tasks.saliency.summary import RESULT_KEYS, summarize, write_saliency_files

log = logging.getLogger(__name__)


MAPS = (
    "grad-cam: ReLU, per-image min-max scaled to [0, 1], bilinear to the input size (= the "
    "mask's size)"
)


def prepare(run: Run) -> MaskedImages:
    # every split the reader gives; the attribute masks when the data has them
    images = run.load_masked(split=None)
    run.start_model().check_gradients()  # before any pass: a VLM has no gradient map
    run.deviations += paper_value_deviations(run.protocol.settings.paper_values, run.options)
    images.geometry = run.masked_geometry(images.ds)
    return images


def compute(run: Run, work: MaskedImages) -> dict[str, Any]:
    o, where = run.options, f"{run.reader.location} [{run.spec.mask_variant}]"
    maps = SaliencyMaps(
        run.step, run.spec.mask_column, o.target, o.target_layer, o.method, work.geometry, o.gallery
    )
    skipped = maps.out["skipped"]

    def bad_data(err: Exception) -> DataSourceError:
        return DataSourceError(f"{where}: {err}")

    try:
        run.each_batch(work, maps.add, skipped=skipped, desc="saliency", error=bad_data)
    finally:
        maps.close()
    if skipped:
        log.warning("%d image(s) could not be read and were skipped.", len(skipped))
    if not maps.out["ids"]:
        raise DataSourceError(f"{where}: no readable image.")
    return maps.out


def summarise(run: Run, work: MaskedImages, out: dict[str, Any]) -> Summary:
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
    report = build_report(body, out["delta"])
    return Summary(
        body, report, RESULT_KEYS, lambda: write_saliency_files(out, spec, run.classifier, body)
    )
