"""The ``noise`` task: RIVAL10's noise analysis and relative foreground sensitivity (Moayeri et
al., 2022; SPEC §2), on any benchmark with object masks (RIVAL10 ``ordinary``/``object_mask``,
IN-9 ``original``/``mask``).

For an image x in [0, 1] with binary object mask m and Gaussian noise n (i.i.d. per pixel and
channel), the model sees ``x_fg = clip(x + n ⊙ m)`` and ``x_bg = clip(x + n ⊙ (1 − m))`` --
the *same* n for both, as in the authors' ``compute_noise_robustness.py`` -- over ``trials``
draws per image and level:

* ``linf`` (the main setting): n ~ N(0, σ²), σ = level / 255, levels 30, 60, ..., 210;
* ``l2``: the masked noise n ⊙ m (resp. n ⊙ (1 − m)), n ~ N(0, 1), is scaled to ℓ2 norm
  ε = level over the whole image tensor (3 x H x W, pixel values in [0, 1], at the size the
  noise is added: 224 x 224 for IN-9 and for RIVAL10 through a 224 model), levels 25, ...,
  200. Like the authors' code, each region's noise is normalised separately, so both regions
  get the same noise energy whatever the object's size; a region that is empty gets none.

**Noise, reproducibly.** The noise of one image at one level is drawn on the device from its
own ``torch.Generator`` seeded with ``sha256("bgbench-noise", seed, norm, level, image id)``:
all trials of it in one call, shape (trials, 3, H, W). So it does not depend on the batch
size, the order of the images, the other images or the other levels; the same seed gives
identical numbers, another seed other noise. The streams differ between device kinds (CPU
and CUDA generators are different algorithms): compare runs on the same kind of device.

**Efficiency.** Each image (+ mask) is decoded once. Per decoded chunk and level, all trials
of all images are composited on the device in one multiply-add per region, and the noisy
copies (plus the clean images) are forwarded in full batches of ``batch_size`` through the
model step. Every number comes from :mod:`hf_bgbench.metrics.noise` (see
:mod:`hf_bgbench.tasks.noise_summary`).
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm.auto import tqdm

from hf_bgbench.data.loader import DataError, decode_loader, iterate
from hf_bgbench.inference.devices import default_batch_size
from hf_bgbench.inference.engine import default_num_workers
from hf_bgbench.inference.model_step import ModelStep
from hf_bgbench.results import make_document
from hf_bgbench.tasks import Task, register_task
from hf_bgbench.tasks.common import (
    masked_geometry,
    model_step_for,
    run_header,
    seeded_subset,
    start_task,
    write_run,
)
from hf_bgbench.tasks.noise_report import noise_report_section
from hf_bgbench.tasks.noise_summary import RESULT_KEYS, summarize

NORMS = ("linf", "l2")
DEFAULT_LEVELS = {
    "linf": (30, 60, 90, 120, 150, 180, 210),
    "l2": (25, 50, 75, 100, 125, 150, 175, 200),
}
LEVEL_KEY = {"linf": "sigma", "l2": "epsilon"}
NOISE_OUTPUTS = (
    "noise.json",
    "noise.md",
    "noise_model_index.yaml",
    "noise_images.parquet",
    "noise_accuracy.png",
    "noise_rfs.png",
    "noise_classes.png",
    "noise_irfs.png",
)
ACCELERATOR_BATCH_SIZE = 64  # on a GPU when none is given (a CPU: devices.CPU_BATCH_SIZE)
MASK_THRESHOLD = 128  # a pixel is object when its mask value is >= 128 (masks are 0/255)
FG, BG = 0, 1  # the region axis of the results


class NoiseError(ValueError):
    """The noise analysis cannot run as asked (message meant for a person)."""


def check_levels(levels: Sequence[float | str] | None, norm: str) -> list[float]:
    """The noise levels to run, sorted: ``levels`` checked, or the published ones."""
    if norm not in NORMS:
        raise NoiseError(f"--norm {norm!r}: choose one of {', '.join(NORMS)}.")
    if levels is None:
        return [float(v) for v in DEFAULT_LEVELS[norm]]
    unit = "σ x 255 (e.g. 30 = σ 30/255)" if norm == "linf" else "ε, an ℓ2 norm (e.g. 25)"
    values = []
    for raw in levels:
        try:
            value = float(raw)
        except (TypeError, ValueError):
            raise NoiseError(
                f"--levels: {raw!r} is not a number; give each level as {unit}."
            ) from None
        if not math.isfinite(value) or value <= 0:
            raise NoiseError(f"--levels: {raw!r} must be a positive number ({unit}).")
        if norm == "linf" and value < 1:
            raise NoiseError(
                f"--levels {raw!r}: linf levels are σ in 0-255 pixel units (σ = level/255; "
                f"published 30 ... 210), so {value:g} adds almost no noise; did you mean "
                f"{value * 255:g}?"
            )
        values.append(value)
    if not values:
        raise NoiseError(f"--levels: give at least one level ({unit}).")
    if len(set(values)) != len(values):
        raise NoiseError(f"--levels {list(levels)}: each level once, please.")
    return sorted(values)


def image_seed(seed: int, norm: str, level: float, image_id: str) -> int:
    """The generator seed of one image at one noise level (63 bits)."""
    key = f"bgbench-noise|{int(seed)}|{norm}|{float(level)!r}|{image_id}".encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "little") >> 1


@dataclass(frozen=True)
class NoiseSettings:
    """What noise a run adds: ``levels`` (σ x 255 for linf, ε for l2), ``trials`` draws per
    image and level, the ``norm`` and the ``seed``."""

    levels: tuple[float, ...]
    trials: int = 10
    norm: str = "linf"
    seed: int = 0

    def draw(
        self, ids: Sequence[str], shape: Sequence[int], level: float, device: torch.device
    ) -> torch.Tensor:
        """N(0, 1) noise (len(ids), trials, *shape) on ``device``, each image from its own
        seeded generator (:func:`image_seed`)."""
        device = torch.device(device)
        out = torch.empty((len(ids), self.trials, *shape), device=device)
        for i, image_id in enumerate(ids):
            generator = torch.Generator(device=device)
            generator.manual_seed(image_seed(self.seed, self.norm, level, image_id))
            out[i].normal_(generator=generator)
        return out

    def copies(
        self, x: torch.Tensor, m: torch.Tensor, z: torch.Tensor, level: float
    ) -> torch.Tensor:
        """(B, 2, T, 3, H, W): [:, 0] = clip(x + n ⊙ m), [:, 1] = clip(x + n ⊙ (1 − m)).

        ``x`` (B, 3, H, W) in [0, 1], ``m`` (B, 1, H, W) in {0, 1}, ``z`` (B, T, 3, H, W)
        N(0, 1); n = σ z (linf, σ = level/255) or, per region, z scaled to ℓ2 norm ε = level
        (l2)."""
        b, t = z.shape[:2]
        inside = m.unsqueeze(1)  # (B, 1, 1, H, W)
        outside = 1 - inside
        if self.norm == "linf":
            w_fg, w_bg = inside * (level / 255), outside * (level / 255)
        else:
            energy = z.square().sum(dim=2, keepdim=True)  # (B, T, 1, H, W)
            w_fg = inside * _scale(energy, inside, level)
            w_bg = outside * _scale(energy, outside, level)
        out = torch.empty((b, 2, t, *x.shape[1:]), device=x.device, dtype=x.dtype)
        base = x.unsqueeze(1)
        torch.addcmul(base, z, w_fg, out=out[:, FG])  # x + n ⊙ m, one multiply-add
        torch.addcmul(base, z, w_bg, out=out[:, BG])  # x + n ⊙ (1 − m)
        return out.clamp_(0, 1)


def _scale(energy: torch.Tensor, region: torch.Tensor, eps: float) -> torch.Tensor:
    """(B, T, 1, 1, 1): ε / ‖z ⊙ region‖₂ per image and trial; 0 for an empty region."""
    norm = (energy * region).sum(dim=(2, 3, 4), keepdim=True).sqrt()
    return torch.where(norm > 0, eps / norm.clamp_min(1e-12), torch.zeros_like(norm))


class _Batcher:
    """Collects images (with their labels and result slots) and forwards them in full
    batches of ``batch_size``; predictions land in ``pred`` / ``prob`` at the slots."""

    def __init__(self, step: ModelStep, batch_size: int, n_slots: int):
        self.step, self.batch_size = step, batch_size
        self.pred = np.full(n_slots, -2, np.int64)
        self.prob = np.zeros(n_slots, np.float32)
        self.pending: tuple[torch.Tensor, torch.Tensor, np.ndarray] | None = None
        self.forwarded = 0

    def add(self, x: torch.Tensor, labels: torch.Tensor, slots: np.ndarray) -> None:
        if self.pending is not None and self.pending[0].shape[1:] != x.shape[1:]:
            self.finish()  # another image size: close the batch of the previous size
        if self.pending is not None:
            px, pl, ps = self.pending
            x, labels, slots = (
                torch.cat([px, x]),
                torch.cat([pl, labels]),
                np.concatenate([ps, slots]),
            )
        full = len(x) - len(x) % self.batch_size
        for start in range(0, full, self.batch_size):
            stop = start + self.batch_size
            self._forward(x[start:stop], labels[start:stop], slots[start:stop])
        self.pending = (x[full:], labels[full:], slots[full:]) if full < len(x) else None

    def finish(self) -> None:
        if self.pending is not None:
            self._forward(*self.pending)
            self.pending = None

    def _forward(self, x: torch.Tensor, labels: torch.Tensor, slots: np.ndarray) -> None:
        out = self.step.predict(x, labels)
        self.pred[slots] = out.pred
        self.prob[slots] = out.prob_true
        self.forwarded += len(x)


def run_noise(
    model: Any,
    data: str | Path | None = None,
    *,
    benchmark: str = "in9",
    levels: Sequence[float | str] | None = None,
    trials: int = 10,
    norm: str = "linf",
    seed: int = 0,
    max_images: int | None = None,
    resize_to_model_input: bool = False,
    batch_size: int | None = None,
    device: str | torch.device | None = None,
    num_workers: int | None = None,
    progress: bool = True,
    output_dir: str | Path | None = None,
    restrict_to_benchmark: bool = False,
    label_map: str = "auto",
    checkpoint: str | None = None,
) -> dict[str, Any]:
    """Noise analysis of ``model`` (a model id or a loaded classifier) on the test images of
    ``benchmark`` with object masks: a_fg, a_bg, RFS and iRFS per level, per class and
    overall. ``levels``: σ x 255 (linf) or ε (l2), default the published ones; ``max_images``
    picks a seeded random subset (ids recorded). Returns the results document; with
    ``output_dir`` also writes noise.json, noise.md, noise_model_index.yaml,
    noise_images.parquet (one row per image and level) and the plots. ``batch_size``
    defaults to 8 on a CPU and 64 on a GPU
    (:func:`hf_bgbench.inference.devices.default_batch_size`);
    the numbers do not depend on it."""
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
        raise NoiseError(f"--trials must be a whole number >= 1, got {trials!r}.")
    if batch_size is not None and batch_size < 1:
        raise NoiseError(f"--batch-size must be >= 1, got {batch_size}.")
    noise = NoiseSettings(tuple(check_levels(levels, norm)), trials, norm, seed)
    started = time.perf_counter()
    spec, reader = start_task("noise", benchmark, data, output_dir)
    if not spec.mask_variant:
        raise NoiseError(f"{spec.name} declares no variant with object masks (mask_variant).")
    try:
        ds = reader.load(spec.mask_variant, columns=(spec.mask_column,), split="test")
    except (ValueError, FileNotFoundError) as err:  # no such variant, no masks, ...
        raise NoiseError(
            f"The noise analysis adds noise inside and outside each object's mask, so it needs "
            f"{spec.mask_variant!r} with its {spec.mask_column!r} column: {err}"
        ) from None
    idx = seeded_subset(len(ds), max_images, seed, stream=0, what="images")
    classifier, mapper, step = model_step_for(
        model,
        spec,
        reader,
        label_map=label_map,
        restrict_to_benchmark=restrict_to_benchmark,
        checkpoint=checkpoint,
        device=device,
        progress=progress,
    )
    if batch_size is None:
        batch_size = default_batch_size(step.device, ACCELERATOR_BATCH_SIZE)
    geometry, deviations = masked_geometry(step, spec, reader, ds, resize_to_model_input)
    workers = default_num_workers() if num_workers is None else num_workers
    t0 = time.perf_counter()
    try:
        out = _run_images(ds, idx, spec, geometry, step, noise, batch_size, workers, progress)
    except DataError as err:
        raise NoiseError(f"The noise analysis cannot use the data: {err}") from None
    noise_seconds = time.perf_counter() - t0
    if not out["ids"]:
        raise NoiseError(f"{reader.location} [{spec.mask_variant}]: no readable image.")

    body, frame = summarize(spec, out, list(noise.levels), norm, trials, seed)
    body.update(run_header(classifier, model, spec, reader, mapper))
    noisy = len(out["ids"]) * len(noise.levels) * 2 * trials
    body.update(
        protocol_deviations=deviations,
        variant=spec.mask_variant,
        mask_column=spec.mask_column,
        max_images=max_images,
        image_ids=out["ids"] if max_images is not None else None,
        skipped=out["skipped"],
        settings={
            "batch_size": batch_size,
            "device": str(step.device),
            "num_workers": workers,
            "amp": step.cuda,
            "resized_to": list(step.resize_to) if step.resize_to else None,
            "geometry": None if geometry is None else _plain(asdict(geometry)),
            "mask_threshold": MASK_THRESHOLD,
        },
        timing={
            "noise_seconds": round(noise_seconds, 3),
            "total_seconds": round(time.perf_counter() - started, 3),
            "noisy_images": noisy,
            "noisy_images_per_second": round(noisy / max(noise_seconds, 1e-9), 2),
        },
    )
    doc = make_document("noise", body, noise_report_section(body), head=RESULT_KEYS)
    if output_dir is not None:
        extra = {"noise_images.parquet": lambda path: frame.to_parquet(path, index=False)}
        write_run(doc, output_dir, "noise", extra, outputs=NOISE_OUTPUTS)
    return doc


def _plain(values: dict[str, Any]) -> dict[str, Any]:
    """Tuples as lists: the document in memory equals the one read back from noise.json."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in values.items()}


