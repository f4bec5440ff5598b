"""Evaluate one model on one benchmark: data source -> engine -> metric core -> results.

``evaluate_model`` is what ``bgbench evaluate``, the Space and the Python API call. All
numbers come from :mod:`hf_bgbench.metrics`; this module only wires things together and
writes the outputs (results.json, results.md, per-image predictions, a plot).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pandas as pd

from hf_bgbench import __version__
from hf_bgbench.benchmarks import BenchmarkSpec, get_benchmark
from hf_bgbench.data.sources import DataSource, dataset_fingerprint, load_variant, resolve_source
from hf_bgbench.engine import PredictionCache, cache_key, default_cache_dir, predict
from hf_bgbench.mapping import LabelMapper
from hf_bgbench.metrics import (
    CATEGORY_VARIANTS,
    GAPS,
    accuracy,
    background_gaps,
    paired_bootstrap_difference,
    per_class_accuracy,
    prediction_categories_by_id,
    wilson_interval,
)
from hf_bgbench.report import order_keys

BOOTSTRAP_RESAMPLES = 1000
# Keys a reader wants first in results.json.
RESULT_KEYS = [
    "model",
    "model_resolved",
    "benchmark",
    "variants",
    "bg_gap",
    "bg_gap_ci95",
    "same_minus_next",
    "original_minus_only_fg",
    "categories",
    "categories_n",
    "categories_roles",
]

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
    batch_size: int = 32,
    num_workers: int | None = None,
    device: str | None = None,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
    progress: bool = True,
    seed: int = 0,
) -> dict[str, Any]:
    """Score ``model`` (a model id or a loaded classifier) on the variants of ``benchmark``.

    Returns the results dict (also written to ``output_dir`` when given): per-variant
    accuracy, n and per-class accuracy, the background gaps and the prediction categories.
    """
    spec = get_benchmark(benchmark)
    source = resolve_source(data if data is not None else spec.hub_repo, spec)
    chosen = spec.check_variants(list(variants)) if variants else list(source.variants)
    missing = [v for v in chosen if v not in source.variants]
    if missing:
        raise ValueError(
            f"{source.location} does not provide variant(s) {missing}; it offers "
            f"{', '.join(source.variants)}."
        )
    classifier = _load(model, checkpoint, device)
    mapper = LabelMapper.for_model(classifier.label_space, spec, restrict=restrict_to_benchmark)

    runs, predictions = {}, {}
    for variant in chosen:
        ds = load_variant(source, variant, spec)
        transform, batch_transform = _transforms_for(classifier, spec, source)
        cache = None
        if use_cache:
            key = cache_key(
                classifier.fingerprint,
                dataset_fingerprint(ds, source, variant),
                variant,
                mapper.protocol,
                _transform_kind(spec, source),
            )
            cache = PredictionCache(Path(cache_dir) if cache_dir else default_cache_dir(), key)
        run = predict(
            classifier,
            ds,
            mapper,
            transform,
            batch_transform=batch_transform,
            batch_size=batch_size,
            num_workers=num_workers,
            device=device,
            cache=cache,
            desc=f"{spec.name}/{variant}",
            progress=progress,
        )
        runs[variant], predictions[variant] = run, run.predictions

    results = summarize(spec, predictions, {v: r.skipped for v, r in runs.items()}, seed=seed)
    results.update(
        model=getattr(classifier, "model_id", str(model)),
        model_resolved=getattr(classifier, "resolved", None),
        model_label_space=classifier.label_space.kind,
        preprocessing=_preprocessing_record(classifier, spec, source),
        label_protocol=mapper.protocol,
        data=source.describe(),
        hf_bgbench_version=__version__,
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        computed_images=sum(r.computed for r in runs.values()),
        reused_images=sum(r.reused for r in runs.values()),
    )
    results = order_keys(results, RESULT_KEYS)
    if output_dir is not None:
        write_outputs(results, predictions, Path(output_dir))
    return results


def _load(model: Any, checkpoint: str | None, device: str | None):
    if not isinstance(model, str):
        return model
    from hf_bgbench.models import load_classifier

    return load_classifier(model, checkpoint=checkpoint, device=device)


def _transform_kind(spec: BenchmarkSpec, source: DataSource) -> str:
    # Benchmark variants are already cropped (published protocol: no resize/crop); plain
    # photos get the model's own eval transform (resize + centre crop).
    return "precropped" if spec.images_precropped and source.kind != "image-folder" else "full"


def _transforms_for(classifier, spec: BenchmarkSpec, source: DataSource):
    """(per-image geometric transform to uint8, per-batch normalisation on the device)."""
    pre = classifier.preprocessing
    if _transform_kind(spec, source) == "precropped":
        return pre.precropped_transform(normalize=False), pre.normalize_batch
    return pre.full_transform(normalize=False), pre.normalize_batch


def _preprocessing_record(classifier, spec: BenchmarkSpec, source: DataSource) -> dict[str, Any]:
    record = dict(classifier.preprocessing.to_dict())
    record["applied"] = _transform_kind(spec, source)
    return record


def summarize(
    spec: BenchmarkSpec,
    predictions: dict[str, pd.DataFrame],
    skipped: dict[str, list[dict[str, Any]]] | None = None,
    *,
    seed: int = 0,
    bootstrap_resamples: int = BOOTSTRAP_RESAMPLES,
) -> dict[str, Any]:
    """Metrics of a benchmark from per-variant prediction frames (id, label, pred, ...).

    Accuracies carry a 95% Wilson interval; gaps carry a 95% paired-bootstrap interval over
    the images both variants share (resampled with ``seed``, recorded in the output).
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
    results: dict[str, Any] = {"benchmark": spec.name, "variants": per_variant}
    gaps = background_gaps({v: r["accuracy"] for v, r in per_variant.items()})
    for name, (a, b) in GAPS.items():
        results[name] = gaps.get(name)
        results[f"{name}_ci95"] = (
            _paired_gap_interval(predictions[a], predictions[b], seed, bootstrap_resamples)
            if name in gaps
            else None
        )
    results.update(_categories(predictions))
    results["bootstrap"] = {"seed": seed, "resamples": bootstrap_resamples, "confidence": 0.95}
    return results


