"""The evaluate task's hooks over the runner (see :mod:`hf_bgbench.tasks.evaluate`),
imported at their first call: the task registry and the command line load no torch."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hf_bgbench.data.sources import DataSourceError
from hf_bgbench.inference.engine import Interrupted, PredictionRun
from hf_bgbench.inference.geometry import image_transform
from hf_bgbench.scoring import partial_average_deviations
from hf_bgbench.tasks.deviations import normalisation_deviations
from hf_bgbench.tasks.evaluate.aligned import check_aligned_ids, draw_subset, restrict_to_shared
from hf_bgbench.tasks.evaluate.summary import (
    answered_only,
    pool_runs,
    protocol_note,
    rotation_accuracies,
    rotation_note,
    summarize,
    summarize_runs,
    unanswered_counts,
)
from hf_bgbench.tasks.run_model import vlm_record
from hf_bgbench.tasks.runner import Run, Summary

log = logging.getLogger(__name__)


@dataclass
class _Work:
    datasets: dict[str, Any]  # variant -> rows to score (the first run's, when several)
    transform: Any  # per-image transform in the decode workers (None: as they are)
    applied: str  # its name, recorded and part of the cache key
    mismatch: dict[str, Any] | None  # what --allow-mismatched-ids dropped (per run: by run)
    runs: dict[str, dict[str, Any]] = field(default_factory=dict)  # run -> variant -> rows
    image_ids: list[str] | None = None  # the ids --max-images drew (None: no cap given)
    # (run, variant) -> image id -> what the model asks each image about (a VLM's question)
    row_data: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)


def _load_variants(spec, reader, chosen: list[str], allow: bool):
    """(variant -> rows, what --allow-mismatched-ids dropped) of one build."""
    datasets = {}
    for variant in chosen:
        try:
            datasets[variant] = reader.load(variant)
        except DataSourceError as err:  # (evaluate is the task with --variants)
            if len(chosen) < 2:
                raise
            raise DataSourceError(
                f"{err} Or score the other variants: leave {variant!r} out with --variants."
            ) from None
    mismatch = check_aligned_ids(spec, datasets, allow)
    if mismatch:
        datasets = restrict_to_shared(spec, datasets)
    return datasets, mismatch


def _chosen_variants(run: Run) -> list[str]:
    """The variants to score: ``--variants``, else every one the data holds (configs the
    benchmark does not define are said and left out); one the data lacks is refused."""
    o, spec, reader = run.options, run.spec, run.reader
    if o.variants:
        chosen = spec.check_variants(list(o.variants))
    else:
        chosen = [v for v in reader.variants if v in spec.variants]
        others = [v for v in reader.variants if v not in spec.variants]
        if others:  # configs the benchmark does not define (an in-folder train set, say)
            log.warning(
                "%s: not scored: config(s) %s (not %s variants; scoring %s)",
                reader.location,
                ", ".join(others),
                spec.short_name,
                ", ".join(chosen),
            )
    missing = [v for v in chosen if v not in reader.variants]
    if missing:
        raise DataSourceError(
            f"{reader.location} does not provide variant(s) {missing}; it offers "
            f"{', '.join(reader.variants)}."
        )
    return chosen


def prepare(run: Run) -> _Work:
    o, spec, reader = run.options, run.spec, run.reader
    chosen = _chosen_variants(run)
    runs: dict[str, dict[str, Any]] = {}
    mismatches: dict[str, Any] = {}
    for name, each in reader.runs().items():  # repeated seeded builds: every one scored
        runs[name], dropped = _load_variants(spec, each, chosen, o.allow_mismatched_ids)
        if dropped:
            mismatches[name] = dropped
    if runs:
        datasets, mismatch = next(iter(runs.values())), mismatches or None
    else:
        datasets, mismatch = _load_variants(spec, reader, chosen, o.allow_mismatched_ids)
    sizes = {v: len(ds) for v, ds in datasets.items()}
    datasets, image_ids = draw_subset(spec, datasets, o.max_images, o.seed)
    first_run = next(iter(runs), None)  # its rows are ``datasets``, drawn just now
    runs = {
        name: datasets if name == first_run else draw_subset(spec, each, o.max_images, o.seed)[0]
        for name, each in runs.items()
    }
    if any(len(ds) < sizes[v] for v, ds in datasets.items()):
        run.departures.append(
            "a seeded subset: at most {} images per variant ({}) (--max-images)".format(
                o.max_images, ", ".join(f"{v}: {len(datasets[v])} of {n}" for v, n in sizes.items())
            )
        )
    # the probe's feature pass (when the protocol fits one) at this run's batch and workers
    run.start_model(batch_size=run.batch_size, num_workers=o.num_workers)
    first = next(iter(datasets.values()))
    transform, deviations, applied = image_transform(
        run.step,
        spec,
        reader,
        first,
        o.resize_to_model_input,
        stretch=run.stretch,
        crop=run.protocol.settings.center_crop,
    )
    run.deviations += deviations
    run.deviations += normalisation_deviations(
        run.protocol.settings.authors_normalisation, run.classifier
    )
    work = _Work(datasets, transform, applied, mismatch, runs, image_ids)
    work.row_data = _all_row_data(run, work)
    return work


def compute(run: Run, work: _Work) -> dict[str, dict[str, PredictionRun]]:
    """run -> variant -> predictions (one build: the run ""). A run's variants are cached
    and fingerprinted as ``<run>/<variant>``, so runs never share predictions."""
    o, out = run.options, {}
    for name, datasets in (work.runs or {"": work.datasets}).items():
        out[name] = {}
        for variant, ds in datasets.items():
            if work.row_data:  # what the model's rule asks each image about, by id
                run.step.row_values = work.row_data[(name, variant)]
            try:
                out[name][variant] = run.predict(
                    ds,
                    f"{name}/{variant}" if name else variant,
                    image_transform=work.transform,
                    applied=work.applied,
                    cache_dir=o.cache_dir,
                    use_cache=o.use_cache,
                    decode_cache=o.decode_cache,
                )
            except KeyboardInterrupt as stop:  # count what earlier variants left in the cache too
                done = (
                    sum(r.computed + r.reused for rs in out.values() for r in rs.values())
                    if o.use_cache
                    else 0
                )
                # before the engine looked at this variant's cache (reading the data's
                # fingerprint, say) only the earlier variants' images are known to be there
                now = stop.cached if isinstance(stop, Interrupted) else None
                if now is None and not done and o.use_cache:
                    raise Interrupted(None) from None
                raise Interrupted((now or 0) + done) from None
    return out


def _row_data(run: Run, reader: Any, variant: str, ds: Any) -> dict[str, Any] | None:
    """What a model that asks each image its own question (a VLM's two-way question) asks
    about: the data column it names, image id -> value over the rows ``ds`` to be scored
    (read again with that column only when they lack it; None: the model asks nothing)."""
    columns = getattr(run.classifier, "row_columns", ())
    if not columns:
        return None
    column = columns[0]
    if column not in ds.column_names:
        try:
            ds = reader.load(variant, columns=columns)
        except DataSourceError as err:
            others = [v for v in run.reader.variants if v != variant]
            raise DataSourceError(
                f"{err} The model's rule asks each image about its {column!r}, which "
                f"{variant!r} lacks; score the variants that have it"
                + (f" (--variants {' '.join(others)})." if others else ".")
            ) from None
    rows = ds.select_columns(["id", column])
    return {i: {column: v} for i, v in zip(rows["id"], rows[column], strict=True)}


def _all_row_data(run: Run, work: _Work) -> dict[tuple[str, str], dict[str, Any]]:
    """(run, variant) -> :func:`_row_data`, read before any image is scored, so a variant
    without what the model asks about is refused before the work starts."""
    readers = run.reader.runs()
    row_data = {
        (name, v): _row_data(run, readers.get(name, run.reader), v, ds)
        for name, each in (work.runs or {"": work.datasets}).items()
        for v, ds in each.items()
    }
    return {k: v for k, v in row_data.items() if v is not None}


def _preprocessing(run: Run, work: _Work, out: dict[str, dict[str, PredictionRun]]) -> dict:
    """The results' ``preprocessing``: the model's, what was applied, how images were
    decoded and, per variant, what the decoded-image cache did."""
    decoders = sorted({r.decoder for rs in out.values() for r in rs.values()})
    return {
        **run.classifier.preprocessing.to_dict(),
        "applied": work.applied,
        "decoder": "+".join(decoders) or "pil",  # pil, or torchvision (decode_jpeg)
        # where decoding ran: worker processes (how many, chosen how), or the main process
        "decode_pipeline": run.pipeline.record() if run.pipeline is not None else None,
        # per variant: read (from the decoded-image cache), written, unwritten,
        # unsupported transform or off (PredictionRun.decode_cache)
        "decode_cache": {
            f"{name}/{v}" if name else v: r.decode_cache
            for name, rs in out.items()
            for v, r in rs.items()
        },
    }


def summarise(run: Run, work: _Work, out: dict[str, dict[str, PredictionRun]]) -> Summary:
    by_run = {name: {v: r.predictions for v, r in runs.items()} for name, runs in out.items()}
    skipped = {name: {v: list(r.skipped) for v, r in rs.items()} for name, rs in out.items()}
    for variant, skips in skipped.get("", {}).items():  # and what the listing left out
        for reason, files in run.reader.skipped_files(variant).items():
            skips += [{"id": f, "label": None, "reason": reason} for f in files]
    space = run.classifier.label_space
    unanswered = unanswered_counts(space, pool_runs(by_run) if work.runs else by_run[""])
    left_out = bool((vlm_record(run.classifier) or {}).get("drops_unanswered"))
    scored = {k: answered_only(space, v) for k, v in by_run.items()} if left_out else by_run
    if work.runs:
        numbers, report = summarize_runs(run.spec, scored, skipped, seed=run.options.seed)
        predictions = pool_runs(by_run)
    else:
        predictions = by_run[""]
        numbers, report = summarize(run.spec, scored[""], skipped[""], seed=run.options.seed)
    preprocessing = _preprocessing(run, work, out)
    run.deviations += partial_average_deviations(run.spec.metrics, predictions)
    rotations = rotation_accuracies(run.mapper.table, predictions)
    if rotations:
        report.notes.append(rotation_note(rotations))
    body = run.body(
        {},
        preprocessing=preprocessing,
        **({"unanswered": unanswered} if unanswered else {}),
        **({"rotation_accuracy": rotations} if rotations else {}),
        mismatched_ids=work.mismatch,
        max_images=run.options.max_images,
        image_ids=work.image_ids,
        computed_images=sum(r.computed for rs in out.values() for r in rs.values()),
        reused_images=sum(r.reused for rs in out.values() for r in rs.values()),
        **numbers,
    )
    report.notes.append(protocol_note(body))
    for figure in report.figures:
        figure.title = f"{body['model']} on {run.spec.name}: {figure.title}"
    metric_keys = [key for metric in run.spec.metrics for key in metric.missing()]

    def files() -> dict[str, Any]:
        def write_predictions(folder: Path) -> None:
            folder.mkdir()
            for variant, frame in predictions.items():
                frame.to_parquet(folder / f"{variant}.parquet", index=False)

        return {"predictions": write_predictions}

    head = ["variants", *(["runs"] if work.runs else []), *metric_keys]
    return Summary(body, report, head=head, files=files)
