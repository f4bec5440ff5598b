"""How far the published protocols move the numbers: the same tasks on the same builds, run
with an older checkout of bgbench (its recipes) and with this one (the papers' recipes and,
by name, the old ones), side by side.

    python bench/protocol_shift.py --old /path/to/old/checkout --in9 BUILD --rival10 BUILD \
        [--imagenet-e-from-in9] --output OUT [--model tf_efficientnet_lite0]

Each run is a ``python -m hf_bgbench`` subprocess with ``PYTHONPATH`` set to its checkout,
seeded, on the CPU; results land in OUT/<old|new>/<task>/ and the table of headline numbers
is printed and written to OUT/shift.md. Not a test: it takes minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
COMMON = ["--seed", "0", "--workers", "2", "--quiet", "--device", "cpu"]


# --quick: the subsets of the numbers snapshot (/tmp/numbers/run.sh), so its earlier
# results folders can stand in for the old checkout (--old-results)
QUICK = {
    "noise_in9": ["--max-images", "16", "--trials", "2"],
    "saliency_in9": ["--max-images", "24"],
    "noise_rival10": ["--max-images", "8", "--trials", "2"],
    "saliency_rival10": ["--max-images", "18"],
}


def runs(args: argparse.Namespace) -> list[tuple[str, list[str], str, tuple[str, ...]]]:
    """(name, bgbench argv, json file, keys to compare)."""
    noise = ("a_fg", "a_bg", "rfs", "clean_accuracy")
    saliency = ("delta_density", "saliency_fraction_inside", "saliency_iou")
    out: list[tuple[str, list[str], str, tuple[str, ...]]] = []
    if args.in9:
        out += [
            ("noise_in9", ["noise", "--data", args.in9], "noise.json", noise),
            ("saliency_in9", ["saliency", "--data", args.in9], "saliency.json", saliency),
        ]
    if args.rival10:
        r10 = ["--benchmark", "rival10", "--data", args.rival10]
        out += [
            ("evaluate_rival10", ["evaluate", *r10, "--no-cache"], "results.json", ("accuracy",)),
            ("noise_rival10", ["noise", *r10], "noise.json", noise),
            ("saliency_rival10", ["saliency", *r10], "saliency.json", saliency),
        ]
    if args.quick:
        out = [(n, [*argv, *QUICK.get(n, [])], f, k) for n, argv, f, k in out]
    return out


def run(repo: Path, argv: list[str], model: str, output: Path) -> dict | None:
    env = {**os.environ, "PYTHONPATH": str(repo), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    cmd = [sys.executable, "-m", "hf_bgbench", argv[0], model, *argv[1:], *COMMON]
    cmd += ["--output", str(output)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        print(f"FAILED ({repo}): {' '.join(cmd)}\n{done.stderr[-2000:]}", file=sys.stderr)
        return None
    return {"cmd": " ".join(cmd)}


def value(doc: dict, key: str) -> float | None:
    if key == "accuracy":
        return doc["variants"]["ordinary"]["accuracy"]
    return doc.get(key)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--old", type=Path, required=True, help="checkout of the older bgbench")
    p.add_argument("--in9", help="an IN-9 build with masks")
    p.add_argument("--rival10", help="a RIVAL10 build (Hub layout) with a train split")
    p.add_argument("--model", default="tf_efficientnet_lite0")
    p.add_argument("--output", type=Path, required=True)
    p.add_argument("--quick", action="store_true", help="the numbers snapshot's subsets")
    p.add_argument(
        "--old-results",
        type=Path,
        help="a folder with <run>/<file> of the old checkout already run (e.g. a numbers "
        "snapshot's tasks/ with --quick): the old runs are read from it, not re-run",
    )
    args = p.parse_args()
    rows = [
        "| run | number | old | new (published protocol) | new, old recipe by name |",
        "|---|---|---|---|---|",
    ]
    for name, argv, file, keys in runs(args):
        docs = {}
        for label, repo, extra in (
            ("old", args.old, []),
            ("new", HERE, []),
            ("new_v1", HERE, ["--protocol", "bgbench-v1"]),
        ):
            folder = args.output / label / name
            if label == "old" and args.old_results is not None:
                folder = args.old_results / name
            if not (folder / file).exists() and run(repo, argv + extra, args.model, folder) is None:
                continue
            docs[label] = json.loads((folder / file).read_text())
        for key in keys:
            cells = [value(docs[k], key) if k in docs else None for k in ("old", "new", "new_v1")]
            text = ["—" if v is None else f"{v:.4f}" for v in cells]
            rows.append(f"| {name} | {key} | {' | '.join(text)} |")
    table = "\n".join(rows)
    print(table)
    args.output.mkdir(parents=True, exist_ok=True)
    (args.output / "shift.md").write_text(table + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
