"""The ``challenge`` task: the Backgrounds Challenge (Xiao et al., 2020; SPEC §1).

Every test foreground (image + ``fg_mask``) is pasted on every ``only_bg_t`` image, of every
class including its own: ``x = bg * (1 - mask) + fg * mask`` on the 224x224 tensors in
[0, 1], then the model step. A foreground is *vulnerable* when any composite is classified
as anything but its class; challenge accuracy is the fraction that are not.

Backgrounds are decoded once onto the device (in chunks when they do not fit:
:mod:`hf_bgbench.tasks.challenge.memory`); the schedule
(:mod:`hf_bgbench.tasks.challenge.schedule`) spends as few forward passes as it can: each
foreground is dropped the moment it is decided, backgrounds are tried most harmful first.
Verdicts do not depend on that order, but which fooling background is reported does (the
first found in the schedule; full-matrix mode: the first in dataset order). Decided
foregrounds are cached (:mod:`hf_bgbench.tasks.challenge.cache`), so an interrupted run
resumes (:mod:`hf_bgbench.tasks.challenge.run`). Under ``accelerate launch`` each process
takes a contiguous share of the foregrounds against every background; the shares are
gathered (:mod:`hf_bgbench.tasks.challenge.shards`). ``full_matrix=True`` scores every
composite and adds per-background attack success rates.

Hooks over the runner: prepare = foregrounds and backgrounds (seeded subsets), the input
size, the background chunk and the cache identity; compute = the schedule over every share;
summarise = :mod:`hf_bgbench.tasks.challenge.summary`. Results add to the common header what
the verdicts cost (``composites_*``, ``clean_forwards``, ``computed_rows`` /
``reused_rows``), ``settings``, ``timing`` and ``memory``.
"""

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
from hf_bgbench.tasks.challenge.options import ChallengeError, ChallengeOptions
from hf_bgbench.tasks.challenge.paired import paired_values, per_image_files
from hf_bgbench.tasks.challenge.run import LoopOptions, decoders, run_pairs
from hf_bgbench.tasks.challenge.schedule import ORDER_DESCRIPTION
from hf_bgbench.tasks.challenge.settings import ChallengeProtocolSettings
from hf_bgbench.tasks.challenge.shards import merge_memory, merge_shards
from hf_bgbench.tasks.challenge.summary import (
    RESULT_KEYS,
    challenge_report_section,
    summarize,
    write_challenge_files,
)
from hf_bgbench.tasks.common import normalisation_deviations
from hf_bgbench.tasks.options import (
    REQUIRED,
    entry_signature,
)
from hf_bgbench.tasks.runner import Run, Summary, Task, execute

# The batch on a GPU when none is given (a CPU: devices.CPU_BATCH_SIZE). Early stop keeps one
# composite per undecided foreground in a batch, so the batch size is also how many
# foregrounds choose their next background from the same counts: on a 158-photo IN-9 build,
# passes / minimum 1.066 at 8 against 1.13 at 64 (bench/challenge_throughput.py).
ACCELERATOR_BATCH_SIZE = 64
CHALLENGE_OUTPUTS = (
    "challenge.json",
    "challenge.md",
    "challenge_model_index.yaml",
    "vulnerable.parquet",
    "fooling_matrix.npz",
    "challenge.png",
)
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
        num_workers=run.workers,
        chunk_size=chunk,
        seed=o.seed,
        num_classes=run.spec.num_classes,
        progress=run.progress,
        cache_root=cache_root if o.use_cache else None,
        identity=identity,
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
            amp=run.step.cuda,
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
    report = challenge_report_section(body, run.spec, out.get("asr"))
    return Summary(body, report, RESULT_KEYS, lambda: write_challenge_files(out, bg_labels, bg_ids))


def sampled_deviation(results: Mapping[str, Any]) -> str:
    """What a report's ``--challenge-foregrounds N`` run records: an estimate from a sample."""
    return (
        f"challenge accuracy estimated from a seeded sample of {results.get('n_foregrounds')} "
        f"foregrounds (seed {results.get('seed')}; each tried against every background): an "
        "unbiased estimate of the full challenge with a Wilson 95% interval"
    )


TASK = Task(
    name="challenge",
    description="Backgrounds Challenge: every foreground on every background (worst case)",
    options=ChallengeOptions,
    prepare=prepare,
    compute=compute,
    summarise=summarise,
    stem="challenge",
    outputs=CHALLENGE_OUTPUTS,
    gpu_batch_size=ACCELERATOR_BATCH_SIZE,
    settings=ChallengeProtocolSettings,
    batch_note=". Small batches also run faster per image on a CPU, and early stop keeps one "
    "composite per undecided foreground in a batch while the background order learns after "
    "each batch: fewer composites at small batches",
    command_help="Backgrounds Challenge: paste every foreground on every background",
    per_image=per_image_files,
    paired=paired_values,
    sample_option="max_foregrounds",
    sample_deviation=sampled_deviation,
)


def run_challenge(model: Any, data: str | Path | None = None, **options: Any) -> dict[str, Any]:
    """Run the Backgrounds Challenge for ``model`` (a model id or a loaded classifier) with
    the :class:`ChallengeOptions` ``options``.

    ``max_foregrounds`` / ``max_backgrounds`` pick a seeded random subset (``seed``; the ids
    used are recorded) so a quick run stays reproducible; the published number uses all.
    ``seed`` also breaks ties in the early-stop background order. ``batch_size`` defaults to
    8 on a CPU, 64 on a GPU. Decided foregrounds are cached under ``cache_dir`` (default
    ``<cache root>/challenge``; ``use_cache=False`` computes everything), so an interrupted
    run resumes. ``max_device_backgrounds`` caps the backgrounds held on the device at once
    (default: all that fit in half the free memory). Returns the results document; with
    ``output_dir`` also writes challenge.json, challenge.md, challenge_model_index.yaml,
    vulnerable.parquet, challenge.png and (full matrix) fooling_matrix.npz.
    """
    return execute(TASK, model, data=data, **options)


run_challenge.__signature__ = entry_signature(ChallengeOptions, model=REQUIRED, data=None)
