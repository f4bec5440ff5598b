"""The ``challenge`` task: the Backgrounds Challenge (Xiao et al., 2020; SPEC §1).

Every test foreground (image + ``fg_mask``) is pasted on every ``only_bg_t`` image, of every
class including its own: ``x = bg * (1 - mask) + fg * mask`` on the 224x224 tensors in
[0, 1], then the model step (normalisation, device, AMP). A foreground is *vulnerable* when
any composite is classified as anything but its class; challenge accuracy is the fraction
that are not.

The published reference re-reads and re-decodes every background JPEG for every foreground
(4,050 x 4,050 decodes). Here every background is decoded once by the public decode loader
into one uint8 tensor kept on the device; a composite then costs one multiply-add, so the
model's forward pass is the only real cost. Numbers come from :mod:`hf_bgbench.metrics`.

Modes: default (the reference's) stops a foreground at the first batch holding a wrong
prediction -- exact, since a foreground is declared robust only after every background;
``full_matrix=True`` scores every composite and adds per-background attack success rates.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import datasets
import numpy as np
import torch
from tqdm.auto import tqdm

from hf_bgbench.benchmarks import get_benchmark
from hf_bgbench.data.loader import DataError, decode_loader, iterate, size_message
from hf_bgbench.data.schema import MASK
from hf_bgbench.engine import default_num_workers
from hf_bgbench.metrics import (
    FoolingMatrix,
    accuracy,
    challenge_accuracy,
    challenge_accuracy_per_class,
    challenge_report,
    wilson_interval,
)
from hf_bgbench.model_step import ModelStep
from hf_bgbench.results import check_writable, make_document
from hf_bgbench.tasks import Task, register_task
from hf_bgbench.tasks.challenge_summary import challenge_report_section, write_challenge_files
from hf_bgbench.tasks.common import (
    classifier_and_mapper,
    input_geometry,
    open_data,
    run_header,
    write_run,
)

log = logging.getLogger(__name__)

RESULT_KEYS = [
    "mode",
    "challenge_accuracy",
    "challenge_accuracy_ci95",
    "clean_accuracy",
    "n_foregrounds",
    "n_backgrounds",
    "n_vulnerable",
    "challenge_accuracy_per_class",
    "attack_success",
]
CHALLENGE_OUTPUTS = (
    "challenge.json",
    "challenge.md",
    "challenge_model_index.yaml",
    "challenge.png",
    "vulnerable.parquet",
    "fooling_matrix.npz",
)
TOP_BACKGROUNDS = 3  # most fooling backgrounds listed per class in the results
FOREGROUND_CHUNK = 16  # foregrounds decoded (and scored clean) per DataLoader batch


class ChallengeError(ValueError):
    """The data cannot be used for the Backgrounds Challenge as given."""


def run_challenge(
    model: Any,
    data: str | Path | None,
    *,
    benchmark: str = "in9",
    foreground_variant: str = "original",
    background_variant: str = "only_bg_t",
    max_foregrounds: int | None = None,
    max_backgrounds: int | None = None,
    full_matrix: bool = False,
    resize_to_model_input: bool = False,
    batch_size: int = 64,
    device: str | torch.device | None = None,
    seed: int = 0,
    progress: bool = True,
    output_dir: str | Path | None = None,
    num_workers: int | None = None,
    restrict_to_benchmark: bool = False,
    label_map: str = "auto",
    checkpoint: str | None = None,
) -> dict[str, Any]:
    """Run the Backgrounds Challenge for ``model`` (a model id or a loaded classifier).

    ``max_foregrounds`` / ``max_backgrounds`` pick a seeded random subset (``seed``; the ids
    used are recorded) so a quick run stays reproducible; the published number uses all.
    Returns the results document; with ``output_dir`` also writes challenge.json,
    challenge.md, challenge_model_index.yaml, vulnerable.parquet, challenge.png and (full
    matrix) fooling_matrix.npz.
    """
    if batch_size < 1:
        raise ValueError(f"--batch-size must be >= 1, got {batch_size}.")
    started = time.perf_counter()
    spec = get_benchmark(benchmark)
    spec.check_task("challenge")
    if output_dir is not None:
        check_writable(output_dir, "--output")
    reader = open_data(data, spec)
    fg_ds = reader.load(foreground_variant, columns=(MASK,))
    bg_ds = reader.load(background_variant)
    fg_idx = _subset(len(fg_ds), max_foregrounds, seed, stream=0, what="foregrounds")
    bg_idx = _subset(len(bg_ds), max_backgrounds, seed, stream=1, what="backgrounds")

    classifier, mapper = classifier_and_mapper(
        model,
        spec,
        reader,
        label_map=label_map,
        restrict_to_benchmark=restrict_to_benchmark,
        checkpoint=checkpoint,
        device=None if device is None else str(device),
        progress=progress,
    )
    step = ModelStep(classifier, mapper, device)
    workers = default_num_workers() if num_workers is None else num_workers
    try:
        bgs, bg_labels, bg_ids, bg_skipped = decode_backgrounds(
            bg_ds,
            bg_idx,
            step.device,
            batch_size=batch_size,
            num_workers=workers,
            progress=progress,
        )
        if len(bg_ids) == 0:
            raise ChallengeError(
                f"{reader.location} [{background_variant}]: no readable background."
            )
        step.resize_to, deviations = input_geometry(step, bgs.shape[-2:], resize_to_model_input)
        t0 = time.perf_counter()
        out = _run_foregrounds(fg_ds, fg_idx, bgs, step, full_matrix, batch_size, workers, progress)
    except DataError as err:
        raise ChallengeError(
            f"The Backgrounds Challenge composites pixel by pixel: {err}"
        ) from None
    challenge_seconds = time.perf_counter() - t0
    if not out["ids"]:
        raise ChallengeError(f"{reader.location} [{foreground_variant}]: no readable foreground.")

    body = summarize(spec, out, bg_labels, bg_ids, full_matrix=full_matrix)
    body.update(run_header(classifier, model, spec, reader, mapper))
    body.update(
        protocol_deviations=deviations,
        foreground_variant=foreground_variant,
        background_variant=background_variant,
        mode="full_matrix" if full_matrix else "early_stop",
        seed=seed,
        subset={
            "seed": seed,
            "max_foregrounds": max_foregrounds,
            "max_backgrounds": max_backgrounds,
            "foreground_ids": out["ids"] if max_foregrounds is not None else None,
            "background_ids": bg_ids if max_backgrounds is not None else None,
        },
        skipped={"foregrounds": out["skipped"], "backgrounds": bg_skipped},
        settings={
            "batch_size": batch_size,
            "device": str(step.device),
            "num_workers": workers,
            "amp": step.cuda,
            "composite": "x = bg * (1 - mask) + fg * mask in [0, 1], then normalise",
            "resized_to": list(step.resize_to) if step.resize_to else None,
        },
        timing={
            "challenge_seconds": round(challenge_seconds, 3),
            "total_seconds": round(time.perf_counter() - started, 3),
            "composites_per_second": round(out["composites"] / max(challenge_seconds, 1e-9), 2),
        },
    )
    doc = make_document(
        "challenge", body, challenge_report_section(body, spec, out.get("asr")), head=RESULT_KEYS
    )
    if output_dir is not None:
        extra = write_challenge_files(out, bg_labels, bg_ids)
        write_run(doc, output_dir, "challenge", extra, outputs=CHALLENGE_OUTPUTS)
    return doc


def decode_backgrounds(
    ds: datasets.Dataset,
    indices: Sequence[int],
    device: torch.device,
    *,
    batch_size: int = 64,
    num_workers: int = 0,
    progress: bool = False,
) -> tuple[torch.Tensor, np.ndarray, list[str], list[dict[str, Any]]]:
    """Decode rows ``indices`` of ``ds`` once into a uint8 (N, 3, H, W) tensor on ``device``
    (uint8 keeps 4,050 backgrounds at 0.6 GB). Returns (images, labels, ids, unreadable rows).

    Images are not resized: the challenge composites at the data's own size (224x224)."""
    loader = decode_loader(ds, indices, batch_size=batch_size, num_workers=num_workers)
    chunks, labels, ids, skipped = [], [], [], []
    bar = tqdm(total=len(indices), desc="decode backgrounds", unit="img", disable=not progress)
    for batch in iterate(loader):
        skipped.extend(batch.skipped)
        if batch.images is not None:
            chunks.append(batch.images.to(device))
            labels.extend(batch.labels.tolist())
            ids.extend(batch.ids)
        bar.update(len(batch) + len(batch.skipped))
    bar.close()
    if skipped:
        log.warning("%d background(s) could not be read and were skipped.", len(skipped))
    if not chunks:
        return torch.empty(0, 3, 0, 0, dtype=torch.uint8), np.zeros(0, np.int64), [], skipped
    sizes = {tuple(c.shape[-2:]) for c in chunks}
    if len(sizes) > 1:
        raise DataError(size_message("background images", sizes))
    return torch.cat(chunks), np.asarray(labels, np.int64), ids, skipped


