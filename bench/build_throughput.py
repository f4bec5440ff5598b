"""IN-9 build throughput with 1 and with N worker processes, same photos, one run.

    python bench/build_throughput.py [--source samples|synthetic] [--per-class 6] [--workers 2]

samples   = the real ImageNet photos of ../shared/data/in9_samples with --no-boxes (box
            estimation + GrabCut on real scenes; the realistic cost);
synthetic = generated scenes with VOC boxes (tests/synthetic_scenes.py).
Each build is the whole pipeline (stage 1 segmentation, stage 2 rendering of the 8
variants, Parquet writing, card) into a fresh folder; images/s = photos in / wall time.
The two outputs are also checked byte-identical. Target: N=2 / N=1 >= 1.8 on 2 cores.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # tests/synthetic_scenes.py for --source synthetic

SAMPLES = REPO.parent / "shared" / "data" / "in9_samples" / "images"


def _digest(folder: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        h.update(path.relative_to(folder).as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def _run(images: Path, boxes: Path | None, out: Path, workers: int, per_class: int) -> dict:
    # Imported here, not at the top: spawned workers re-import this script as __mp_main__,
    # and should not pay for datasets/pyarrow they never use.
    from hf_bgbench.benchmarks import get_benchmark
    from hf_bgbench.benchmarks.in9.build import BuildOptions, build_in9

    start = time.perf_counter()
    report = build_in9(
        BuildOptions(
            images=images,
            boxes=boxes,
            no_boxes=boxes is None,
            output=out,
            workers=workers,
            limit_per_class=per_class,
            progress=False,
        ),
        get_benchmark("in9"),
    )
    seconds = time.perf_counter() - start
    photos = report["photos_found"] - report["subsampled_out"]
    return {
        "workers": workers,
        "photos": photos,
        "kept": report["kept"],
        "seconds": round(seconds, 2),
        "images_per_s": round(photos / seconds, 2),
        "sha256": _digest(out),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--source", choices=("samples", "synthetic"), default="samples")
    ap.add_argument("--per-class", type=int, default=6, help="photos per class (default 6)")
    ap.add_argument("--workers", type=int, default=2, help="the parallel run's workers")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="bgbench-bench-") as tmp:
        tmp = Path(tmp)
        if args.source == "samples":
            if not SAMPLES.is_dir():
                sys.exit(f"{SAMPLES} not found; use --source synthetic")
            images, boxes = SAMPLES, None
        else:
            from tests.synthetic_scenes import write_photos

            images, boxes = write_photos(tmp / "photos", per_class=args.per_class, extras=False)
        runs = [_run(images, boxes, tmp / f"out{w}", w, args.per_class) for w in (1, args.workers)]
    ratio = runs[1]["images_per_s"] / runs[0]["images_per_s"]
    print(
        json.dumps(
            {
                "source": args.source,
                "cpus": os.cpu_count(),
                "runs": runs,
                "speedup": round(ratio, 2),
                "byte_identical": runs[0]["sha256"] == runs[1]["sha256"],
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
