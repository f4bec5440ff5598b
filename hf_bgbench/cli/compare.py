"""``bgbench compare A B``: model A against model B on the same images, score by score, with
paired bootstrap intervals (:mod:`hf_bgbench.report.compare`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from hf_bgbench.builders.arguments import non_negative_int
from hf_bgbench.files import check_folder
from hf_bgbench.tasks.options import folder_path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "compare",
        help="compare two models' runs on the same data, with paired intervals",
        description=(
            "Compare two results folders of one task (evaluate, challenge, noise, saliency), "
            "or two `bgbench report` folders, run on the same data (checked by the recorded "
            "data fingerprint) with the same protocol. Per score: A, B and A − B over the "
            "images both scored, with a paired bootstrap 95% interval and a verdict in words. "
            "Writes compare.json, compare.md and compare.png."
        ),
    )
    where = "folder, or hf://datasets/OWNER/NAME/runs/... of `bgbench publish-results`"
    p.add_argument("a", help=f"results or report {where}, of model A")
    p.add_argument("b", help=f"results or report {where}, of model B")
    p.add_argument(
        "--seed", type=non_negative_int, default=0, help="seed of the bootstrap (recorded)"
    )
    p.add_argument(
        "--output", type=folder_path, default=Path("bgbench_compare"), help="output folder"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from hf_bgbench.report.compare import compare_runs, write_compare

    check_folder(args.output, "--output")  # before the runs are read, not after
    doc = compare_runs(args.a, args.b, seed=args.seed)
    print(f"A = {doc['a']['model']}   B = {doc['b']['model']}")
    for note in doc["notes"]:
        print(note)
    for row in doc["rows"]:
        print(f"  {row['benchmark']} · {row['task']}: {row['verdict']}")
    write_compare(doc, args.output)
    print(f"\nwrote {args.output / 'compare.md'}, compare.json, compare.png")
    return 0
