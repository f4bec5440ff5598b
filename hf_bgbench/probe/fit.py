"""Fitting a linear probe head on frozen features, and its on-disk form.

The recipe is :data:`PROBE_RECIPE` (documented step by step in :mod:`hf_bgbench.probe.features`);
:func:`fit_probe` applies it to a feature matrix, :func:`save_head` / :func:`load_cached_head`
keep the fitted head as ``head.safetensors`` + ``probe.json``. Pure torch: no scikit-learn.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import uuid
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from safetensors import safe_open
from safetensors.torch import save_file

from hf_bgbench.cache import intact
from hf_bgbench.data.sources import DataSourceError
from hf_bgbench.probe.recipes import PROBE_RECIPE

log = logging.getLogger(__name__)

PROBE_FILES = ("head.safetensors", "probe.json")


class ProbeError(DataSourceError):
    """The probe cannot be fitted on this data (message names the problem and the fix)."""


class ProbeHead(torch.nn.Module):
    """Standardise, then a linear layer: ``W @ ((f - mean) / std) + b``."""

    def __init__(self, mean: torch.Tensor, std: torch.Tensor, weight: torch.Tensor, bias):
        super().__init__()
        self.register_buffer("mean", mean.float().clone())
        self.register_buffer("std", std.float().clone())
        self.linear = torch.nn.Linear(weight.shape[1], weight.shape[0])
        with torch.no_grad():
            self.linear.weight.copy_(weight)
            self.linear.bias.copy_(bias)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return self.linear((features.float() - self.mean) / self.std)

    def tensors(self) -> dict[str, torch.Tensor]:
        return {
            "mean": self.mean,
            "std": self.std,
            "weight": self.linear.weight.detach(),
            "bias": self.linear.bias.detach(),
        }


# --------------------------------------------------------------------------- fitting


def fit_probe(
    feats: torch.Tensor, labels: torch.Tensor, num_classes: int, seed: int
) -> tuple[ProbeHead, dict[str, Any]]:
    """(head, fit record) by the recipe of :data:`PROBE_RECIPE`."""
    feats, labels = feats.float(), labels.long()
    fit_idx, held_idx = holdout_split(labels, PROBE_RECIPE["holdout_fraction"], seed)
    if len(held_idx) == 0:
        raise ProbeError(
            f"the train split has {len(labels)} image(s): the probe's held-out selection "
            "needs at least 2 images of some class."
        )
    x_fit, mean, std = standardise(feats[fit_idx])
    x_held = (feats[held_idx] - mean) / std
    by_l2: dict[str, float] = {}
    params = None
    best = (-1.0, 0.0, None)
    for l2 in PROBE_RECIPE["l2_grid"]:  # strongest first; ties keep the stronger
        params = fit_logistic(x_fit, labels[fit_idx], num_classes, l2, init=params)
        acc = accuracy_of(params, x_held, labels[held_idx])
        by_l2[f"{l2:g}"] = acc
        if acc > best[0]:
            best = (acc, l2, params)
    acc, l2, params = best
    x_all, mean, std = standardise(feats)
    params = fit_logistic(x_all, labels, num_classes, l2, init=params)
    weight, bias = params[:, :-1], params[:, -1]
    record = {
        "l2": l2,
        "heldout_accuracy": acc,
        "heldout_n": len(held_idx),
        "heldout_accuracy_by_l2": by_l2,
        "train_accuracy": accuracy_of(params, x_all, labels),
        "feature_dim": int(feats.shape[1]),
    }
    return ProbeHead(mean, std, weight, bias), record


def holdout_split(labels: torch.Tensor, fraction: float, seed: int):
    """(fit indices, held-out indices): per class, a seeded permutation's first
    round(fraction * n_c) images (at least 1 when the class has 2 or more) are held out."""
    gen = torch.Generator().manual_seed(int(seed))
    cpu = labels.cpu()
    fit, held = [], []
    for c in sorted(set(cpu.tolist())):
        idx = torch.nonzero(cpu == c).flatten()
        idx = idx[torch.randperm(len(idx), generator=gen)]
        k = max(1, round(fraction * len(idx))) if len(idx) >= 2 else 0
        held.append(idx[:k])
        fit.append(idx[k:])
    fit_idx, held_idx = torch.cat(fit).sort().values, torch.cat(held).sort().values
    return fit_idx.to(labels.device), held_idx.to(labels.device)


def standardise(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    mean = x.mean(0)
    std = x.std(0, unbiased=False).clamp_min(1e-6)
    return (x - mean) / std, mean, std


def fit_logistic(
    x: torch.Tensor, y: torch.Tensor, num_classes: int, l2: float, init=None
) -> torch.Tensor:
    """(C, D + 1) weights and bias minimising mean cross-entropy + l2/2 * ||W||^2."""
    opt_cfg = PROBE_RECIPE["optimiser"]
    d = x.shape[1]
    w = torch.zeros(num_classes, d + 1, device=x.device) if init is None else init.clone()
    w.requires_grad_(True)
    opt = torch.optim.LBFGS(
        [w],
        lr=1.0,
        max_iter=opt_cfg["max_iter"],
        history_size=opt_cfg["history_size"],
        tolerance_grad=opt_cfg["tolerance_grad"],
        tolerance_change=opt_cfg["tolerance_change"],
        line_search_fn=opt_cfg["line_search"],
    )

    def closure() -> torch.Tensor:
        opt.zero_grad()
        logits = torch.addmm(w[:, d], x, w[:, :d].T)
        loss = F.cross_entropy(logits, y) + 0.5 * l2 * w[:, :d].pow(2).sum()
        loss.backward()
        return loss

    with torch.enable_grad():
        opt.step(closure)
    return w.detach()


def accuracy_of(params: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> float:
    logits = torch.addmm(params[:, -1], x, params[:, :-1].T)
    return int((logits.argmax(1) == y).sum()) / len(y)


# --------------------------------------------------------------------------- cache


def save_head(folder: Path, head: ProbeHead, record: dict[str, Any]) -> None:
    """head.safetensors + probe.json, written to a temporary folder and renamed into place
    (a reader never sees half a head). A cache that cannot be written only costs a refit."""
    tmp = folder.parent / f".{folder.name}.{uuid.uuid4().hex}.tmp"
    try:
        tmp.mkdir(parents=True)
        tensors = {k: v.detach().cpu().contiguous() for k, v in head.tensors().items()}
        save_file(tensors, str(tmp / "head.safetensors"), {"sha256": _digest(tensors)})
        (tmp / "probe.json").write_text(json.dumps(record, indent=2), encoding="utf-8")
        if folder.exists():  # an unreadable entry (a readable one is used, not refitted)
            stale = tmp.with_suffix(".stale")
            os.replace(folder, stale)
            shutil.rmtree(stale, ignore_errors=True)
        os.replace(tmp, folder)
    except OSError as err:
        if load_cached_head(folder, head.linear.out_features) is None:  # not a concurrent run's
            log.warning("could not cache the linear probe in %s (%s); used anyway", folder, err)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _digest(tensors: dict[str, torch.Tensor]) -> str:
    """sha256 over the head's tensors, by name (written with them, checked on a read)."""
    h = hashlib.sha256()
    for name in sorted(tensors):
        h.update(name.encode())
        h.update(tensors[name].detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()


def load_cached_head(folder: Path, num_classes: int) -> tuple[ProbeHead, dict] | None:
    """The cached (head, record) in ``folder``, or None (absent or unreadable: refit)."""
    if not all((folder / f).is_file() for f in PROBE_FILES):
        return None
    weights = folder / "head.safetensors"
    try:
        with safe_open(str(weights), framework="pt") as f:
            written = (f.metadata() or {}).get("sha256")
            t = {k: f.get_tensor(k) for k in f.keys()}
        record = json.loads((folder / "probe.json").read_text(encoding="utf-8"))
        head = ProbeHead(t["mean"], t["std"], t["weight"], t["bias"])
    except Exception as err:  # truncated or foreign files: fit anew
        log.warning("ignoring the unreadable cached probe in %s (%s)", folder, err)
        return None
    if not intact("linear-probe cache", weights, written, lambda: _digest(t)):
        return None
    if head.linear.out_features != num_classes:
        log.warning("ignoring the cached probe in %s: wrong number of classes", folder)
        return None
    return head, record
