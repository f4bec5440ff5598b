"""``bgbench table RUN [RUN ...]``: many models' headline numbers in one table per benchmark
(:mod:`hf_bgbench.report.table`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from hf_bgbench.files import check_folder
from hf_bgbench.tasks.options import folder_path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "table",
        help="one table of many models' headline numbers, for a paper",
        description=(
            "Put the headline numbers of many models' runs into one table per benchmark: "
            "value and 95% interval per model, runs of one model in one row. A RUN is a "
            "results folder of one task or a `bgbench report` folder. Models in a column must "
            "have been scored on the same data by the same protocol (the recorded data "
            "fingerprint and protocol); protocol deviations and zero-shot heads become "
            "footnotes. Writes table.md, table.tex (booktabs), table.csv, table.json and a "
            "figure per benchmark (table_<benchmark>.png)."
        ),
    )
    where = "folder, or hf://datasets/OWNER/NAME/runs/... of `bgbench publish-results`"
    p.add_argument("runs", nargs="+", metavar="RUN", help=f"results or report {where}")
    p.add_argument(
        "--output", type=folder_path, default=Path("bgbench_table"), help="output folder"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from hf_bgbench.report.table import model_table, table_markdown, write_table

    check_folder(args.output, "--output")  # before the runs are read, not after
    doc = model_table(args.runs)
    names = write_table(doc, args.output)  # first: a reader who stops early still has them
    print(table_markdown(doc))
    print(f"wrote {args.output / names[0]}, {', '.join(names[1:])}")
    return 0
