"""``bgbench validate DIR_OR_ID``: is this benchmark dataset complete and consistent, as the
registered benchmark it holds?"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def validate(target: str | Path, benchmark: str | None = None) -> Any:
    """:func:`hf_bgbench.builders.validate.validate_dataset` against the registered
    benchmarks (``benchmark``: the name of the one to check against; default: the one the
    folder names, else the one its labels match). Returns its ``ValidationResult``."""
    from hf_bgbench.benchmarks import all_specs
    from hf_bgbench.builders.validate import validate_dataset

    return validate_dataset(target, all_specs(), benchmark=benchmark)


def run(args: argparse.Namespace) -> int:
    result = validate(args.target, benchmark=args.benchmark)
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


def description() -> str:
    """What ``bgbench validate`` checks: the generic checks, then each built benchmark's own
    (its layout's ``checks``), named as prose names it."""
    from hf_bgbench.benchmarks import all_specs

    built = [s for s in all_specs() if s.layout is not None]
    own, seen = [], set()
    for spec in built:
        if id(spec.layout) not in seen and spec.layout.checks:
            seen.add(id(spec.layout))
            own.append(f"{spec.short_name}: {spec.layout.checks}")
    both = ", ".join(s.short_name for s in built if len(s.layout.splits) > 1)
    splits = f" (and, for {both}, both splits)" if both else ""
    return (
        f"Check a dataset against its benchmark: every variant config{splits} present and "
        "non-empty, split sizes as the card declares, labels in range, unique ids identical "
        "across variants, masks binary and of the image's size; "
        + "; ".join(own)
        + ". Exit code 1 if anything is wrong."
    )


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "validate",
        help="check a dataset folder or Hub id (configs, splits, ids, masks, labels, ...)",
        description=description(),
    )
    p.add_argument("target", help="local Hub-layout folder or Hub dataset id (owner/name)")
    p.add_argument(
        "--benchmark",
        default=None,
        help="benchmark name (default: from build_report.json or the card's tags, else "
        "inferred from the label names)",
    )
    p.set_defaults(func=run)
