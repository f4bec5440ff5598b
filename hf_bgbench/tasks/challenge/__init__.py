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
summarise = :mod:`hf_bgbench.tasks.challenge.summary` (the numbers) and
:mod:`hf_bgbench.tasks.challenge.report` (the report section). Results add to the common
header what the verdicts cost (``composites_*``, ``clean_forwards``, ``computed_rows`` /
``reused_rows``), ``settings``, ``timing`` and ``memory``.
"""

from __future__ import annotations

from hf_bgbench.tasks.challenge.options import ChallengeError, ChallengeOptions
from hf_bgbench.tasks.challenge.settings import ChallengeProtocolSettings
from hf_bgbench.tasks.entry import entry_point
from hf_bgbench.tasks.options import (
    REQUIRED,
)
from hf_bgbench.tasks.task import Hook, Task, folder_hooks

__all__ = ["CHALLENGE_OUTPUTS", "TASK", "ChallengeError", "ChallengeOptions", "run_challenge"]

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


TASK = Task(
    name="challenge",
    description="Backgrounds Challenge: every foreground on every background (worst case)",
    options=ChallengeOptions,
    **folder_hooks(__name__, paired=True),
    outputs=CHALLENGE_OUTPUTS,
    gpu_batch_size=ACCELERATOR_BATCH_SIZE,
    settings=ChallengeProtocolSettings,
    batch_note=". Small batches also run faster per image on a CPU, and early stop keeps one "
    "composite per undecided foreground in a batch while the background order learns after "
    "each batch: fewer composites at small batches",
    command_help="Backgrounds Challenge: paste every foreground on every background",
    sample_option="max_foregrounds",
    sample_deviation=Hook("hf_bgbench.tasks.challenge.hooks:sampled_deviation"),
)


run_challenge = entry_point(
    TASK,
    "run_challenge",
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
    """,
    model=REQUIRED,
    data=None,
)
