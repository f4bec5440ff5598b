"""What the sub-commands share: the task sub-commands' parsers, generated from each task's
options class (:mod:`hf_bgbench.tasks.options`), and small helpers of the others."""

from __future__ import annotations

import argparse
import logging
from collections.abc import Callable
from typing import Any

MODEL_HELP = (
    "timm name (resnet50.a1_in1k), hf-hub:timm/..., transformers Hub id, a CLIP-family model "
    "scored zero-shot (openai/clip-vit-base-patch32, an open_clip Hub repo or ARCH/tag), local "
    "folder, local-dir:..., or the bundled tf_efficientnet_lite0/1/2"
)
DEFAULT_MODEL = "tf_efficientnet_lite0"


def human_size(n: float) -> str:
    """``n`` bytes as B / KB / MB / GB (what the publish commands list)."""
    for unit in ("B", "KB", "MB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


def add_task_parser(
    sub: argparse._SubParsersAction, task: Any, help: str, run: Callable[..., int]
) -> argparse.ArgumentParser:
    """The sub-command of ``task``: its description (the options class's docstring), MODEL
    and one argument per option of the task (:func:`add_task_options`)."""
    from hf_bgbench.tasks.options import paragraph

    p = sub.add_parser(task.name, help=help, description=paragraph(task.options, 0))
    add_task_options(p, task)
    p.set_defaults(func=run)
    return p


def add_task_options(p: argparse.ArgumentParser, task: Any) -> None:
    """MODEL and an argument per command-line option of ``task.options``, in its order, by
    the one generator the benchmark commands use too
    (:func:`hf_bgbench.builders.arguments.add_options`); :func:`task_options` reads them
    back."""
    from hf_bgbench.builders.arguments import add_options
    from hf_bgbench.tasks.options import described

    p.add_argument("model", nargs="?", default=DEFAULT_MODEL, help=MODEL_HELP)
    add_options(p, described(task.options), task)


def task_options(args: argparse.Namespace) -> dict[str, Any]:
    """The task's keyword arguments from the arguments :func:`add_task_options` added."""
    from hf_bgbench.builders.arguments import read_options

    return read_options(args)


def run_task_command(args: argparse.Namespace, task: Any) -> dict[str, Any] | None:
    """Run ``task`` as the command line asks; the results document on the main process
    (which wrote the outputs), None on the others of an ``accelerate launch`` run."""
    from hf_bgbench.benchmarks import get_benchmark
    from hf_bgbench.data.sources import check_data_argument
    from hf_bgbench.models.errors import malformed_model_id
    from hf_bgbench.tasks.options import default_benchmark

    # a --data or a model id that can be nothing: refused before the model stack loads
    options = task_options(args)
    spec = get_benchmark(options.get("benchmark") or default_benchmark())
    check_data_argument(options.get("data"), spec)
    malformed = malformed_model_id(args.model)
    if malformed is not None:
        raise malformed

    from hf_bgbench.inference.distributed import processes
    from hf_bgbench.tasks.runner import execute

    main_process = processes(args.device).is_main  # under `accelerate launch`: one of several
    level = logging.WARNING if main_process else logging.ERROR  # warnings once, not per process
    logging.basicConfig(level=level, format="%(levelname)s: %(message)s")
    results = execute(task, args.model, **options)
    return results if main_process else None
