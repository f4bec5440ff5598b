"""Loading every config of a local Hub-layout folder: bgbench's reader against
``datasets.load_dataset(folder, config)`` (what it called before), on an ImageNet-E-shaped
folder -- 12 configs whose card lists ImageNet's 1000 class names in each -- and IN-9's.

    python bench/hub_folder_loading.py [--images 6] [--rounds 3]

The folder is written outside the repository (a temporary folder) by ``bgbench convert
imagenet-e`` from a synthetic release in the authors' flat layout (tiny images: the time
measured is the loading, not the pixels). Each round loads every config both ways, in
alternating order, with warm ``datasets`` caches (a first load of each, untimed, builds
them), and prints the seconds and their ratio; then the median over the rounds.

``load_dataset(folder, config)`` parses the whole card with PyYAML's pure-Python parser on
every call; the reader takes the card parsed once (libyaml, cached per file version) and
hands ``datasets``' Parquet builder the config's files and features.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import datasets
from PIL import Image

from hf_bgbench.benchmarks import get_benchmark
from hf_bgbench.benchmarks.imagenet_e.convert import convert_imagenet_e_release
from hf_bgbench.data.sources import resolve_source

# the authors' flat release folders (see tests/test_imagenet_e.py), all 12 edits
FOLDERS = ("ori", "rec", "20_smooth", "20_hard", "20_adv", "random_bg", "full", "01", "008")
FOLDERS += ("005", "rp", "rd")


def write_release(root: Path, images: int) -> Path:
    top = root / "ImageNet-E"
    ids = [f"n{k}_{k}" for k in range(images)]
    for folder in FOLDERS:
        (top / folder).mkdir(parents=True)
        ext = ".JPEG" if folder in ("ori", "full") else ".png"
        for k, image_id in enumerate(ids):
            Image.new("RGB", (32, 32), (k, 0, 0)).save(top / folder / f"{image_id}{ext}")
    (top / "labels.txt").write_text("".join(f"{i}.JPEG\t{k}\n" for k, i in enumerate(ids)))
    return root


def time_loads(load, configs: list[str]) -> float:
    start = time.perf_counter()
    for config in configs:
        load(config)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--images", type=int, default=6, help="images per edit")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    datasets.disable_progress_bars()
    spec = get_benchmark("imagenet-e")
    with tempfile.TemporaryDirectory(prefix="bgbench-bench-") as tmp:
        folder = Path(tmp) / "imagenet-e"
        release = write_release(Path(tmp) / "release", args.images)
        convert_imagenet_e_release(release, folder, progress=False, spec=spec)
        reader = resolve_source(str(folder), spec)
        configs = list(reader.variants)
        card_kb = (folder / "README.md").stat().st_size / 1024
        print(f"{len(configs)} configs, {args.images} images each, card {card_kb:.0f} KB")
        ways = {
            "reader": lambda c: reader.load(c),
            "load_dataset": lambda c: datasets.load_dataset(str(folder), c),
        }
        for load in ways.values():  # warm the datasets caches of both ways
            time_loads(load, configs)
        ratios = []
        for i in range(args.rounds):
            order = list(ways) if i % 2 == 0 else list(ways)[::-1]
            seconds = {name: time_loads(ways[name], configs) for name in order}
            ratios.append(seconds["load_dataset"] / seconds["reader"])
            print(
                f"  round {i + 1}: reader {seconds['reader']:.2f} s, load_dataset "
                f"{seconds['load_dataset']:.2f} s -> {ratios[-1]:.1f}x"
            )
        print(f"load_dataset / reader, median of {args.rounds}: {statistics.median(ratios):.1f}x")


if __name__ == "__main__":
    sys.exit(main())
