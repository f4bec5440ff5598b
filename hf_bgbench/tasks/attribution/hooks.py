"""The attribution task's hooks over the runner (see :mod:`hf_bgbench.tasks.attribution`),
imported at their first call: the task registry and the command line load no torch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hf_bgbench.data.loader import DataError, Geometry
from hf_bgbench.data.masks import ATTRIBUTE_MASKS
from hf_bgbench.data.sources import DataSourceError
from hf_bgbench.tasks.attribution.cam import (
    cam_pass,
    examined,
    feature_pass,
    top_images,
)
from hf_bgbench.tasks.attribution.options import AttributionError
from hf_bgbench.tasks.attribution.report import build_report
from hf_bgbench.tasks.attribution.summary import (
    RESULT_KEYS,
    best_features,
    gallery_rows,
    pair_rows,
    summarize,
    writers,
)
from hf_bgbench.tasks.deviations import paper_value_deviations
from hf_bgbench.tasks.runner import Run, Summary, plain_geometry

GALLERY_IMAGES = 5  # top images drawn per gallery row


@dataclass
class _Work:
    splits: dict[str, tuple[Any, list[int]]]  # split -> (dataset, rows)
    classes: list[int]
    geometry: Geometry | None


def _load(run: Run, split: str) -> Any:
    spec = run.spec
    try:
        return run.reader.load(spec.mask_variant, columns=(ATTRIBUTE_MASKS,), split=split)
    except (DataSourceError, ValueError, FileNotFoundError) as err:
        raise AttributionError(
            f"Neural-feature attribution compares Grad-CAM with attribute masks, so it needs "
            f"the {split!r} split of {spec.mask_variant!r} with its {ATTRIBUTE_MASKS!r} "
            f"column: {err}"
        ) from None


def _classes(run: Run) -> list[int]:
    names = list(run.spec.classes)
    wanted = run.options.classes or names
    unknown = [c for c in wanted if c not in names]
    if unknown:
        raise AttributionError(
            f"--classes {', '.join(unknown)}: not a class of {run.spec.short_name} "
            f"({', '.join(names)})."
        )
    return sorted({names.index(c) for c in wanted})


def prepare(run: Run) -> _Work:
    o = run.options
    classes = _classes(run)
    splits = {}
    for stream, split in enumerate(("train", "test")):
        ds = _load(run, split)
        splits[split] = (ds, run.subset(len(ds), o.max_images, what="images", stream=stream))
    if o.max_features is not None:
        run.deviations.append(
            f"Per class only the {o.max_features} features of highest mean activation on its "
            "train images are examined (--max-features); the paper examines every feature."
        )
    if o.max_images is not None:
        run.deviations.append(
            f"Top images are drawn from a seeded subset of at most {o.max_images} images of "
            f"each split (--max-images, seed {o.seed}), not from the whole split."
        )
    run.start_model().check_gradients()  # before any pass: a VLM has no gradient map
    run.deviations += paper_value_deviations(run.protocol.settings.paper_values, run.options)
    return _Work(splits, classes, run.masked_geometry(splits["train"][0]))


def compute(run: Run, work: _Work) -> dict[str, Any]:
    o = run.options
    try:
        return _compute(run, work, o.top_k, o.tau, o.max_features, o.gallery)
    except DataError as err:
        raise AttributionError(f"Neural-feature attribution cannot use the data: {err}") from None


def _compute(run: Run, work: _Work, k: int, tau: float, most: int | None, gallery: int) -> dict:
    (train_ds, train_rows), (test_ds, test_rows) = work.splits["train"], work.splits["test"]
    train = feature_pass(run, train_ds, train_rows, work.geometry, "attribution: train features")
    present = set(train.labels.tolist())
    classes = [c for c in work.classes if c in present]
    if not classes:
        raise AttributionError(f"{run.reader.location}: no readable train image of the classes.")
    examined_by_class = {c: examined(train, c, most) for c in classes}
    tops = top_images(train, [(c, f) for c in classes for f in examined_by_class[c]], k)
    scores = cam_pass(run, train_ds, train, tops, work.geometry, tau, desc="attribution: train")
    best = best_features(scores, classes)
    test = feature_pass(run, test_ds, test_rows, work.geometry, "attribution: test features")
    test_pairs = sorted({(c, f) for (c, _), f in best.items() if (test.labels == c).any()})
    test_tops = top_images(test, test_pairs, k)
    test_scores = cam_pass(
        run,
        test_ds,
        test,
        test_tops,
        work.geometry,
        tau,
        desc="attribution: test",
        layer=scores.layer,
    )
    pairs = pair_rows(run.spec.classes, best, scores, test_scores)
    shown = gallery_rows(pairs, gallery)
    panels = []
    if shown:
        index = {name: i for i, name in enumerate(run.spec.classes)}
        wanted = {(index[p["class"]], p["feature"]) for p in shown}
        few = {pair: tops[pair][:GALLERY_IMAGES] for pair in wanted}
        kept = cam_pass(run, train_ds, train, few, work.geometry, tau, desc="gallery", keep=True)
        panels = [{**p, "class_name": run.spec.classes[p["class"]]} for p in kept.kept]
    return {
        "pairs": pairs,
        "classes": [run.spec.classes[c] for c in classes],
        "feature_dim": int(train.values.shape[1]),
        "examined": {run.spec.classes[c]: len(v) for c, v in examined_by_class.items()},
        "n_train": len(train.ids),
        "n_test": len(test.ids),
        "layer": scores.layer.describe() if scores.layer else None,
        "skipped": train.skipped + test.skipped,
        "gallery": shown,
        "panels": panels,
    }


def summarise(run: Run, work: _Work, out: dict[str, Any]) -> Summary:
    o = run.options
    numbers = summarize(out, o.top_k, o.tau, o.seed)
    body = run.body(
        numbers,
        variant=run.spec.mask_variant,
        classes=out["classes"],
        max_features=o.max_features,
        max_images=o.max_images,
        seed=o.seed,
        target_layer=out["layer"],
        skipped=out["skipped"],
        settings=run.settings(
            resized_to=run.resized_to(),
            geometry=plain_geometry(work.geometry),
            cam="grad-cam GradCAM of one penultimate feature: ReLU, min-max scaled, "
            "bilinear to the input size",
        ),
        timing={
            "attribution_seconds": round(run.seconds, 3),
            "total_seconds": round(run.total_seconds(), 3),
        },
    )
    return Summary(body, build_report(body), RESULT_KEYS, lambda: writers(out, body))
