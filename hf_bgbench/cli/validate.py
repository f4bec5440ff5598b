"""``bgbench validate DIR_OR_ID``: is this benchmark dataset (IN-9, RIVAL10, ImageNet-E)
complete and consistent?"""

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
        help="check a dataset folder or Hub id (configs, splits, ids, masks, labels, ...)",
        description="Check a dataset against its benchmark: every variant config (and, for "
        "RIVAL10, both splits) present and non-empty, split sizes as the card declares, "
        "labels in range, unique ids identical across variants, masks binary and of the "
        "image's size; IN-9: balanced classes, 224x224 images, mixed backgrounds by their "
        "rule; RIVAL10: the 18 attribute names, attribute masks only for present attributes, "
        "merged masks, wnids matching labels; ImageNet-E: 'original' present (absent edits "
        "noted), ids shared across edits, object_pixel_rate in [0, 1] and equal to the mask's "
        "foreground share, edit_params JSON. Exit code 1 if anything is wrong.",
    )
    p.add_argument("target", help="local Hub-layout folder or Hub dataset id (owner/name)")
    p.add_argument(
        "--benchmark",
        default=None,
        help="benchmark name (default: from build_report.json or the card's tags, else "
        "inferred from the label names)",
    )
    p.set_defaults(func=run)
