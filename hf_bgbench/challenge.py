"""The Backgrounds Challenge (Xiao et al., 2020; SPEC §1): adversarial backgrounds.

Every test foreground (image + ``fg_mask``) is pasted on every ``only_bg_t`` image, of every
class including its own: ``x = bg * (1 - mask) + fg * mask`` on the 224x224 tensors in
[0, 1], then the model's own normalisation. A foreground is *vulnerable* when any composite
is classified as anything but its class; challenge accuracy is the fraction that are not.

Why this module exists next to the engine: the published reference re-reads and re-decodes
every background JPEG for every foreground (4,050 x 4,050 decodes). Here every background is
decoded once (with the engine's ``_DecodedView`` in DataLoader workers) into one uint8 tensor
kept on the device; a composite then costs one multiply-add on the device, so the model's
forward pass is the only real cost. Every number comes from :mod:`hf_bgbench.metrics.challenge`.

Two modes:

* default (the reference's): per foreground, evaluate backgrounds batch by batch and stop at
  the first batch holding a wrong prediction. Gives challenge accuracy (exact: a foreground is
  only declared robust after every background was tried).
* ``full_matrix=True``: every composite, giving the fooling matrix (n_fg x n_bg predicted
  classes) and with it the per-background attack success rates and foolable-into rates.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import datasets
import numpy as np
import torch
from torchvision import transforms as T
from tqdm.auto import tqdm

from hf_bgbench import __version__
from hf_bgbench.benchmarks import BenchmarkSpec, get_benchmark
from hf_bgbench.challenge_report import write_challenge_outputs
from hf_bgbench.data.schema import ID, IMAGE, LABEL, MASK
from hf_bgbench.data.sources import load_variant, resolve_source
from hf_bgbench.engine import _collate, _DecodedView, default_device, default_num_workers
from hf_bgbench.mapping import LabelMapper
from hf_bgbench.metrics import (
    FoolingMatrix,
    accuracy,
    challenge_accuracy,
    challenge_accuracy_per_class,
    challenge_report,
    wilson_interval,
)
from hf_bgbench.models.preprocessing import _ToRGB
from hf_bgbench.report import order_keys

log = logging.getLogger(__name__)

RESULT_KEYS = [
    "model",
    "model_resolved",
    "benchmark",
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
TOP_BACKGROUNDS = 3  # most fooling backgrounds listed per class in the results
FOREGROUND_CHUNK = 16  # foregrounds decoded (and scored clean) per DataLoader batch


class ChallengeError(ValueError):
    """The data cannot be used for the Backgrounds Challenge as given."""


# --------------------------------------------------------------------------- public API


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
    batch_size: int = 64,
    device: str | torch.device | None = None,
    seed: int = 0,
    progress: bool = True,
    output_dir: str | Path | None = None,
    num_workers: int | None = None,
    restrict_to_benchmark: bool = False,
    checkpoint: str | None = None,
) -> dict[str, Any]:
    """Run the Backgrounds Challenge for ``model`` (a model id or a loaded classifier).

    ``max_foregrounds`` / ``max_backgrounds`` pick a seeded random subset (``seed``; the ids
    used are recorded) so a quick run stays reproducible; the published number uses all.
    Returns the results dict; with ``output_dir`` also writes challenge.json, challenge.md,
    vulnerable.parquet, challenge.png and (full matrix) fooling_matrix.npz.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}.")
    started = time.perf_counter()
    spec = get_benchmark(benchmark)
    source = resolve_source(data if data is not None else spec.hub_repo, spec)
    fg_ds = load_variant(source, foreground_variant, spec, with_mask=True)
    bg_ds = load_variant(source, background_variant, spec)
    fg_idx = _subset(len(fg_ds), max_foregrounds, seed, stream=0, what="foregrounds")
    bg_idx = _subset(len(bg_ds), max_backgrounds, seed, stream=1, what="backgrounds")

    from hf_bgbench.evaluation import _load  # the one model-loading entry point

    classifier = _load(model, checkpoint, None if device is None else str(device))
    device = torch.device(device) if device is not None else default_device()
    classifier.to(device)
    mapper = LabelMapper.for_model(classifier.label_space, spec, restrict=restrict_to_benchmark)
    workers = default_num_workers() if num_workers is None else num_workers
    step = _Step(classifier, mapper, device)

    bgs, bg_labels, bg_ids, bg_skipped = decode_backgrounds(
        bg_ds, bg_idx, device, batch_size=batch_size, num_workers=workers, progress=progress
    )
    if len(bg_ids) == 0:
        raise ChallengeError(f"{source.location} [{background_variant}]: no readable background.")

    t0 = time.perf_counter()
    out = _run_foregrounds(
        fg_ds, fg_idx, bgs, bg_ids, step, full_matrix, batch_size, workers, device, progress
    )
    challenge_seconds = time.perf_counter() - t0
    if not out["ids"]:
        raise ChallengeError(f"{source.location} [{foreground_variant}]: no readable foreground.")

    results = _summarize(
        spec,
        out,
        bg_labels,
        bg_ids,
        full_matrix=full_matrix,
    )
    subset = {
        "seed": seed,
        "max_foregrounds": max_foregrounds,
        "max_backgrounds": max_backgrounds,
        "foreground_ids": out["ids"] if max_foregrounds is not None else None,
        "background_ids": bg_ids if max_backgrounds is not None else None,
    }
    results.update(
        model=getattr(classifier, "model_id", str(model)),
        model_resolved=getattr(classifier, "resolved", None),
        benchmark=spec.name,
        foreground_variant=foreground_variant,
        background_variant=background_variant,
        mode="full_matrix" if full_matrix else "early_stop",
        seed=seed,
        subset=subset,
        skipped={"foregrounds": out["skipped"], "backgrounds": bg_skipped},
        label_protocol=mapper.protocol,
        data=source.describe(),
        settings={
            "batch_size": batch_size,
            "device": str(device),
            "num_workers": workers,
            "amp": device.type == "cuda",
            "composite": "x = bg * (1 - mask) + fg * mask in [0, 1], then normalise",
            "resized_to": list(step.resize_to) if step.resize_to else None,
        },
        timing={
            "challenge_seconds": round(challenge_seconds, 3),
            "total_seconds": round(time.perf_counter() - started, 3),
            "composites_per_second": round(out["composites"] / max(challenge_seconds, 1e-9), 2),
        },
        hf_bgbench_version=__version__,
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
    )
    results = order_keys(results, RESULT_KEYS)
    if output_dir is not None:
        write_challenge_outputs(results, out, bg_labels, bg_ids, Path(output_dir))
    return results


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
    loader = torch.utils.data.DataLoader(
        _DecodedView(ds, list(indices), _image_transform()),
        batch_size=batch_size,
        num_workers=num_workers,
        collate_fn=_collate_same_size,
        prefetch_factor=4 if num_workers > 0 else None,
    )
    chunks, labels, ids, skipped = [], [], [], []
    bar = tqdm(total=len(indices), desc="decode backgrounds", unit="img", disable=not progress)
    for x, y, batch_ids, bad in loader:
        skipped.extend(bad)
        if x is not None:
            chunks.append(x.to(device))
            labels.extend(y.tolist())
            ids.extend(batch_ids)
        bar.update(len(batch_ids) + len(bad))
    bar.close()
    if skipped:
        log.warning("%d background(s) could not be read and were skipped.", len(skipped))
    if not chunks:
        return torch.empty(0, 3, 0, 0, dtype=torch.uint8), np.zeros(0, np.int64), [], skipped
    sizes = {tuple(c.shape[-2:]) for c in chunks}
    if len(sizes) > 1:
        raise ChallengeError(_size_message("background images", sizes))
    return torch.cat(chunks), np.asarray(labels, np.int64), ids, skipped


