"""``bgbench challenge MODEL --data DIR``: the Backgrounds Challenge (adversarial backgrounds)."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from hf_bgbench.cli._common import add_model_arguments, model_options, positive_int


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "challenge",
        help="Backgrounds Challenge: paste every foreground on every background",
        description=(
            "Paste every test foreground (image + fg_mask) on every only_bg_t background, of "
            "every class, and count the foregrounds no background can flip (challenge "
            "accuracy). Each foreground stops at its first fooling background, the most "
            "fooling backgrounds tried first; --full-matrix scores every composite and adds "
            "per-background attack success rates. Decided foregrounds are cached: rerun the "
            "same command after an interruption to resume. Writes challenge.json, challenge.md, "
            "vulnerable.parquet, challenge.png (and fooling_matrix.npz) to --output. Several "
            "processes (one per GPU), each taking a share of the foregrounds: `accelerate "
            "launch --multi_gpu --num_processes N -m hf_bgbench challenge ...`."
        ),
    )
    p.add_argument(
        "--data",
        default=None,
        help="official release folder (bg_challenge/... with fg_mask), a Hub-layout folder whose "
        "foreground variant has a mask column, or a Hub dataset id (default: the benchmark's "
        "Hub repo, e.g. bgbench/in9, else a `bgbench download`)",
    )
    p.add_argument(
        "--max-foregrounds", type=positive_int, default=None, help="seeded random subset"
    )
    p.add_argument(
        "--max-backgrounds", type=positive_int, default=None, help="seeded random subset"
    )
    p.add_argument(
        "--full-matrix",
        action="store_true",
        help="score every composite (no early stop) for attack success rates per background",
    )
    p.add_argument(
        "--max-device-backgrounds",
        type=positive_int,
        default=None,
        help="backgrounds held on the device at once; more are streamed in chunks of this "
        "size, same results (default: all that fit in half the free device memory)",
    )
    p.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        help="where decided foregrounds are cached, so an interrupted run resumes (default: "
        "<cache root>/challenge)",
    )
    p.add_argument("--no-cache", action="store_true", help="recompute every foreground")
    p.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of the subsets and of the schedule's tie-breaks (recorded)",
    )
    p.add_argument("--output", type=Path, default=Path("bgbench_challenge"), help="output folder")
    from hf_bgbench.tasks.challenge import ACCELERATOR_BATCH_SIZE

    add_model_arguments(
        p,
        gpu_batch_size=ACCELERATOR_BATCH_SIZE,
        batch_note=". Small batches also run faster per image on a CPU, and early stop keeps "
        "one composite per undecided foreground in a batch while the background order learns "
        "after each batch: fewer composites at small batches",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from hf_bgbench.inference.distributed import processes
    from hf_bgbench.render import render_table
    from hf_bgbench.tasks.challenge import run_challenge

    main_process = processes(args.device).is_main  # under `accelerate launch`: one of several
    level = logging.WARNING if main_process else logging.ERROR  # warnings once, not per process
    logging.basicConfig(level=level, format="%(levelname)s: %(message)s")
    results = run_challenge(
        args.model,
        args.data,
        benchmark=args.benchmark,
        max_foregrounds=args.max_foregrounds,
        max_backgrounds=args.max_backgrounds,
        full_matrix=args.full_matrix,
        **model_options(args),
        seed=args.seed,
        cache_dir=args.cache_dir,
        use_cache=not args.no_cache,
        max_device_backgrounds=args.max_device_backgrounds,
        output_dir=args.output,
    )
    if main_process:  # the main process wrote the outputs
        print(render_table(results))
        extra = ", fooling_matrix.npz" if args.full_matrix else ""
        print(
            f"\nwrote {args.output / 'challenge.json'}, challenge.md, "
            f"challenge_model_index.yaml, vulnerable.parquet{extra}, challenge.png"
        )
    return 0