def _subset(n: int, limit: int | None, seed: int, *, stream: int, what: str) -> list[int]:
    """All rows, or ``limit`` of them drawn with ``seed`` (kept in dataset order).

    Foregrounds and backgrounds use separate seeded streams so changing one limit does not
    change which rows the other picks."""
    if limit is None or limit >= n:
        return list(range(n))
    if limit < 1:
        raise ValueError(f"--max-{what} must be >= 1, got {limit}.")
    rng = np.random.default_rng([seed, stream])
    return sorted(rng.choice(n, size=limit, replace=False).tolist())


def _run_foregrounds(
    fg_ds: datasets.Dataset,
    fg_idx: list[int],
    bgs: torch.Tensor,
    step: ModelStep,
    full_matrix: bool,
    batch_size: int,
    workers: int,
    progress: bool,
) -> dict[str, Any]:
    hw = tuple(bgs.shape[-2:])
    loader = decode_loader(
        fg_ds,
        fg_idx,
        columns=(MASK,),
        batch_size=FOREGROUND_CHUNK,
        num_workers=workers,
        prefetch_factor=2,
    )
    out: dict[str, Any] = {
        "ids": [],
        "labels": [],
        "clean_pred": [],
        "vulnerable": [],
        "first_bg": [],  # index of the first fooling background, -1 if none
        "first_pred": [],  # prediction on that composite
        "composites_per_fg": [],
        "rows": [],  # full matrix rows
        "skipped": [],
        "composites": 0,
    }
    bar = tqdm(total=len(fg_idx), desc="challenge", unit="fg", disable=not progress)
    for batch in iterate(loader):
        out["skipped"].extend(batch.skipped)
        if batch.images is not None:
            if tuple(batch.images.shape[-2:]) != hw:
                raise DataError(
                    size_message(
                        "foregrounds and backgrounds", {tuple(batch.images.shape[-2:]), hw}
                    )
                )
            images = batch.images.to(step.device)
            masks = batch.columns[MASK].to(step.device)
            clean = step.predict(images.float().div(255), batch.labels).pred
            out["clean_pred"].extend(clean.tolist())
            for image, mask, label in zip(images, masks, batch.labels.tolist(), strict=True):
                preds = _one_foreground(image, mask, label, bgs, step, batch_size, full_matrix)
                wrong = np.flatnonzero(preds != label)
                out["vulnerable"].append(bool(len(wrong)))
                out["first_bg"].append(int(wrong[0]) if len(wrong) else -1)
                out["first_pred"].append(int(preds[wrong[0]]) if len(wrong) else None)
                out["composites_per_fg"].append(len(preds))
                out["composites"] += len(preds)
                if full_matrix:
                    out["rows"].append(preds)
            out["ids"].extend(batch.ids)
            out["labels"].extend(batch.labels.tolist())
        bar.update(len(batch) + len(batch.skipped))
    bar.close()
    if out["skipped"]:
        log.warning("%d foreground(s) could not be read and were skipped.", len(out["skipped"]))
    return out


