"""The ``evaluate`` task: per-variant accuracy of one model, plus the benchmark's metrics.

``evaluate_model`` is what ``bgbench evaluate``, the Space and the Python API call: reader ->
model step over each variant (cached, resumable) -> per-variant accuracy with Wilson
intervals -> every metric the benchmark's spec declares -> one results document.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from hf_bgbench.benchmarks import BenchmarkSpec, get_benchmark
from hf_bgbench.data.schema import ID
from hf_bgbench.data.sources import DataSourceError, Reader, quiet_datasets
from hf_bgbench.formatting import pct
from hf_bgbench.inference.devices import default_batch_size
from hf_bgbench.inference.distributed import processes
from hf_bgbench.inference.engine import (
    Interrupted,
    PredictionCache,
    PredictionRun,
    cache_key,
    default_cache_dir,
    merge_runs,
    predict,
)
from hf_bgbench.metrics import accuracy, per_class_accuracy, wilson_interval
from hf_bgbench.results import Figure, Report, Score, Table, check_writable, make_document
from hf_bgbench.scoring import BOOTSTRAP_RESAMPLES, ScoringContext, compute_metrics
from hf_bgbench.tasks import Task, register_task
from hf_bgbench.tasks.common import (
    first_image_size,
    input_geometry,
    load_model,
    model_step_for,
    open_data,
    run_header,
    write_run,
)

ACCELERATOR_BATCH_SIZE = 32  # on a GPU when none is given (a CPU: devices.CPU_BATCH_SIZE)
# Keys a reader wants first in results.json (after the header).
RESULT_KEYS = [
    "variants",
    "bg_gap",
    "bg_gap_ci95",
    "same_minus_next",
    "original_minus_only_fg",
    "categories",
    "categories_n",
    "categories_roles",
]
EVALUATE_OUTPUTS = (
    "results.json",
    "results.md",
    "results_model_index.yaml",
    "accuracy.png",
    "predictions/",
)

log = logging.getLogger(__name__)


def evaluate_model(
    model: Any = "tf_efficientnet_lite0",
    benchmark: str = "in9",
    data: str | Path | None = None,
    variants: Sequence[str] | None = None,
    *,
    output_dir: str | Path | None = None,
    checkpoint: str | None = None,
    restrict_to_benchmark: bool = False,
    label_map: str = "auto",
    resize_to_model_input: bool = False,
    allow_mismatched_ids: bool = False,
    batch_size: int | None = None,
    num_workers: int | None = None,
    device: str | None = None,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
    progress: bool = True,
    seed: int = 0,
) -> dict[str, Any]:
    """Score ``model`` (a model id or a loaded classifier) on the variants of ``benchmark``.

    ``batch_size`` defaults to 8 on a CPU and 32 on a GPU
    (:func:`hf_bgbench.inference.devices.default_batch_size`).

    Returns the results document (also written to ``output_dir`` when given): per-variant
    accuracy, n and per-class accuracy, and every metric of the benchmark's spec (IN-9: the
    background gaps and the prediction categories).

    Started by ``accelerate launch`` with several processes
    (:mod:`hf_bgbench.inference.distributed`),
    each process scores a contiguous share of every variant's images on its own device;
    the shares are gathered in order, so predictions and numbers are those of one process,
    and only the main process writes ``output_dir`` and shows progress.
    """
    spec = get_benchmark(benchmark)
    if output_dir is not None:
        check_writable(output_dir, "--output")
    procs = processes(device)
    device = procs.device(device)
    if batch_size is None:
        batch_size = default_batch_size(device, ACCELERATOR_BATCH_SIZE)
    progress = progress and procs.is_main  # one set of progress bars, the main process's
    with procs.main_first():  # the main process fills the caches the others then read
        model = load_model(model, checkpoint, None if device is None else str(device))
        reader = open_data(data, spec)
        chosen = spec.check_variants(list(variants)) if variants else list(reader.variants)
        missing = [v for v in chosen if v not in reader.variants]
        if missing:
            raise DataSourceError(
                f"{reader.location} does not provide variant(s) {missing}; it offers "
                f"{', '.join(reader.variants)}."
            )
        classifier, mapper, step = model_step_for(
            model,
            spec,
            reader,
            label_map=label_map,
            restrict_to_benchmark=restrict_to_benchmark,
            checkpoint=checkpoint,
            device=device,
            progress=progress,
            batch_size=batch_size,
            num_workers=num_workers,
        )
        datasets_by_variant = {v: reader.load(v) for v in chosen}
    mismatch = _check_aligned_ids(spec, datasets_by_variant, allow_mismatched_ids)
    if mismatch:
        datasets_by_variant = _restrict_to_shared(spec, datasets_by_variant)
    transform, deviations, applied = _image_transform(
        step, spec, reader, datasets_by_variant, resize_to_model_input
    )

    runs: dict[str, PredictionRun] = {}
    for variant, ds in datasets_by_variant.items():
        cache = None
        # always: results name the data scored (data.fingerprint), with or without a cache
        data_fingerprint = reader.fingerprint(ds, variant)
        if use_cache:
            key = cache_key(
                classifier.fingerprint,
                data_fingerprint,
                variant,
                mapper.protocol,
                applied,
            )
            cache = PredictionCache(Path(cache_dir) if cache_dir else default_cache_dir(), key)
        try:
            shares = procs.together(
                lambda ds=ds, cache=cache, variant=variant: predict(
                    step,
                    ds,
                    rows=procs.shard(range(len(ds))),
                    image_transform=transform,
                    batch_size=batch_size,
                    num_workers=num_workers,
                    cache=cache,
                    desc=f"{spec.name}/{variant}",
                    progress=progress,
                )
            )
        except Interrupted as stop:  # count what earlier variants left in the cache too
            done = sum(r.computed + r.reused for r in runs.values()) if use_cache else 0
            raise Interrupted(stop.cached + done) from None
        runs[variant] = merge_runs(shares)
    predictions = {v: r.predictions for v, r in runs.items()}
    body, report = summarize(spec, predictions, {v: r.skipped for v, r in runs.items()}, seed=seed)
    preprocessing = dict(classifier.preprocessing.to_dict())
    preprocessing["applied"] = applied
    header = run_header(classifier, model, spec, reader, mapper)
    header.update(
        protocol_deviations=deviations,
        preprocessing=preprocessing,
        mismatched_ids=mismatch,
        computed_images=sum(r.computed for r in runs.values()),
        reused_images=sum(r.reused for r in runs.values()),
    )
    report.notes.append(_protocol_note(header, body))
    for figure in report.figures:
        figure.title = f"{header['model']} on {spec.name}: {figure.title}"
    doc = make_document("evaluate", {**header, **body}, report, head=RESULT_KEYS)
    if output_dir is not None and procs.is_main:
        write_outputs(doc, predictions, Path(output_dir))
    return doc


def write_outputs(doc: dict[str, Any], predictions: dict[str, pd.DataFrame], out: Path) -> None:
    """results.json, results.md, results_model_index.yaml, accuracy.png and
    predictions/<variant>.parquet in ``out`` (written atomically: no stale files)."""

    def write_predictions(folder: Path) -> None:
        folder.mkdir()
        for variant, frame in predictions.items():
            frame.to_parquet(folder / f"{variant}.parquet", index=False)

    write_run(doc, out, "results", {"predictions": write_predictions}, outputs=EVALUATE_OUTPUTS)


def _image_transform(step, spec, reader: Reader, datasets_by_variant, resize_to_model_input):
    """(per-image transform to uint8, protocol deviations, name of what is applied)."""
    pre = step.classifier.preprocessing
    if not (spec.images_precropped and reader.precropped):
        # Raw photos: the model's own eval transform (resize + centre crop), no deviation.
        return pre.full_transform(normalize=False), [], "full"
    hw = first_image_size(next(iter(datasets_by_variant.values())))
    resize_to, deviations = input_geometry(step, hw, resize_to_model_input)
    if resize_to is None:
        return None, deviations, "precropped"  # fed at their own size (published protocol)
    return pre.precropped_transform(normalize=False), deviations, "precropped+resized"


def _check_aligned_ids(spec: BenchmarkSpec, dss: dict, allow: bool) -> dict[str, Any] | None:
    """None when every aligned variant has the same ids; else an error (or, with ``allow``,
    a record of what differs)."""
    aligned = [v for v in dss if v in spec.aligned_variants]
    if len(aligned) < 2:
        return None
    ids = {v: set(dss[v][ID]) for v in aligned}
    shared = set.intersection(*ids.values())
    extra = {v: len(ids[v] - shared) for v in aligned if ids[v] != shared}
    if not extra:
        return None
    listed = ", ".join(f"{v} has {n} id(s) the others lack" for v, n in extra.items())
    if not allow:
        raise DataSourceError(
            f"The variants must hold the same images (ids) so their accuracies and gaps compare "
            f"like with like, but {listed} ({len(shared)} ids are shared). Repair or rebuild "
            "the data (`bgbench validate` shows the differences), or pass "
            "--allow-mismatched-ids to score only the shared images (recorded in results)."
        )
    log.warning("scoring only the %d image ids all variants share: %s", len(shared), listed)
    return {"shared": len(shared), "dropped": extra}


def _restrict_to_shared(spec: BenchmarkSpec, dss: dict) -> dict:
    aligned = [v for v in dss if v in spec.aligned_variants]
    shared = set.intersection(*(set(dss[v][ID]) for v in aligned))
    with quiet_datasets():
        return {
            v: ds.filter(lambda i: i in shared, input_columns=[ID]) if v in aligned else ds
            for v, ds in dss.items()
        }


def summarize(
    spec: BenchmarkSpec,
    predictions: dict[str, pd.DataFrame],
    skipped: dict[str, list[dict[str, Any]]] | None = None,
    *,
    seed: int = 0,
    bootstrap_resamples: int = BOOTSTRAP_RESAMPLES,
) -> tuple[dict[str, Any], Report]:
    """(results keys, report) of a benchmark from per-variant prediction frames.

    Accuracies carry a 95% Wilson interval; the spec's metrics add theirs (IN-9's gaps: a
    95% paired-bootstrap interval over the images both variants share, seeded by ``seed``).
    """
    skipped = skipped or {}
    per_variant: dict[str, Any] = {}
    for variant, frame in predictions.items():
        if frame.empty:
            raise ValueError(f"{spec.name}/{variant}: no image could be scored.")
        per_class = per_class_accuracy(frame["pred"], frame["label"], spec.num_classes)
        correct = int((frame["pred"] == frame["label"]).sum())
        per_variant[variant] = {
            "accuracy": accuracy(frame["pred"], frame["label"]),
            "accuracy_ci95": list(wilson_interval(correct, len(frame))),
            "n": int(len(frame)),
            "per_class": {
                name: (None if pd.isna(acc) else float(acc))
                for name, acc in zip(spec.classes, per_class, strict=True)
            },
            "skipped": len(skipped.get(variant, [])),
            "skipped_ids": [s["id"] for s in skipped.get(variant, [])],
        }
    ctx = ScoringContext(
        {v: r["accuracy"] for v, r in per_variant.items()}, spec.classes, seed, bootstrap_resamples
    )
    metrics = compute_metrics(spec.metrics, predictions, ctx)
    body: dict[str, Any] = {"benchmark": spec.name, "variants": per_variant, **metrics.values}
    body["bootstrap"] = {"seed": seed, "resamples": bootstrap_resamples, "confidence": 0.95}
    return body, _report(spec, per_variant, metrics.report)


def _report(spec: BenchmarkSpec, per_variant: dict[str, Any], metrics: Report) -> Report:
    headline = [s for s in metrics.scores if s.headline]
    accuracy_scores = [
        Score(f"accuracy/{v}", v, r["accuracy"], ci95=r["accuracy_ci95"], n=r["n"], config=v)
        for v, r in per_variant.items()
    ]
    variants_table = Table(
        "variants",
        "Accuracy per variant:",
        ["variant", "accuracy (%)", "95% CI", "n", "skipped"],
        [
            [v, pct(r["accuracy"]), _ci(r["accuracy_ci95"]), str(r["n"]), str(r["skipped"])]
            for v, r in per_variant.items()
        ],
    )
    gaps = [s for s in metrics.scores if s.unit == "pts"]
    tables = [variants_table]
    if gaps:
        tables.append(
            Table(
                "gaps",
                "Gaps (percentage points):",
                ["gap", "points", "95% CI (paired bootstrap)"],
                [[s.label, pct(s.value), _ci(s.ci95)] for s in gaps],
            )
        )
    tables += metrics.tables
    # the classes with images (a 1000-class benchmark's table would be mostly empty columns)
    shown = [
        c for c in spec.classes if any(r["per_class"][c] is not None for r in per_variant.values())
    ] or list(spec.classes)
    tables.append(
        Table(
            "per_class",
            "Per-class accuracy (%):",
            ["variant", *shown],
            [[v, *(pct(r["per_class"][c]) for c in shown)] for v, r in per_variant.items()],
        )
    )
    title = ""
    if headline:
        title = f" — {headline[0].short or headline[0].label} {pct(headline[0].value)} pts"
    figure = Figure(
        file="accuracy.png",
        title=f"accuracy per variant{title}",
        labels=list(per_variant),
        values=[100 * r["accuracy"] for r in per_variant.values()],
        ylabel="accuracy (%) with 95% CI",
        intervals=[[100 * x for x in r["accuracy_ci95"]] for r in per_variant.values()],
        reference=(100 / spec.num_classes, "chance"),
    )
    others = [s for s in metrics.scores if s not in headline]
    return Report(
        scores=[*headline, *accuracy_scores, *others],
        tables=tables,
        figures=[figure, *metrics.figures],  # a benchmark metric may add its own plots
    )


def _ci(interval: list[float] | None) -> str:
    return "—" if not interval else f"[{pct(interval[0])}, {pct(interval[1])}]"


def _protocol_note(header: dict[str, Any], body: dict[str, Any]) -> str:
    pre = ", ".join(f"{k}={v}" for k, v in header["preprocessing"].items())
    boot = body["bootstrap"]
    return (
        f"Protocol: {header['label_protocol']}. Preprocessing: {pre}. Intervals: Wilson "
        f"(accuracies), paired bootstrap over shared images (gaps; {boot['resamples']} "
        f"resamples, seed {boot['seed']})."
    )


EVALUATE = register_task(
    Task(
        name="evaluate",
        description="accuracy on every variant and the benchmark's metrics (e.g. BG-GAP)",
        run=evaluate_model,
        outputs=EVALUATE_OUTPUTS,
    )
)
