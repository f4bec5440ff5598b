"""The two linear-head recipes side by side on one model and one benchmark dataset.

    python bench/probe_heads.py DATA --model resnet18.a1_in1k [--benchmark rival10]

DATA: a dataset folder with a train split in the benchmark's layout (the authors' release
``RIVAL10/``, a Hub-layout folder, ...; whatever ``--data`` takes). For each recipe --
``linear-probe-v1`` (L-BFGS logistic regression on standardised features, the model's
normalisation) and ``adam-augmented-v1`` (Moayeri et al. 2022's finetuner.py: Adam on
augmented photos, [0, 1] pixels, epoch chosen on held-out train images) -- it fits a head
from scratch (a fresh cache folder, so nothing is reused) and prints the held-out accuracy
and the fit time: the whole call (decoding, backbone passes, fitting), wall clock, plus the
record's own fit_seconds. Both recipes hold out the same seeded 10% of the train split, so
their held-out accuracies compare like for like.
"""

from __future__ import annotations

import argparse
import tempfile
import time

from hf_bgbench.benchmarks import get_benchmark
from hf_bgbench.data.sources import resolve_source
from hf_bgbench.inference.allocator import keep_freed_memory
from hf_bgbench.models import load_classifier
from hf_bgbench.probe.features import RECIPES, probe_note, probed_classifier


def fit_one(args: argparse.Namespace, recipe: str) -> dict:
    """Fit ``recipe``'s head in a fresh cache folder; its record plus the wall time."""
    spec = get_benchmark(args.benchmark)
    reader = resolve_source(args.data, spec)
    classifier = load_classifier(args.model, device=args.device)
    options = {} if args.normalise is None else {"normalise": args.normalise == "yes"}
    with tempfile.TemporaryDirectory() as cache:
        start = time.perf_counter()
        clf = probed_classifier(
            classifier,
            spec,
            reader,
            recipe=recipe,
            device=args.device,
            seed=args.seed,
            batch_size=args.batch_size,
            num_workers=args.workers,
            progress=not args.quiet,
            cache_dir=cache,
            **options,
        )
        wall = time.perf_counter() - start
    return {**clf.probe_record, "wall_seconds": wall}


def main() -> None:
    keep_freed_memory()  # as every bgbench command does: the raw forward must not page-fault
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("data", help="dataset folder with a train split (the benchmark's layout)")
    ap.add_argument("--model", required=True, help="timm (or transformers) model id")
    ap.add_argument("--benchmark", default="rival10", help="whose train split DATA holds")
    ap.add_argument("--recipes", nargs="+", default=list(RECIPES), choices=list(RECIPES))
    ap.add_argument(
        "--normalise",
        choices=("yes", "no"),
        default=None,
        help="the model's normalisation for both recipes (default: each recipe's own)",
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default=None)
    ap.add_argument("--batch-size", type=int, default=None, help="decode batch size (speed only)")
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--quiet", action="store_true", help="no progress bars")
    args = ap.parse_args()
    rows = []
    for recipe in args.recipes:
        rec = fit_one(args, recipe)
        rows.append(rec)
        print(probe_note(rec))
    print()
    print(
        f"{'recipe':<20} {'normalise':<9} {'held-out acc':>12} {'n':>6} {'wall s':>9} {'fit s':>9}"
    )
    for rec in rows:
        print(
            f"{rec['recipe']['name']:<20} {str(rec['normalise']):<9} "
            f"{100 * rec['heldout_accuracy']:>11.2f}% {rec['heldout_n']:>6} "
            f"{rec['wall_seconds']:>9.1f} {rec['fit_seconds']:>9.1f}"
        )
        if "heldout_accuracy_by_epoch" in rec:
            by_epoch = ", ".join(f"{100 * a:.1f}" for a in rec["heldout_accuracy_by_epoch"])
            print(
                f"  held-out accuracy by epoch (%): {by_epoch}; kept epoch {rec['selected_epoch']}"
            )


if __name__ == "__main__":
    main()