def _one_foreground(
    image: torch.Tensor,
    mask: torch.Tensor,
    label: int,
    bgs: torch.Tensor,
    step: ModelStep,
    batch_size: int,
    full_matrix: bool,
) -> np.ndarray:
    """Predictions of ``image`` pasted on the backgrounds, in order; without ``full_matrix``
    the list ends with the first batch holding a wrong prediction (the reference's stop)."""
    m = mask.float().div(255)  # (1, H, W); the release's masks are binary (0/255)
    fg_part = image.float().div(255) * m  # fg * mask, the same for every background
    keep = 1 - m  # (1 - mask)
    preds = []
    for start in range(0, len(bgs), batch_size):
        bg = bgs[start : start + batch_size].float().div(255)
        x = bg * keep + fg_part  # x = bg * (1 - mask) + fg * mask  (SPEC §1)
        p = step.predict(x, label).pred
        preds.append(p)
        if not full_matrix and bool((p != label).any()):
            break
    return np.concatenate(preds)


def summarize(
    spec, out: dict[str, Any], bg_labels: np.ndarray, bg_ids: list[str], *, full_matrix: bool
) -> dict[str, Any]:
    """The challenge's numbers from the per-foreground verdicts (and the full matrix)."""
    labels = np.asarray(out["labels"], np.int64)
    vulnerable = np.asarray(out["vulnerable"], bool)
    acc = challenge_accuracy(vulnerable)
    per_class = challenge_accuracy_per_class(vulnerable, labels)
    n_fg, n_bg = len(labels), len(bg_ids)
    results: dict[str, Any] = {
        "challenge_accuracy": acc,
        "challenge_accuracy_ci95": list(wilson_interval(int((~vulnerable).sum()), n_fg)),
        "clean_accuracy": accuracy(np.asarray(out["clean_pred"]), labels),
        "n_foregrounds": n_fg,
        "n_backgrounds": n_bg,
        "n_vulnerable": int(vulnerable.sum()),
        "challenge_accuracy_per_class": {n: per_class.get(c) for c, n in enumerate(spec.classes)},
        "n_foregrounds_per_class": {
            n: int((labels == c).sum()) for c, n in enumerate(spec.classes)
        },
        "composites_evaluated": int(out["composites"]),
        "composites_total": n_fg * n_bg,
    }
    if full_matrix:
        matrix = FoolingMatrix.from_arrays(
            np.stack(out["rows"]), labels, bg_labels, spec.num_classes
        )
        report = challenge_report(matrix)
        if not math.isclose(report["challenge_accuracy"], acc):  # same data, same definition
            raise RuntimeError("full-matrix challenge accuracy disagrees with the per-row flags")
        results["attack_success"] = _asr_summary(spec, report, bg_labels, bg_ids)
        out["asr"] = np.asarray(report["attack_success_rate"], float)  # for the outputs
    return results


