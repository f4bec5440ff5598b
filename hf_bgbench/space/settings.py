"""The Space operator's settings, read from environment variables (see spaces/README.md).

``BGBENCH_SPACE_DATASETS`` (the allow-list, :func:`allowed`), ``BGBENCH_LEADERBOARD_DIR``
(:func:`leaderboard_dir`), the time limits, concurrency and queue (read once, at import),
the model-size limits (:func:`model_limits`) and what each task gets on shared hardware
(:func:`task_options`, from the task's options). The page, the jobs, the views and the checks
all read them; no Gradio here.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections import deque
from pathlib import Path
from typing import Any

from hf_bgbench.benchmarks import get_benchmark, list_benchmarks
from hf_bgbench.cache import cache_root
from hf_bgbench.space.checks.allowlist import (
    DATASETS_ENV,
    AllowedDataset,
    datasets_for,
    parse_allowlist,
)

LEADERBOARD_DIR_ENV = "BGBENCH_LEADERBOARD_DIR"


def int_env(name: str, default: int) -> int:
    """The integer environment variable ``name`` (``default`` if unset or not a number)."""
    try:
        return int(float(os.environ.get(name, default)))
    except ValueError:
        return default


JOB_SECONDS = int_env("BGBENCH_SPACE_JOB_SECONDS", 1200)
EXPLORE_SECONDS = int_env("BGBENCH_SPACE_EXPLORE_SECONDS", 300)
CONCURRENCY = int_env("BGBENCH_SPACE_CONCURRENCY", 1)
EXPLORE_CONCURRENCY = int_env("BGBENCH_SPACE_EXPLORE_CONCURRENCY", 1)
QUEUE_SIZE = int_env("BGBENCH_SPACE_QUEUE", 20)
JOBS_PER_CLIENT = int_env("BGBENCH_SPACE_JOBS_PER_CLIENT", 1)
# proxies of the operator's in front of the app, each appending the address it saw to
# X-Forwarded-For: a client is known by the entry the outermost of them wrote (one on a
# Hugging Face Space, which sets SPACE_ID); 0: by the connection's address, the header unread
TRUSTED_PROXIES = int_env("BGBENCH_SPACE_TRUSTED_PROXIES", 1 if os.environ.get("SPACE_ID") else 0)
# a job whose visitor has not read its updates for this long is stopped (nobody waits for it)
UNREAD_SECONDS = int_env("BGBENCH_SPACE_UNREAD_SECONDS", 60)
KEEP_RUNS = int_env("BGBENCH_SPACE_KEEP_RUNS", 20)
# decode worker processes per job (-1, the default: the run chooses, as on the command line,
# from how long decoding takes beside the forward); a host with cores to spare may fix it
WORKERS = int_env("BGBENCH_SPACE_WORKERS", -1)
# the Space takes no uploads: every file upload is refused (gradio's max_file_size)
MAX_UPLOAD_BYTES = 0


def job_seconds(task: str) -> int:
    """The time limit of a ``task`` job: ``BGBENCH_SPACE_JOB_SECONDS_<TASK>`` (a task that
    needs more, or less, than the rest), else ``BGBENCH_SPACE_JOB_SECONDS``."""
    return int_env(f"BGBENCH_SPACE_JOB_SECONDS_{task.upper()}", JOB_SECONDS)


def subset_cap(name: str, default: int) -> int | None:
    """A subset cap: None (all) when the variable is 0 or negative."""
    value = int_env(name, default)
    return value if value > 0 else None


def allowed() -> dict[str, AllowedDataset]:
    """The operator's allow-list (read at each call, so it follows the environment)."""
    return parse_allowlist(
        os.environ.get(DATASETS_ENV), {b: get_benchmark(b).hub_repo for b in list_benchmarks()}
    )


def offered_benchmarks() -> list[str]:
    """The benchmarks the page offers: those with an allow-listed dataset (every registered
    one when none has: the page then says there is no data, instead of showing nothing)."""
    names = list_benchmarks()
    listed = allowed()
    return [b for b in names if datasets_for(listed, b)] or names


def start_benchmark() -> str:
    """The benchmark the page shows first: the default one when offered, else the first."""
    offered = offered_benchmarks()
    from hf_bgbench.tasks.options import default_benchmark

    preferred = default_benchmark()
    return preferred if preferred in offered else offered[0]


