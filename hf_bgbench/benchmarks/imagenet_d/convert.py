"""Convert the ImageNet-D release into the Hub layout (one config per subset).

Reading is :mod:`hf_bgbench.benchmarks.imagenet_d.release` (the one parser of that layout);
writing is :mod:`hf_bgbench.data.hub`. Image bytes are stored unchanged, rows in the
release's order (class folders, then files, sorted); the ``negative`` column holds each
image's hard negative. Nothing depends on the clock or on absolute paths, so converting
twice gives identical bytes.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from hf_bgbench.benchmarks.imagenet_d.card import write_imagenet_d_card
from hf_bgbench.benchmarks.imagenet_d.facts import CLEAN, NEGATIVE, SPLIT
from hf_bgbench.benchmarks.imagenet_d.release import LAYOUT_TEXT, ImageNetDRelease
from hf_bgbench.builders.report import REPORT_FORMAT, REPORT_NAME, prepare_repo_folder, write_json
from hf_bgbench.data import hub
from hf_bgbench.data.reader import DataSourceError, quiet_datasets
from hf_bgbench.spec import BenchmarkSpec


def convert_imagenet_d(
    src: str | Path,
    output: str | Path,
    *,
    spec: BenchmarkSpec,
    clean: str | Path | None = None,
    overwrite: bool = False,
    progress: bool = True,
) -> dict[str, Any]:
    """Write the release at ``src`` (with the clean photos at ``clean``, when given) as a
    Hub repo folder at ``output``; returns the report."""
    reader = ImageNetDRelease.detect(str(src), spec, clean=clean)
    if reader is None:
        raise DataSourceError(f"{src} is not the ImageNet-D release: expected {LAYOUT_TEXT}.")
    output = Path(output)
    prepare_repo_folder(output, overwrite)
    subsets: dict[str, dict[str, Any]] = {}
    for subset in tqdm(reader.variants, desc=spec.name, unit="subset", disable=not progress):
        ds = reader.load(subset, columns=() if subset == CLEAN else (NEGATIVE,))
        with quiet_datasets():
            shards = hub.write_parquet_shards(ds, output, subset, SPLIT)
        per_class = Counter(spec.classes[y] for y in ds["label"])
        skipped = reader.skipped_files(subset)
        subsets[subset] = {
            "rows": len(ds),
            "classes": len(per_class),
            "shards": shards,
            "skipped": {k: len(v) for k, v in skipped.items()},
        }
    report = {
        "format": REPORT_FORMAT,
        "benchmark": spec.name,
        "source": "release",
        "subsets": subsets,
        "images": sum(s["rows"] for s in subsets.values()),
    }
    write_json(output / REPORT_NAME, report)
    write_imagenet_d_card(output, spec, report)
    return report


def summary_lines(report: dict[str, Any]) -> list[str]:
    """What ``bgbench convert imagenet-d`` prints."""
    parts = ", ".join(f"{s} {r['rows']}" for s, r in report["subsets"].items())
    lines = [f"converted {report['images']} images ({parts})"]
    for subset, r in report["subsets"].items():
        lines += [f"skipped {n} file(s) of {subset}: {why}" for why, n in r["skipped"].items()]
    return lines