def _asr_summary(
    spec, report: dict[str, Any], bg_labels: np.ndarray, bg_ids: list[str]
) -> dict[str, Any]:
    asr = np.asarray(report["attack_success_rate"], float)
    per_class = {}
    for c, name in enumerate(spec.classes):
        cols = np.flatnonzero((bg_labels == c) & ~np.isnan(asr))
        order = cols[np.argsort(-asr[cols], kind="stable")][:TOP_BACKGROUNDS]
        per_class[name] = {
            "n_backgrounds": int((bg_labels == c).sum()),
            "max_asr": report["max_attack_success_rate_per_class"].get(c),
            "mean_asr": float(asr[cols].mean()) if len(cols) else None,
            "top_backgrounds": [{"id": bg_ids[j], "asr": float(asr[j])} for j in order],
            "foolable_into": report["foolable_into"].get(c),
        }
    defined = asr[~np.isnan(asr)]
    return {
        "mean_asr": float(defined.mean()) if len(defined) else None,
        "max_asr": float(defined.max()) if len(defined) else None,
        "fooled_into_background_class": report["fooled_into_background_class"],
        "per_class": per_class,
    }


CHALLENGE = register_task(
    Task(
        name="challenge",
        description="Backgrounds Challenge: every foreground on every background (worst case)",
        run=lambda model, **kw: run_challenge(model, kw.pop("data", None), **kw),
        columns=(MASK,),
        outputs=CHALLENGE_OUTPUTS,
    )
)
