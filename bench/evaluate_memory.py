"""``bgbench evaluate`` peak memory against dataset size: one variant of 400 and of 4,050
images, same model, same run (target: the larger within 10% of the smaller).

    python bench/evaluate_memory.py [--sizes 400 4050] [--model tf_efficientnet_lite0]
        [--layout hub|release] [--batch-size 32] [--workers N]

Each size gets a synthetic IN-9 ``original`` variant written outside the repository (a
temporary folder): 224x224 JPEGs, in the Hub layout (README ``configs:`` + Parquet with the
image bytes embedded, what ``load_dataset`` reads) or in the official release layout. The
images are a few dozen distinct pictures repeated under unique ids: memory depends on how
many rows there are, not on what they show. ``bgbench evaluate`` then runs in a subprocess
with a fresh prediction cache (the default path: predictions streamed to the cache), and
its peak resident set size is read from ``os.wait4`` -- the largest of the process and its
decode workers (Linux ``ru_maxrss``), no sampling and no psutil.

Measured on a shared 2-core CPU (tf_efficientnet_lite0, Hub layout, batch 32): 1703 MB at
400 images, 1845 MB at 4,050 -> 1.083. Before the engine kept its prediction columns
preallocated (one small frame kept per batch): 1745 / 2732 MB -> 1.565. The peak is the
process's baseline plus one batch's forward pass; what remains above it at 4,050 builds up
over the first ~16 batches (allocator warm-up) and then stays flat. Since freed memory is kept
for the next batch (hf_bgbench.inference.allocator): 1886 / 1940 MB -> 1.029, in 39 / 171 s;
the same run with BGBENCH_KEEP_FREED_MEMORY=0: 1552 / 1657 MB -> 1.067, in 43 / 300 s.
"""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image

DISTINCT = 48  # distinct pictures, repeated under unique ids


def pictures(seed: int = 0) -> list[bytes]:
    """``DISTINCT`` 224x224 JPEGs (smooth colour fields with noise: photo-like sizes)."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[:224, :224] / 224.0
    out = []
    for _ in range(DISTINCT):
        a, b, c = rng.uniform(0, 255, (3, 3))
        img = np.stack([a[k] * xx + b[k] * yy + c[k] * (1 - xx) for k in range(3)], -1)
        img = np.clip(img / 2 + rng.normal(0, 12, img.shape), 0, 255).astype(np.uint8)
        buf = io.BytesIO()
        Image.fromarray(img).save(buf, format="JPEG", quality=90)
        out.append(buf.getvalue())
    return out


def write_hub_folder(root: Path, n: int) -> Path:
    """An IN-9 Hub-layout folder whose ``original`` config holds ``n`` images."""
    import datasets

    from hf_bgbench.benchmarks import get_benchmark
    from hf_bgbench.data.hub import configs_yaml, render_card, write_parquet_shards
    from hf_bgbench.data.schema import benchmark_features

    spec = get_benchmark("in9")
    data = pictures()
    ds = datasets.Dataset.from_dict(
        {
            "image": [{"bytes": data[i % DISTINCT], "path": None} for i in range(n)],
            "label": [i % spec.num_classes for i in range(n)],
            "id": [f"img{i:06d}" for i in range(n)],
        },
        features=benchmark_features(spec.classes),
    )
    write_parquet_shards(ds, root, "original", "test")
    card = render_card({"configs": configs_yaml({"original": ["test"]})}, "# synthetic IN-9")
    (root / "README.md").write_text(card, encoding="utf-8")
    return root


def write_release(root: Path, n: int) -> Path:
    """The official release layout with ``n`` images in ``original``."""
    from hf_bgbench.benchmarks import get_benchmark

    names = get_benchmark("in9").classes
    data = pictures()
    for i in range(n):
        label = i % len(names)
        folder = root / "bg_challenge" / "original" / "val" / f"{label:02d}_{names[label]}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"img{i:06d}.JPEG").write_bytes(data[i % DISTINCT])
    return root


def peak_rss_mb(argv: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """(peak RSS in MB of the command and its waited-for descendants, seconds, exit code)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KiB on Linux
    return usage.ru_maxrss * scale / 2**20, time.perf_counter() - t0, proc.returncode


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[400, 4050])
    ap.add_argument("--model", default="tf_efficientnet_lite0")
    ap.add_argument("--layout", choices=("hub", "release"), default="hub")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--workers", type=int, default=None, help="decode workers (default: bgbench's)")
    args = ap.parse_args()

    results = {}
    with tempfile.TemporaryDirectory(prefix="bgbench-memory-") as tmp:
        env = {**os.environ, "HF_HOME": f"{tmp}/hf_home", "HF_BGBENCH_CACHE": f"{tmp}/cache"}
        env.setdefault("HF_HUB_OFFLINE", "1")
        env.setdefault("HF_DATASETS_OFFLINE", "1")
        for n in args.sizes:
            folder = Path(tmp) / f"in9_{n}"
            (write_hub_folder if args.layout == "hub" else write_release)(folder, n)
            argv = [sys.executable, "-m", "hf_bgbench", "evaluate", args.model]
            argv += ["--data", str(folder), "--variants", "original", "--quiet"]
            argv += ["--output", str(Path(tmp) / f"out_{n}"), "--batch-size", str(args.batch_size)]
            if args.workers is not None:
                argv += ["--workers", str(args.workers)]
            mb, seconds, code = peak_rss_mb(argv, env)
            if code != 0:
                raise SystemExit(f"bgbench evaluate failed on {n} images (exit code {code}).")
            results[n] = mb
            print(f"{n:6d} images ({args.layout}): peak RSS {mb:8.1f} MB, {seconds:6.1f} s")
    small, large = min(results), max(results)
    ratio = results[large] / results[small]
    print(
        f"peak RSS {large} / {small} images: {ratio:.3f} (target <= 1.10; "
        f"+{results[large] - results[small]:.1f} MB)"
    )


if __name__ == "__main__":
    main()