def _run_images(
    ds: Any,
    idx: list[int],
    spec: Any,
    geometry: Any,
    step: ModelStep,
    noise: NoiseSettings,
    batch_size: int,
    workers: int,
    progress: bool,
) -> dict[str, Any]:
    """Decode each image once; per level, all trials' noisy copies through the batcher.

    Slots: the clean image i at i; its copy (level l, region r, trial t) at
    n + ((i * L + l) * 2 + r) * T + t, n = len(idx), L = len(levels)."""
    n, n_levels, trials = len(idx), len(noise.levels), noise.trials
    per_image = n_levels * 2 * trials
    mask_column = spec.mask_column
    batcher = _Batcher(step, batch_size, n + n * per_image)
    chunk = max(1, min(16, math.ceil(batch_size / (2 * trials))))
    loader = decode_loader(
        ds, idx, columns=(mask_column,), geometry=geometry, batch_size=chunk, num_workers=workers
    )
    ids: list[str] = []
    labels: list[int] = []
    skipped: list[dict[str, Any]] = []
    offsets = np.arange(per_image).reshape(n_levels, 2 * trials)
    bar = tqdm(total=n, desc="noise", unit="img", disable=not progress)
    for batch in iterate(loader):
        skipped.extend(batch.skipped)
        if batch.images is not None:
            first = len(ids)
            rows = np.arange(first, first + len(batch))
            x = batch.images.to(step.device).float().div_(255)
            m = (batch.columns[mask_column].to(step.device) >= MASK_THRESHOLD).float()
            y = batch.labels
            batcher.add(x, y, rows)
            repeated = y.repeat_interleave(2 * trials)
            for level_index, level in enumerate(noise.levels):
                z = noise.draw(batch.ids, x.shape[1:], level, step.device)
                copies = noise.copies(x, m, z, level).flatten(0, 2)
                slots = n + (rows[:, None] * per_image + offsets[level_index]).ravel()
                batcher.add(copies, repeated, slots)
            ids.extend(batch.ids)
            labels.extend(y.tolist())
        bar.update(len(batch) + len(batch.skipped))
    batcher.finish()
    bar.close()
    k = len(ids)
    noisy = n + np.arange(k * per_image)
    shape = (k, n_levels, 2, trials)
    return {
        "ids": ids,
        "labels": np.asarray(labels, np.int64),
        "clean_pred": batcher.pred[:k],
        "clean_prob": batcher.prob[:k].astype(np.float64),
        "pred": batcher.pred[noisy].reshape(shape),
        "prob": batcher.prob[noisy].reshape(shape).astype(np.float64),
        "skipped": skipped,
        "forwarded": batcher.forwarded,
    }


NOISE = register_task(
    Task(
        name="noise",
        description="Noise analysis: Gaussian noise on the object vs the background (RFS, iRFS)",
        run=lambda model, **kw: run_noise(model, kw.pop("data", None), **kw),
        columns=(),  # the benchmark's object mask: spec.mask_column of spec.mask_variant
        outputs=NOISE_OUTPUTS,
    )
)