# --------------------------------------------------------------------------- decoding


def _image_transform() -> Callable:
    # RGB uint8 CHW, no resize (see decode_backgrounds).
    return T.Compose([_ToRGB(), T.PILToTensor()])


def _mask_transform() -> Callable:
    return T.Compose([T.Grayscale(num_output_channels=1), T.PILToTensor()])


def _size_message(what: str, sizes: set) -> str:
    listed = ", ".join(f"{h}x{w}" for h, w in sorted(sizes))
    return (
        f"The Backgrounds Challenge composites foregrounds and backgrounds pixel by pixel, so "
        f"all {what} must have one size (the release's are 224x224); found {listed}. "
        "Resize the data (images and fg_mask alike) to one size first."
    )


def _collate_same_size(items):
    sizes = {tuple(it[0].shape[-2:]) for it in items if it[3] is None}
    if len(sizes) > 1:
        raise ChallengeError(_size_message("background images", sizes))
    return _collate(items)


class _ForegroundView(torch.utils.data.Dataset):
    """Foreground image and its mask, both decoded by the engine's ``_DecodedView``."""

    def __init__(self, ds: datasets.Dataset, indices: list[int]):
        self.images = _DecodedView(ds, indices, _image_transform())
        masks = ds.select_columns([MASK, LABEL, ID]).rename_column(MASK, IMAGE)
        self.masks = _DecodedView(masks, indices, _mask_transform())

    def __len__(self) -> int:
        return len(self.images)

    def __getitem__(self, i: int):
        image, label, image_id, err = self.images[i]
        if err is None:
            mask, _, _, err = self.masks[i]
            if err is not None:
                err = f"mask: {err}"
            elif tuple(mask.shape[-2:]) != tuple(image.shape[-2:]):
                raise ChallengeError(
                    f"Foreground {image_id!r}: image is {image.shape[-2]}x{image.shape[-1]} "
                    f"but its mask is {mask.shape[-2]}x{mask.shape[-1]}; they must match."
                )
            else:
                return image, mask, label, image_id, None
        return None, None, label, image_id, err


