"""The challenge task's hooks over the runner (see :mod:`hf_bgbench.tasks.challenge`),
imported at their first call: the task registry and the command line load no torch."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from hf_bgbench.data.loader import DataError
from hf_bgbench.data.schema import MASK
from hf_bgbench.data.sources import DataSourceError
from hf_bgbench.inference.geometry import first_image_size, input_geometry
from hf_bgbench.tasks.challenge.cache import CacheIdentity, default_challenge_cache_dir
from hf_bgbench.tasks.challenge.memory import background_chunk, peak_memory
from hf_bgbench.tasks.challenge.options import ChallengeError
from hf_bgbench.tasks.challenge.report import build_report
from hf_bgbench.tasks.challenge.run import LoopOptions, decoders, run_pairs
from hf_bgbench.tasks.challenge.schedule import ORDER_DESCRIPTION
from hf_bgbench.tasks.challenge.shards import merge_memory, merge_shards
from hf_bgbench.tasks.challenge.summary import (
    RESULT_KEYS,
    summarize,
    write_challenge_files,
)
from hf_bgbench.tasks.deviations import normalisation_deviations
from hf_bgbench.tasks.runner import Run, Summary

COMPOSITE = "x = bg * (1 - mask) + fg * mask in [0, 1], then normalise"


@dataclass
class _Work:
    fg_ds: Any
    fg_idx: list[int]
    bg_ds: Any
    bg_idx: list[int]
    loop: LoopOptions


def _data_error(err: Exception) -> ChallengeError:
    return ChallengeError(f"The Backgrounds Challenge composites pixel by pixel: {err}")


def prepare(run: Run) -> _Work:
    o, reader = run.options, run.reader
    fg_ds = reader.load(o.foreground_variant, columns=(MASK,))
    bg_ds = reader.load(o.background_variant)
    step = run.start_model()
    fg_idx = run.subset(len(fg_ds), o.max_foregrounds, what="foregrounds")
    bg_idx = run.subset(len(bg_ds), o.max_backgrounds, what="backgrounds", stream=1)
    if step.cuda:
        torch.cuda.reset_peak_memory_stats(step.device)
    if not bg_idx:
        raise ChallengeError(f"{reader.location} [{o.background_variant}]: no background.")
    try:  # the data's size, the background chunk and the cache's identity of the data
        hw = first_image_size(bg_ds.select(bg_idx[:8]))
        step.resize_to, deviations = input_geometry(step, hw, o.resize_to_model_input)
        chunk = background_chunk(len(bg_idx), hw, step.device, o.max_device_backgrounds)
        identity = CacheIdentity(
            run.classifier.fingerprint,
            reader.fingerprint(fg_ds, o.foreground_variant),
            reader.fingerprint(bg_ds, o.background_variant),
            o.foreground_variant,
            o.background_variant,
            run.mapper.protocol,
            "x".join(map(str, step.resize_to)) if step.resize_to else "none",
            "full_matrix" if o.full_matrix else "early_stop",
            tuple(run.numerics()),
        )
    except (DataError, DataSourceError) as err:
        raise _data_error(err) from None
    run.deviations += deviations
    run.deviations += normalisation_deviations(
        run.protocol.settings.authors_normalisation, run.classifier
    )
    cache_root = Path(o.cache_dir) if o.cache_dir else default_challenge_cache_dir()
    loop = LoopOptions(
        full_matrix=o.full_matrix,
        batch_size=run.batch_size,
        chunk_size=chunk,
        seed=o.seed,
        num_classes=run.spec.num_classes,
        progress=run.progress,
        cache_root=cache_root if o.use_cache else None,
        identity=identity,
        pipeline=run.pipeline,
    )
    return _Work(fg_ds, fg_idx, bg_ds, bg_idx, loop)


def compute(run: Run, work: _Work) -> dict[str, Any]:
    o, procs, step = run.options, run.procs, run.step
    mine = procs.shard(work.fg_idx)  # each process: a share of the foregrounds, every background
    try:
        shares = procs.together(
            lambda: (
                run_pairs(work.fg_ds, mine, work.bg_ds, work.bg_idx, step, work.loop),
                peak_memory(step.device),
            )
        )
    except (DataError, DataSourceError) as err:
        raise _data_error(err) from None
    out = merge_shards([share for share, _ in shares])
    out["memory"] = merge_memory([memory for _, memory in shares])
    for what, variant in (("bg_ids", o.background_variant), ("ids", o.foreground_variant)):
        if not out[what]:
            kind = "background" if what == "bg_ids" else "foreground"
            raise ChallengeError(f"{run.reader.location} [{variant}]: no readable {kind}.")
    return out


def summarise(run: Run, work: _Work, out: dict[str, Any]) -> Summary:
    o, loop = run.options, work.loop
    bg_ids, bg_labels = out["bg_ids"], out["bg_labels"]
    numbers = summarize(run.spec, out, bg_labels, bg_ids, full_matrix=o.full_matrix)
    schedule = (
        {"order": "dataset order, batches filled across foregrounds"}
        if o.full_matrix
        else {"order": ORDER_DESCRIPTION, "tiebreak_seed": o.seed}
    )
    body = run.body(
        numbers,
        foreground_variant=o.foreground_variant,
        background_variant=o.background_variant,
        mode="full_matrix" if o.full_matrix else "early_stop",
        seed=o.seed,
        subset={
            "seed": o.seed,
            "max_foregrounds": o.max_foregrounds,
            "max_backgrounds": o.max_backgrounds,
            "foreground_ids": out["ids"] if o.max_foregrounds is not None else None,
            "background_ids": bg_ids if o.max_backgrounds is not None else None,
        },
        skipped={"foregrounds": out["skipped"], "backgrounds": out["bg_skipped"]},
        settings=run.settings(
            composite=COMPOSITE,
            resized_to=run.resized_to(),
            schedule=schedule,
            processes=run.procs.num,
            max_device_backgrounds=o.max_device_backgrounds,
            background_chunk_size=loop.chunk_size,
            decoder=decoders(work.fg_ds, work.bg_ds, run.step.device),
            background_chunks=out["chunks"],
            cache=str(loop.cache_root) if loop.cache_root else None,
        ),
        timing={
            "challenge_seconds": round(run.seconds, 3),
            "background_decode_seconds": round(out["decode_seconds"], 3),
            "total_seconds": round(run.total_seconds(), 3),
            "composites_per_second": round(out["composites_computed"] / max(run.seconds, 1e-9), 2),
        },
        memory=out["memory"],
    )
    report = build_report(body, run.spec, out.get("asr"))
    return Summary(body, report, RESULT_KEYS, lambda: write_challenge_files(out, bg_labels, bg_ids))


def sampled_deviation(results: Mapping[str, Any]) -> str:
    """What a report's ``--challenge-foregrounds N`` run records: an estimate from a sample."""
    return (
        f"challenge accuracy estimated from a seeded sample of {results.get('n_foregrounds')} "
        f"foregrounds (seed {results.get('seed')}; each tried against every background): an "
        "unbiased estimate of the full challenge with a Wilson 95% interval"
    )