def _paired_gap_interval(
    first: pd.DataFrame, second: pd.DataFrame, seed: int, resamples: int
) -> list[float] | None:
    paired = first.merge(second, on="id", suffixes=("_a", "_b"))
    if paired.empty:
        return None
    return list(
        paired_bootstrap_difference(
            (paired["pred_a"] == paired["label_a"]).to_numpy(),
            (paired["pred_b"] == paired["label_b"]).to_numpy(),
            n_resamples=resamples,
            seed=seed,
        )
    )


def _categories(predictions: dict[str, pd.DataFrame]) -> dict[str, Any]:
    """``categories`` (the five fractions only), ``categories_n`` and ``categories_roles``."""
    if not all(v in predictions for v in CATEGORY_VARIANTS.values()):
        return {"categories": None, "categories_n": 0, "categories_roles": None}
    rows = pd.concat(
        [predictions[v].assign(variant=v) for v in CATEGORY_VARIANTS.values()], ignore_index=True
    )
    common = set.intersection(*(set(predictions[v]["id"]) for v in CATEGORY_VARIANTS.values()))
    return {
        "categories": prediction_categories_by_id(
            rows["pred"], rows["label"], rows["variant"], rows["id"]
        ),
        "categories_n": len(common),
        "categories_roles": dict(CATEGORY_VARIANTS),
    }


def write_outputs(results: dict[str, Any], predictions: dict[str, pd.DataFrame], out: Path) -> None:
    """results.json, results.md, predictions/<variant>.parquet and accuracy.png in ``out``."""
    from hf_bgbench.report import plot_accuracies, render_markdown

    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    (out / "results.md").write_text(render_markdown(results), encoding="utf-8")
    pred_dir = out / "predictions"
    pred_dir.mkdir(exist_ok=True)
    for variant, frame in predictions.items():
        frame.to_parquet(pred_dir / f"{variant}.parquet", index=False)
    plot_accuracies(results, out / "accuracy.png")
