"""The ``challenge`` task: the Backgrounds Challenge (Xiao et al., 2020; SPEC §1).

Every test foreground (image + ``fg_mask``) is pasted on every ``only_bg_t`` image, of every
class including its own: ``x = bg * (1 - mask) + fg * mask`` on the 224x224 tensors in
[0, 1], then the model step (normalisation, device, AMP). A foreground is *vulnerable* when
any composite is classified as anything but its class; challenge accuracy is the fraction
that are not.

The published reference re-reads and re-decodes every background JPEG for every foreground
(4,050 x 4,050 decodes), in batches of 32, and stops a foreground at its first fooling batch.
Here backgrounds are decoded once by the public decode loader into a uint8 tensor on the
device (in chunks when they do not fit: :mod:`hf_bgbench.tasks.challenge_memory`); a
composite is one select per pixel, so the model's forward pass is the only real cost, and
the schedule (:mod:`hf_bgbench.tasks.challenge_schedule`) spends as few of them as it can:
many foregrounds share a batch, one composite each, each dropped the moment it is decided,
and backgrounds are tried most harmful first (fooling rate and lowered true-class
probability so far). Verdicts do not depend on that order -- a
foreground is robust only after every background -- but which fooling background is reported
does: with scheduling, a fooling background is the first found in the schedule, not in
dataset order (full-matrix mode reports the first in dataset order). Decided foregrounds are
cached
(:mod:`hf_bgbench.tasks.challenge_cache`), so an interrupted run resumes
(:mod:`hf_bgbench.tasks.challenge_run`). Numbers come from :mod:`hf_bgbench.metrics`.

Started by ``accelerate launch`` with several processes (:mod:`hf_bgbench.inference.distributed`),
each process takes a contiguous share of the foregrounds against every background, on its
own device; the main process gathers the shares (:mod:`hf_bgbench.tasks.challenge_shards`)
and writes the outputs. Verdicts are those of one process.

Modes: default (early stop) as above; ``full_matrix=True`` scores every composite (batches
filled across foregrounds) and adds per-background attack success rates.

Results add to the common header: ``composites_evaluated`` (what the verdicts took),
``composites_minimal`` (robust x backgrounds + vulnerable: the least any order can take),
``composites_computed`` / ``clean_forwards`` (by this run; less when resumed),
``computed_rows`` / ``reused_rows`` (per foreground and background chunk), ``settings``
(schedule, seed, chunking, cache), ``timing`` and ``memory`` (peak RSS of the process and
of its decode workers, peak CUDA allocation).
"""

from __future__ import annotations