def leaderboard_dir() -> Path:
    """The folder of the leaderboard's ``rows.jsonl``."""
    return Path(os.environ.get(LEADERBOARD_DIR_ENV) or cache_root() / "space_leaderboard")


_RUNS_ROOT: Path | None = None
_RUNS: deque[Path] = deque()


def run_output_dir(keep: int = KEEP_RUNS) -> Path:
    """A fresh folder for one run's outputs. Gradio copies the files a handler returns into
    its own cache, so only the newest ``keep`` folders (at least one per concurrent job) are
    kept: a Space that runs for weeks would otherwise fill its disk. All live in one folder
    per app process, removed when the process exits."""
    global _RUNS_ROOT
    if _RUNS_ROOT is None or not _RUNS_ROOT.is_dir():
        _RUNS_ROOT = Path(tempfile.mkdtemp(prefix="bgbench-space-"))
        atexit.register(shutil.rmtree, _RUNS_ROOT, True)
    out = Path(tempfile.mkdtemp(prefix="run-", dir=_RUNS_ROOT))
    _RUNS.append(out)
    while len(_RUNS) > max(keep, CONCURRENCY + 1, 1):
        shutil.rmtree(_RUNS.popleft(), ignore_errors=True)
    return out


def model_limits() -> tuple[int, int]:
    """(most parameters, most bytes of weights) a visitor's model may have."""
    max_gb = float(os.environ.get("BGBENCH_SPACE_MAX_GB", 2) or 2)
    return int_env("BGBENCH_SPACE_MAX_PARAMS", 400_000_000), int(max_gb * 2**30)


def takes_variants(task: str) -> bool:
    """Whether ``task`` scores the variants a visitor picks (its options have ``variants``)."""
    from hf_bgbench.tasks import get_task
    from hf_bgbench.tasks.options import described

    return any(name == "variants" for name, _, _ in described(get_task(task).options))


def task_options(
    task: str, variants: list[str], restrict: bool, shared_caps: bool = True
) -> dict[str, Any]:
    """What the Space passes to a task besides model, benchmark, data and output, from the
    task's options: never a checkpoint or remote code, nor a label map (the Score tab adds
    the visitor's pick, one of the named maps); the variants picked, when
    the task takes variants; each option the task caps on shared hardware
    (``Option.space_cap``: a seeded subset, recorded) at the operator's cap -- a cap that
    is a job's total (``Option.space_cap_shared``) split equally over the variants picked
    (left out with ``shared_caps`` False: a report card sets one value per task for every
    benchmark, and keeps within a limit of its own).

    Never ``zero_shot_classes`` or ``templates`` either (deliberately not offered: a
    ``templates`` FILE would be a path on the server): a zero-shot model (CLIP, SigLIP,
    open_clip) is scored with the library's defaults -- ImageNet's 1000 class names, OpenAI's
    80 templates, the published protocols -- which every result records."""
    from hf_bgbench.tasks import get_task
    from hf_bgbench.tasks.options import described

    # progress bars on: their counts are what the page shows while the job runs
    options: dict[str, Any] = {"restrict_to_benchmark": bool(restrict), "progress": True}
    if WORKERS >= 0:
        options["num_workers"] = WORKERS
    for name, option, _ in described(get_task(task).options):
        if name == "variants":
            options["variants"] = list(variants)
        elif option.space_cap is not None:
            if option.space_cap_shared and not shared_caps:
                continue
            cap = subset_cap(*option.space_cap)
            if cap is not None and option.space_cap_shared and variants:
                cap = max(1, cap // len(variants))
            options[name] = cap
    return options


def task_label(task: str, benchmark: str) -> str:
    """How the Space names ``task`` for ``benchmark``: the task's description, its example
    of a benchmark metric ("(e.g. BG-GAP)") replaced by the benchmark's own headline
    metrics, so ImageNet-E's evaluate names mean DA, not IN-9's BG-GAP."""
    import re

    from hf_bgbench.tasks import get_task

    description = get_task(task).description
    spec = get_benchmark(benchmark)
    named = [m.short for m in spec.metrics if getattr(m, "short", "")]
    example = re.compile(r"\s*\(e\.g\.[^)]*\)")
    if not example.search(description):
        return description
    return example.sub(f" ({', '.join(named)})" if named else "", description)
