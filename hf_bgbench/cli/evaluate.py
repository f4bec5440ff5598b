"""``bgbench evaluate MODEL --benchmark in9 --data ID_OR_PATH``."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from hf_bgbench.cli._common import (
    add_model_arguments,
    add_variants_argument,
    model_options,
    variant_list,
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "evaluate",
        help="score a model on a benchmark's variants",
        description=(
            "Score a timm / transformers / bundled model on every variant of a benchmark and "
            "report per-variant accuracy with intervals and the benchmark's metrics (IN-9: "
            "BG-GAP, the other gaps, the prediction categories). Writes results.json, "
            "results.md, results_model_index.yaml, accuracy.png and per-image predictions to "
            "--output. Several processes (one per GPU): `accelerate launch --multi_gpu "
            "--num_processes N -m hf_bgbench evaluate ...`; same results as one process."
        ),
    )
    p.add_argument(
        "--data",
        default=None,
        help="Hub dataset id, local Hub-layout folder, official release folder, or photo folder "
        "(default: the benchmark's Hub repo, e.g. bgbench/in9, else a `bgbench download`)",
    )
    add_variants_argument(p)
    p.add_argument("--output", type=Path, default=Path("bgbench_results"), help="output folder")
    p.add_argument(
        "--allow-mismatched-ids",
        action="store_true",
        help="when variants that should hold the same images do not, score only the images "
        "they share (recorded in results.json) instead of stopping with an error",
    )
    p.add_argument("--cache-dir", type=Path, default=None, help="prediction cache folder")
    p.add_argument("--no-cache", action="store_true", help="recompute every prediction")
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap intervals (recorded)")
    from hf_bgbench.tasks.evaluate import ACCELERATOR_BATCH_SIZE

    add_model_arguments(p, gpu_batch_size=ACCELERATOR_BATCH_SIZE)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from hf_bgbench.inference.distributed import processes
    from hf_bgbench.render import render_table
    from hf_bgbench.tasks.evaluate import evaluate_model

    main_process = processes(args.device).is_main  # under `accelerate launch`: one of several
    level = logging.WARNING if main_process else logging.ERROR  # warnings once, not per process
    logging.basicConfig(level=level, format="%(levelname)s: %(message)s")
    results = evaluate_model(
        args.model,
        benchmark=args.benchmark,
        data=args.data,
        variants=variant_list(args.variants),
        output_dir=args.output,
        **model_options(args),
        allow_mismatched_ids=args.allow_mismatched_ids,
        cache_dir=args.cache_dir,
        use_cache=not args.no_cache,
        seed=args.seed,
    )
    if main_process:  # the main process wrote the outputs
        print(render_table(results))
        print(
            f"\nwrote {args.output / 'results.json'}, results.md, results_model_index.yaml, "
            "accuracy.png, predictions/"
        )
    return 0