import logging
import math
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from hf_bgbench.benchmarks import get_benchmark
from hf_bgbench.data.loader import DataError
from hf_bgbench.data.schema import MASK
from hf_bgbench.data.sources import DataSourceError
from hf_bgbench.inference.devices import default_batch_size
from hf_bgbench.inference.distributed import processes
from hf_bgbench.inference.engine import default_num_workers
from hf_bgbench.metrics import (
    FoolingMatrix,
    accuracy,
    challenge_accuracy,
    challenge_accuracy_per_class,
    challenge_report,
    wilson_interval,
)
from hf_bgbench.results import check_writable, make_document
from hf_bgbench.tasks import Task, register_task
from hf_bgbench.tasks.challenge_cache import CacheIdentity, default_challenge_cache_dir
from hf_bgbench.tasks.challenge_memory import background_chunk, peak_memory
from hf_bgbench.tasks.challenge_run import LoopOptions, run_pairs
from hf_bgbench.tasks.challenge_schedule import ORDER_DESCRIPTION
from hf_bgbench.tasks.challenge_shards import merge_memory, merge_shards
from hf_bgbench.tasks.challenge_summary import challenge_report_section, write_challenge_files
from hf_bgbench.tasks.common import (
    first_image_size,
    input_geometry,
    model_step_for,
    open_data,
    run_header,
    seeded_subset,
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
# The batch on a GPU when none is given (a CPU: devices.CPU_BATCH_SIZE). Early stop keeps one
# composite per undecided foreground in a batch, so the batch size is also how many
# foregrounds choose their next background from the same counts: on a 158-photo IN-9 build,
# passes / minimum 1.066 at 8 against 1.13 at 64 (bench/challenge_throughput.py).
ACCELERATOR_BATCH_SIZE = 64


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
    batch_size: int | None = None,
    device: str | torch.device | None = None,
    seed: int = 0,
    progress: bool = True,
    output_dir: str | Path | None = None,
    num_workers: int | None = None,
    restrict_to_benchmark: bool = False,
    label_map: str = "auto",
    checkpoint: str | None = None,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
    max_device_backgrounds: int | None = None,
) -> dict[str, Any]:
    """Run the Backgrounds Challenge for ``model`` (a model id or a loaded classifier).

    ``max_foregrounds`` / ``max_backgrounds`` pick a seeded random subset (``seed``; the ids
    used are recorded) so a quick run stays reproducible; the published number uses all.
    ``seed`` also breaks ties in the early-stop background order. ``batch_size`` defaults to
    8 on a CPU, 64 on a GPU (:func:`hf_bgbench.inference.devices.default_batch_size`). Decided
    foregrounds are cached under ``cache_dir`` (default ``<cache root>/challenge``;
    ``use_cache=False`` computes everything), so an interrupted run resumes.
    ``max_device_backgrounds`` caps the backgrounds held on the device at once (default: all
    that fit in half the free memory).
    Returns the results document; with ``output_dir`` also writes challenge.json,
    challenge.md, challenge_model_index.yaml, vulnerable.parquet, challenge.png and (full
    matrix) fooling_matrix.npz.
    """
    if batch_size is not None and batch_size < 1:
        raise ValueError(f"--batch-size must be >= 1, got {batch_size}.")
    if max_device_backgrounds is not None and max_device_backgrounds < 1:
        raise ValueError(f"--max-device-backgrounds must be >= 1, got {max_device_backgrounds}.")
    started = time.perf_counter()
    spec = get_benchmark(benchmark)
    spec.check_task("challenge")
    if output_dir is not None:
        check_writable(output_dir, "--output")
    procs = processes(device)
    device = procs.device(device)
    if batch_size is None:
        batch_size = default_batch_size(device, ACCELERATOR_BATCH_SIZE)
    progress = progress and procs.is_main  # one set of progress bars, the main process's
    with procs.main_first():  # the main process fills the caches the others then read
        reader = open_data(data, spec)
        fg_ds = reader.load(foreground_variant, columns=(MASK,))
        bg_ds = reader.load(background_variant)
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
    fg_idx = seeded_subset(len(fg_ds), max_foregrounds, seed, stream=0, what="foregrounds")
    bg_idx = seeded_subset(len(bg_ds), max_backgrounds, seed, stream=1, what="backgrounds")
    if step.cuda:
        torch.cuda.reset_peak_memory_stats(step.device)
    workers = default_num_workers() if num_workers is None else num_workers
    mode = "full_matrix" if full_matrix else "early_stop"
    try:
        if not len(bg_idx):
            raise ChallengeError(f"{reader.location} [{background_variant}]: no background.")
        hw = first_image_size(bg_ds.select(bg_idx[:8]))
        step.resize_to, deviations = input_geometry(step, hw, resize_to_model_input)
        chunk = background_chunk(len(bg_idx), hw, step.device, max_device_backgrounds)
        identity = CacheIdentity(
            classifier.fingerprint,
            reader.fingerprint(fg_ds, foreground_variant),
            reader.fingerprint(bg_ds, background_variant),
            foreground_variant,
            background_variant,
            mapper.protocol,
            "x".join(map(str, step.resize_to)) if step.resize_to else "none",
            mode,
        )
        opts = LoopOptions(
            full_matrix=full_matrix,
            batch_size=batch_size,
            num_workers=workers,
            chunk_size=chunk,
            seed=seed,
            num_classes=spec.num_classes,
            progress=progress,
            cache_root=(Path(cache_dir) if cache_dir else default_challenge_cache_dir())
            if use_cache
            else None,
            identity=identity,
        )
        t0 = time.perf_counter()
        mine = procs.shard(fg_idx)  # each process: a share of the foregrounds, every background
        shares = procs.together(
            lambda: (run_pairs(fg_ds, mine, bg_ds, bg_idx, step, opts), peak_memory(step.device))
        )
        out = merge_shards([o for o, _ in shares])
    except (DataError, DataSourceError) as err:
        raise ChallengeError(
            f"The Backgrounds Challenge composites pixel by pixel: {err}"
        ) from None
    challenge_seconds = time.perf_counter() - t0
    bg_ids, bg_labels = out["bg_ids"], out["bg_labels"]
    if not bg_ids:
        raise ChallengeError(f"{reader.location} [{background_variant}]: no readable background.")
    if not out["ids"]:
        raise ChallengeError(f"{reader.location} [{foreground_variant}]: no readable foreground.")

    body = summarize(spec, out, bg_labels, bg_ids, full_matrix=full_matrix)
    body.update(run_header(classifier, model, spec, reader, mapper))
    body.update(
        protocol_deviations=deviations,
        foreground_variant=foreground_variant,
        background_variant=background_variant,
        mode=mode,
        seed=seed,
        subset={
            "seed": seed,
            "max_foregrounds": max_foregrounds,
            "max_backgrounds": max_backgrounds,
            "foreground_ids": out["ids"] if max_foregrounds is not None else None,
            "background_ids": bg_ids if max_backgrounds is not None else None,
        },
        skipped={"foregrounds": out["skipped"], "backgrounds": out["bg_skipped"]},
        settings={
            "batch_size": batch_size,
            "device": str(step.device),
            "num_workers": workers,
            "amp": step.cuda,
            "composite": "x = bg * (1 - mask) + fg * mask in [0, 1], then normalise",
            "resized_to": list(step.resize_to) if step.resize_to else None,
            "schedule": (
                {"order": "dataset order, batches filled across foregrounds"}
                if full_matrix
                else {"order": ORDER_DESCRIPTION, "tiebreak_seed": seed}
            ),
            "processes": procs.num,
            "max_device_backgrounds": max_device_backgrounds,
            "background_chunk_size": chunk,
            "background_chunks": out["chunks"],
            "cache": str(opts.cache_root) if opts.cache_root else None,
        },
        timing={
            "challenge_seconds": round(challenge_seconds, 3),
            "background_decode_seconds": round(out["decode_seconds"], 3),
            "total_seconds": round(time.perf_counter() - started, 3),
            "composites_per_second": round(
                out["composites_computed"] / max(challenge_seconds, 1e-9), 2
            ),
        },
        memory=merge_memory([m for _, m in shares]),
    )
    doc = make_document(
        "challenge", body, challenge_report_section(body, spec, out.get("asr")), head=RESULT_KEYS
    )
    if output_dir is not None and procs.is_main:
        extra = write_challenge_files(out, bg_labels, bg_ids)
        write_run(doc, output_dir, "challenge", extra, outputs=CHALLENGE_OUTPUTS)
    return doc


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
        # composites the verdicts took (cached foregrounds count what they took when computed)
        "composites_evaluated": int(out["composites"]),
        # the least any order can take: every background for a robust foreground, one
        # composite for a vulnerable one (full matrix: every pair)
        "composites_minimal": n_fg * n_bg
        if full_matrix
        else int((~vulnerable).sum()) * n_bg + int(vulnerable.sum()),
        "composites_total": n_fg * n_bg,
        "composites_computed": int(out["composites_computed"]),  # by this run
        "clean_forwards": int(out["clean_forwards"]),  # clean foregrounds scored by this run
        "computed_rows": int(out["rows_computed"]),  # (foreground, background chunk) verdicts
        "reused_rows": int(out["rows_reused"]),  # ... taken from the cache
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
