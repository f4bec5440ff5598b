"""``bgbench validate DIR_OR_ID``: is this IN-9 dataset complete and consistent?"""

from __future__ import annotations

import argparse


def run(args: argparse.Namespace) -> int:
    from hf_bgbench.builders.validate import validate_dataset

    result = validate_dataset(args.target, benchmark=args.benchmark)
    for note in result.notes:
        print(f"note: {note}")
    for problem in result.problems:
        print(f"PROBLEM: {problem}")
    sizes = ", ".join(
        f"{config}/{split} {n}"
        for config, splits in result.rows.items()
        for split, n in splits.items()
    )
    if result.ok:
        print(f"OK: {result.folder} is a valid {result.benchmark} dataset ({sizes})")
        return 0
    print(f"{len(result.problems)} problem(s) in {result.folder}")
    return 1


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "validate",
        help="check a dataset folder or Hub id (configs, ids, balance, masks, labels)",
        description="Check that every variant config is present, ids are identical across "
        "variants, classes are balanced, masks match image sizes and labels are in range. "
        "Exit code 1 if anything is wrong.",
    )
    p.add_argument("target", help="local Hub-layout folder or Hub dataset id (owner/name)")
    p.add_argument(
        "--benchmark", default=None, help="benchmark name (default: inferred from the labels)"
    )
    p.set_defaults(func=run)
