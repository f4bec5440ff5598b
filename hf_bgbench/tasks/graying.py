"""The ``graying`` task: background ablation by graying (Moayeri et al., 2022, Fig. 8;
SPEC §2 "Other analyses").

Every background pixel of an image of the benchmark's mask variant is set to a flat grey
(0.5 in [0, 1], the paper's), the object kept: ``x_gray = x ⊙ m + 0.5 (1 − m)`` with the
binary object mask m. The model sees the clean and the grayed image; the drop in accuracy
says how much of its accuracy the background carried. Accuracies follow the protocol's
aggregation (the paper's: per class, then the mean over the classes).

Hooks over the runner: prepare = the mask variant's test images (a seeded subset) at the
protocol's size; compute = clean and grayed copies per batch through the model step;
summarise = :mod:`hf_bgbench.tasks.graying_summary`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from hf_bgbench.data.loader import DataError, Geometry
from hf_bgbench.data.sources import DataSourceError
from hf_bgbench.tasks.graying_options import GrayingError, GrayingOptions
from hf_bgbench.tasks.graying_summary import PER_IMAGE_FILE, RESULT_KEYS, summarize
from hf_bgbench.tasks.noise_draw import MASK_THRESHOLD
from hf_bgbench.tasks.options import REQUIRED, entry_signature
from hf_bgbench.tasks.runner import Run, Summary, Task, execute, plain_geometry
from hf_bgbench.tasks.saliency_maps import ATTRIBUTE_MASKS

ACCELERATOR_BATCH_SIZE = 64  # on a GPU when none is given (a CPU: devices.CPU_BATCH_SIZE)
GRAYING_OUTPUTS = (
    "graying.json",
    "graying.md",
    "graying_model_index.yaml",
    "graying.png",
    PER_IMAGE_FILE,
)


@dataclass
class _Work:
    ds: Any
    rows: list[int]
    geometry: Geometry | None
    columns: tuple[str, ...]  # the mask column, and the attribute masks when the data has them


def _load(run: Run) -> Any:
    """The mask variant's test split with its object masks and, when it has them, its
    attribute masks (each attribute is then grayed alone as well)."""
    spec = run.spec
    try:
        return run.reader.load(
            spec.mask_variant, columns=(spec.mask_column, ATTRIBUTE_MASKS), split="test"
        )
    except DataSourceError as err:
        if ATTRIBUTE_MASKS not in str(err):
            raise
    return run.reader.load(spec.mask_variant, columns=(spec.mask_column,), split="test")


def prepare(run: Run) -> _Work:
    spec = run.spec
    try:
        ds = _load(run)
    except (ValueError, FileNotFoundError) as err:
        raise GrayingError(
            f"Graying keeps the object and greys the rest, so it needs {spec.mask_variant!r} "
            f"with its {spec.mask_column!r} column: {err}"
        ) from None
    rows = run.subset(len(ds), run.options.max_images, what="images")
    run.start_model()
    columns = tuple(c for c in (spec.mask_column, ATTRIBUTE_MASKS) if c in ds.column_names)
    return _Work(ds, rows, run.masked_geometry(ds), columns)


def attribute_masks(entries: Any, geometry: Geometry | None) -> tuple[list[str], np.ndarray]:
    """(names, bool (k, H, W) masks) of one image's non-empty attribute masks, sized like the
    image (the same geometry, nearest neighbour)."""
    import datasets
    from PIL import Image

    names, masks = [], []
    for entry in entries or ():
        mask = entry["mask"]
        if isinstance(mask, dict):  # stored undecoded: {"bytes", "path"}
            mask = datasets.Image().decode_example(mask)
        if not isinstance(mask, Image.Image):
            mask = Image.fromarray(np.asarray(mask, dtype=np.uint8))
        mask = mask.convert("L")
        if geometry is not None:
            mask = geometry(mask, mask=True)
        binary = np.asarray(mask) >= MASK_THRESHOLD
        if binary.any():
            names.append(str(entry["attribute"]))
            masks.append(binary)
    return names, np.asarray(masks, bool)


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
    batches = run.batches(
        work.ds,
        work.rows,
        skipped=skipped,
        desc="graying",
        columns=work.columns,
        geometry=work.geometry,
    )
    try:
        for batch in batches:
            x = batch.images.to(run.step.device).float().div_(255)
            m = (batch.columns[run.spec.mask_column].to(run.step.device) >= MASK_THRESHOLD).float()
            grayed = x * m + gray * (1 - m)
            out = run.step.predict(torch.cat([x, grayed]), torch.cat([batch.labels] * 2))
            k = len(batch)
            ids += batch.ids
            labels.append(batch.labels.numpy())
            pred.append(np.stack([out.pred[:k], out.pred[k:]], axis=1))
            prob.append(np.stack([out.prob_true[:k], out.prob_true[k:]], axis=1))
            for i, entries in enumerate(batch.columns.get(ATTRIBUTE_MASKS, [None] * k)):
                attributes.append(
                    _grayed_attributes(run, x[i], batch.labels[i : i + 1], entries, work.geometry)
                )
    except DataError as err:
        raise GrayingError(f"Graying cannot use the data: {err}") from None
    finally:
        batches.close()
    if not ids:
        raise GrayingError(f"{run.reader.location} [{run.spec.mask_variant}]: no readable image.")
    return {
        "ids": ids,
        "labels": np.concatenate(labels).astype(np.int64),
        "pred": np.concatenate(pred),  # (n, 2): clean, grayed
        "prob": np.concatenate(prob).astype(np.float64),
        "attributes": attributes if ATTRIBUTE_MASKS in work.columns else None,
        "skipped": skipped,
    }


def summarise(run: Run, work: _Work, out: dict[str, Any]) -> Summary:
    o = run.options
    aggregation = run.protocol.settings.get("aggregation", "class-mean")
    numbers, report, frame = summarize(run.spec, out, o.seed, aggregation, o.gray)
    body = run.body(
        numbers,
        variant=run.spec.mask_variant,
        mask_column=run.spec.mask_column,
        max_images=o.max_images,
        image_ids=out["ids"] if o.max_images is not None else None,
        skipped=out["skipped"],
        settings=run.settings(
            resized_to=run.resized_to(),
            geometry=plain_geometry(work.geometry),
            mask_threshold=MASK_THRESHOLD,
        ),
        timing={
            "graying_seconds": round(run.seconds, 3),
            "total_seconds": round(run.total_seconds(), 3),
        },
    )
    files = {PER_IMAGE_FILE: lambda path: frame.to_parquet(path, index=False)}
    return Summary(body, report(body), RESULT_KEYS, lambda: files)


TASK = Task(
    name="graying",
    description="Background ablation: accuracy with every background pixel set to grey",
    options=GrayingOptions,
    prepare=prepare,
    compute=compute,
    summarise=summarise,
    stem="graying",
    outputs=GRAYING_OUTPUTS,
    gpu_batch_size=ACCELERATOR_BATCH_SIZE,
)


def run_graying(model: Any, data: str | Path | None = None, **options: Any) -> dict[str, Any]:
    """Background ablation by graying of ``model`` (a model id or a loaded classifier) with
    the :class:`GrayingOptions` ``options``: accuracy on clean and background-grayed test
    images and the drop, per class and overall. Returns the results document; with
    ``output_dir`` also writes graying.json, graying.md, graying_model_index.yaml and
    graying_images.parquet."""
    return execute(TASK, model, data=data, **options)


run_graying.__signature__ = entry_signature(GrayingOptions, model=REQUIRED, data=None)
