"""The ``evaluate`` task: per-variant accuracy of one model, plus the benchmark's metrics.

Hooks over the runner (:mod:`hf_bgbench.tasks.runner`): prepare = the variants asked for
(checked against the data; aligned variants must hold the same ids) and their input
transform; compute = each variant through the cached, resumable engine (a share per process
under ``accelerate launch``, gathered in order, so the numbers are those of one process);
summarise = per-variant accuracy with Wilson intervals and every metric the spec declares
(:mod:`hf_bgbench.tasks.evaluate.summary`), and the report section
(:mod:`hf_bgbench.tasks.evaluate.report`).

Data that holds repeated seeded builds (:meth:`Reader.runs`, e.g. ``bgbench build imagenet-e
--runs N``) is scored run by run; the results then add ``runs`` (each run's numbers, their
mean and spread) and the top-level numbers are those of the runs pooled.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hf_bgbench.tasks.evaluate.options import EvaluateOptions
from hf_bgbench.tasks.evaluate.settings import EvaluateProtocolSettings
from hf_bgbench.tasks.options import (
    entry_signature,
)
from hf_bgbench.tasks.task import Task, folder_hooks

ACCELERATOR_BATCH_SIZE = 32  # on a GPU when none is given (a CPU: devices.CPU_BATCH_SIZE)


EVALUATE_OUTPUTS = (
    "results.json",
    "results.md",
    "results_model_index.yaml",
    "accuracy.png",
    "predictions/",
)


TASK = Task(
    name="evaluate",
    description="accuracy on every variant and the benchmark's metrics (e.g. BG-GAP)",
    options=EvaluateOptions,
    **folder_hooks(__name__, paired=True),
    stem="results",
    outputs=EVALUATE_OUTPUTS,
    gpu_batch_size=ACCELERATOR_BATCH_SIZE,
    settings=EvaluateProtocolSettings,
    command_help="score a model on a benchmark's variants",
)


def evaluate_model(
    model: Any = "tf_efficientnet_lite0",
    benchmark: str | None = None,
    data: str | Path | None = None,
    variants: Sequence[str] | None = None,
    **options: Any,
) -> dict[str, Any]:
    """Score ``model`` (a model id or a loaded classifier) on the variants of ``benchmark``
    (default: the first registered) with the :class:`EvaluateOptions` ``options``.

    ``batch_size`` defaults to 8 on a CPU and 32 on a GPU
    (:func:`hf_bgbench.models.devices.default_batch_size`). Returns the results document
    (also written to ``output_dir`` when given): per-variant accuracy, n and per-class
    accuracy, and every metric of the benchmark's spec. Under ``accelerate launch`` each
    process scores a contiguous share of every variant; only the main process writes
    ``output_dir`` and shows progress.
    """

    from hf_bgbench.tasks.runner import execute  # the model and data stack: at first run

    return execute(TASK, model, benchmark=benchmark, data=data, variants=variants, **options)


evaluate_model.__signature__ = entry_signature(
    EvaluateOptions, model="tf_efficientnet_lite0", benchmark=None, data=None, variants=None
)