def _collate_foregrounds(items):
    good = [it for it in items if it[4] is None]
    bad = [{"id": it[3], "label": it[2], "reason": it[4]} for it in items if it[4] is not None]
    if not good:
        return None, None, [], [], bad
    sizes = {tuple(it[0].shape[-2:]) for it in good}
    if len(sizes) > 1:
        raise ChallengeError(_size_message("foreground images", sizes))
    return (
        torch.stack([it[0] for it in good]),
        torch.stack([it[1] for it in good]),
        [int(it[2]) for it in good],
        [it[3] for it in good],
        bad,
    )


def _subset(n: int, limit: int | None, seed: int, *, stream: int, what: str) -> list[int]:
    """All rows, or ``limit`` of them drawn with ``seed`` (kept in dataset order).

    Foregrounds and backgrounds use separate seeded streams so changing one limit does not
    change which rows the other picks."""
    if limit is None or limit >= n:
        return list(range(n))
    if limit < 1:
        raise ValueError(f"max_{what} must be >= 1, got {limit}.")
    rng = np.random.default_rng([seed, stream])
    return sorted(rng.choice(n, size=limit, replace=False).tolist())


# --------------------------------------------------------------------------- model step


class _Step:
    """Composites in [0, 1] -> benchmark predictions, like the engine's forward: optional
    resize to the model's input size, the model's own normalisation, channels_last + fp16
    autocast on CUDA, label mapping."""

    def __init__(self, classifier: Any, mapper: LabelMapper, device: torch.device):
        self.classifier = classifier
        self.mapper = mapper
        self.cuda = device.type == "cuda"
        if self.cuda:
            classifier.model.to(memory_format=torch.channels_last)
        self.amp = torch.autocast("cuda", dtype=torch.float16) if self.cuda else nullcontext()
        pre = classifier.preprocessing
        self.normalize = pre.normalize_unit_batch
        self.input_size = tuple(pre.input_size)
        self.interpolation = pre.interpolation
        self.resize_to: tuple[int, int] | None = None

    def check_size(self, hw: tuple[int, int]) -> None:
        """Composites are made at the data's size; resize them only if the model wants
        another (as ``bgbench evaluate`` resizes precropped images)."""
        if tuple(hw) != self.input_size:
            self.resize_to = self.input_size

    def __call__(self, x01: torch.Tensor, label: int | torch.Tensor) -> np.ndarray:
        if self.resize_to is not None:
            mode = self.interpolation if self.interpolation in ("bilinear", "bicubic") else None
            x01 = torch.nn.functional.interpolate(
                x01,
                size=self.resize_to,
                mode=mode or "nearest",
                antialias=mode is not None,
                align_corners=False if mode else None,
            ).clamp_(0, 1)
        x = self.normalize(x01)
        if self.cuda:
            x = x.contiguous(memory_format=torch.channels_last)
        with self.amp:
            logits = self.classifier.logits(x)
        labels = (
            label if isinstance(label, torch.Tensor) else torch.full((len(x),), int(label))
        ).to(logits.device)
        pred, _, _ = self.mapper(logits, labels)
        return pred.astype(np.int64)


