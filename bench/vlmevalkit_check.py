"""VLMEvalKit itself loads ``bgbench export vlmevalkit``'s TSV and scores it per variant.

    python bench/vlmevalkit_check.py --vlmeval-src DIR [--python PY] [--work DIR]

VLMEvalKit is not on PyPI: ``--vlmeval-src`` is a checkout of open-compass/VLMEvalKit and
``--python`` an interpreter with its requirements (default: this one). On the tests'
synthetic IN-9 (Hub layout), for the plain and the circular (3 rotations) export:

1. VLMEvalKit's ``build_dataset(<name>)`` loads the TSV from ``$LMUData`` as its
   ``CustomMCQDataset``, with every row and the eight variants as categories;
2. its ``md5`` of the file equals the ``.md5`` bgbench wrote;
3. every image VLMEvalKit writes for the model (``dump_image``) has the pixels bgbench scores;
4. its ``evaluate`` (exact matching) on answers written here -- each image answered right or
   wrong by a seeded draw, some circular images right in only some rotations -- gives per
   variant the accuracy counted here independently, so BG-GAP = acc(mixed_same) -
   acc(mixed_rand) read from its output is bgbench's.

Prints one line per export and exits 1 on any difference."""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SEED = 0
ROTATIONS = 3

IN_VLMEVALKIT = r"""
import json, sys
import numpy as np
from PIL import Image
from vlmeval.dataset import build_dataset
from vlmeval.smp import md5
name, tsv, eval_file = sys.argv[1:4]
ds = build_dataset(name)
out = {"class": type(ds).__name__, "rows": len(ds.data), "md5": md5(tsv)}
out["categories"] = sorted(set(ds.data["category"]))
pixels = {}
for i in range(len(ds.data)):
    line = ds.data.iloc[i]
    if int(line["index"]) < 1_000_000:  # a rotation shares its image with row i
        path = ds.dump_image(line)[0]
        pixels[str(line["bgbench_id"]) + "/" + line["category"]] = np.asarray(
            Image.open(path).convert("RGB"), dtype=np.int64).sum().item()
out["pixel_sums"] = pixels
acc = ds.evaluate(eval_file, model="exact_matching", nproc=1)
out["accuracy"] = {k: float(v[0]) for k, v in acc.items() if k != "split"}
print("RESULT " + json.dumps(out))
"""


def answers(tsv: Path, circular: bool) -> tuple[Path, dict[str, float]]:
    """A predictions file in VLMEvalKit's layout and the per-variant accuracy it must give."""
    import pandas as pd

    rng = random.Random(SEED)
    data = pd.read_csv(tsv, sep="\t", dtype=str, keep_default_na=False)
    letters = [c for c in "ABCDEFGHI" if c in data.columns]
    verdict, right = {}, {}
    predictions = []
    for _, row in data.iterrows():
        image = int(row["index"]) % 1_000_000
        if image not in verdict:
            verdict[image] = rng.random() < 0.5  # this image is answered right ...
        ok = verdict[image] and not (circular and rng.random() < 0.2)  # ... in every rotation?
        right.setdefault((row["category"], image), []).append(ok)
        wrong = next(x for x in letters if x != row["answer"])
        predictions.append(row["answer"] if ok else wrong)
    data["prediction"] = predictions
    data = data.drop(columns=["image"])
    out = tsv.with_name(f"model_{tsv.stem}.tsv")  # VLMEvalKit's load() reads a TSV
    data.to_csv(out, sep="\t", index=False)
    per: dict[str, list[bool]] = {}
    for (variant, _), oks in right.items():
        per.setdefault(variant, []).append(all(oks))
    return out, {v: sum(x) / len(x) for v, x in per.items()}


def bgbench_pixel_sums(data: Path) -> dict[str, int]:
    import numpy as np

    from hf_bgbench.benchmarks import get_benchmark
    from hf_bgbench.data.sources import resolve_source

    spec = get_benchmark("in9")
    reader = resolve_source(str(data), spec)
    sums = {}
    for variant in spec.variants:
        for row in reader.load(variant):
            pixels = np.asarray(row["image"].convert("RGB"), dtype=np.int64)
            sums[f"{row['id']}/{variant}"] = int(pixels.sum())
    return sums


def check(python: str, src: Path, work: Path, data: Path, circular: int) -> list[str]:
    from hf_bgbench.harnesses.vlmevalkit import write_tsv

    lmu = work / f"lmu-{circular}"
    written = write_tsv("in9", str(data), lmu, circular=circular)
    eval_file, expected = answers(written.tsv, circular > 1)
    env = os.environ | {"LMUData": str(lmu), "PYTHONPATH": str(src)}
    env |= {"PRED_FORMAT": "tsv", "EVAL_FORMAT": "tsv"}  # its files as TSV, not xlsx
    argv = [python, "-c", IN_VLMEVALKIT, written.name, str(written.tsv), str(eval_file)]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=work)
    found = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")]
    if done.returncode != 0 or not found:
        return [f"VLMEvalKit failed on {written.name}: {done.stderr[-2000:]}"]
    got = json.loads(found[0].removeprefix("RESULT "))
    problems = []
    if got["class"] != "CustomMCQDataset" or got["rows"] != written.rows:
        problems.append(f"{written.name}: loaded as {got['class']} with {got['rows']} rows")
    if got["md5"] != written.md5:
        problems.append(f"{written.name}: md5 {got['md5']} vs {written.md5}")
    if got["pixel_sums"] != bgbench_pixel_sums(data):
        problems.append(f"{written.name}: the images VLMEvalKit writes differ from bgbench's")
    for variant, value in expected.items():
        if abs(got["accuracy"].get(variant, -1) - value) > 1e-9:
            problems.append(f"{written.name}/{variant}: {got['accuracy'].get(variant)} vs {value}")
    gap = got["accuracy"]["mixed_same"] - got["accuracy"]["mixed_rand"]
    print(
        f"{written.name}: {got['class']}, {got['rows']} rows, md5 {got['md5']} "
        f"({'same' if got['md5'] == written.md5 else 'DIFFERENT'}), images "
        f"{len(got['pixel_sums'])}, BG-GAP from its per-category output {gap:+.4f} "
        f"(expected {expected['mixed_same'] - expected['mixed_rand']:+.4f})"
    )
    return problems


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--vlmeval-src", type=Path, required=True, help="a VLMEvalKit checkout")
    p.add_argument("--python", default=sys.executable, help="a python with its requirements")
    p.add_argument("--work", type=Path, help="a folder for the data and the files written")
    args = p.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="vlmevalkit-check-"))
    os.environ.update({"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"})
    from tests.in9_fixture import write_in9_hub

    data = work / "in9" / "hub"
    if not data.exists():
        write_in9_hub(work / "in9")
    problems = []
    for circular in (1, ROTATIONS):
        problems += check(args.python, args.vlmeval_src, work, data, circular)
    for line in problems:
        print("DIFFERENT:", line)
    print("VLMEvalKit reads the export as bgbench wrote it" if not problems else "differences")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