# --------------------------------------------------------------------------- the loop


def _run_foregrounds(
    fg_ds: datasets.Dataset,
    fg_idx: list[int],
    bgs: torch.Tensor,
    bg_ids: list[str],
    step: _Step,
    full_matrix: bool,
    batch_size: int,
    workers: int,
    device: torch.device,
    progress: bool,
) -> dict[str, Any]:
    n_bg = len(bg_ids)
    hw = tuple(bgs.shape[-2:])
    step.check_size(hw)
    loader = torch.utils.data.DataLoader(
        _ForegroundView(fg_ds, fg_idx),
        batch_size=FOREGROUND_CHUNK,
        num_workers=workers,
        collate_fn=_collate_foregrounds,
        prefetch_factor=2 if workers > 0 else None,
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
    with torch.inference_mode():
        for images, masks, labels, ids, bad in loader:
            out["skipped"].extend(bad)
            if images is not None:
                if tuple(images.shape[-2:]) != hw:
                    raise ChallengeError(
                        _size_message("foregrounds and backgrounds", {tuple(images.shape[-2:]), hw})
                    )
                images, masks = images.to(device), masks.to(device)
                clean = step(images.float().div(255), torch.tensor(labels))
                out["clean_pred"].extend(clean.tolist())
                for image, mask, label in zip(images, masks, labels, strict=True):
                    preds = _one_foreground(image, mask, label, bgs, step, batch_size, full_matrix)
                    wrong = np.flatnonzero(preds != label)
                    out["vulnerable"].append(bool(len(wrong)))
                    out["first_bg"].append(int(wrong[0]) if len(wrong) else -1)
                    out["first_pred"].append(int(preds[wrong[0]]) if len(wrong) else None)
                    out["composites_per_fg"].append(len(preds))
                    out["composites"] += len(preds)
                    if full_matrix:
                        assert len(preds) == n_bg
                        out["rows"].append(preds)
                out["ids"].extend(ids)
                out["labels"].extend(labels)
            bar.update(len(ids) + len(bad))
    bar.close()
    if out["skipped"]:
        log.warning("%d foreground(s) could not be read and were skipped.", len(out["skipped"]))
    return out


def _one_foreground(
    image: torch.Tensor,
    mask: torch.Tensor,
    label: int,
    bgs: torch.Tensor,
    step: _Step,
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
        p = step(x, label)
        preds.append(p)
        if not full_matrix and bool((p != label).any()):
            break
    return np.concatenate(preds)


# --------------------------------------------------------------------------- results


def _summarize(
    spec: BenchmarkSpec,
    out: dict[str, Any],
    bg_labels: np.ndarray,
    bg_ids: list[str],
    *,
    full_matrix: bool,
) -> dict[str, Any]:
    labels = np.asarray(out["labels"], np.int64)
    vulnerable = np.asarray(out["vulnerable"], bool)
    names = spec.classes
    acc = challenge_accuracy(vulnerable)
    per_class = challenge_accuracy_per_class(vulnerable, labels)
    robust = int((~vulnerable).sum())
    n_fg, n_bg = len(labels), len(bg_ids)
    results: dict[str, Any] = {
        "challenge_accuracy": acc,
        "challenge_accuracy_ci95": list(wilson_interval(robust, n_fg)),
        "clean_accuracy": accuracy(np.asarray(out["clean_pred"]), labels),
        "n_foregrounds": n_fg,
        "n_backgrounds": n_bg,
        "n_vulnerable": int(vulnerable.sum()),
        "challenge_accuracy_per_class": {name: per_class.get(c) for c, name in enumerate(names)},
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
    spec: BenchmarkSpec, report: dict[str, Any], bg_labels: np.ndarray, bg_ids: list[str]
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
