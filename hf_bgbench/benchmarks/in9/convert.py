"""Convert the official Backgrounds Challenge release into the Hub layout.

Reading is :mod:`hf_bgbench.benchmarks.in9.release` (the one parser of that layout); writing is
:mod:`hf_bgbench.data.hub`. Image bytes are stored unchanged (the reader hands over file
paths and the writer embeds the files' bytes); the ``.npy`` masks become 0/255 "L" PNGs on
every variant row; the id is the file stem, checked identical across the eight variants.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hf_bgbench.benchmarks.in9.card import write_card
from hf_bgbench.benchmarks.in9.release import (
    MASK_DIRNAME,
    RELEASE_SPLIT,
    ReleaseLayoutError,
    find_release_root,
    load_release_variant,
    release_variants,
)
from hf_bgbench.builders.report import REPORT_FORMAT, REPORT_NAME, prepare_repo_folder, write_json
from hf_bgbench.data import hub
from hf_bgbench.data.schema import ID, LABEL
from hf_bgbench.spec import BenchmarkSpec

SPLIT = "test"  # the release's "val" images are the benchmark's test set


def convert_in9_release(
    src: str | Path,
    output: str | Path,
    spec: BenchmarkSpec,
    overwrite: bool = False,
) -> dict[str, Any]:
    """Write the release at ``src`` as a Hub repo folder at ``output`` for ``spec`` (the in9
    spec); returns the report."""
    root = find_release_root(src, spec)
    present = release_variants(root, spec)
    missing = [v for v in spec.variants if v not in present]
    if not (root / MASK_DIRNAME / RELEASE_SPLIT).is_dir():
        missing.append(MASK_DIRNAME)
    if missing:
        raise ReleaseLayoutError(
            f"The release at {root} is incomplete: missing "
            + ", ".join(f"{m}/{RELEASE_SPLIT}/" for m in missing)
            + f". Expected all of {', '.join(spec.variants)} and {MASK_DIRNAME}."
        )
    output = Path(output)
    prepare_repo_folder(output, overwrite)

    shards: dict[str, list[str]] = {}
    reference_ids: list[str] | None = None
    per_class: dict[str, int] = {}
    for variant in spec.variants:
        ds = load_release_variant(root, variant, spec, with_mask=True)
        ids = ds[ID]
        if reference_ids is None:
            reference_ids = ids
            counts = [0] * spec.num_classes
            for label in ds[LABEL]:
                counts[label] += 1
            per_class = {spec.classes[k]: n for k, n in enumerate(counts)}
        elif ids != reference_ids:
            only_here = sorted(set(ids) - set(reference_ids))[:3]
            absent = sorted(set(reference_ids) - set(ids))[:3]
            raise ReleaseLayoutError(
                f"{variant!r} does not hold the same images as {spec.variants[0]!r} "
                f"(only in {variant}: {only_here}; missing from it: {absent}); every variant "
                "of the release must share the ids (file stems) and class folders."
            )
        shards[variant] = hub.write_parquet_shards(ds, output, variant, SPLIT)

    split_report = {"kept": len(reference_ids or []), "per_class": per_class, "shards": shards}
    report = {
        "format": REPORT_FORMAT,
        "benchmark": spec.name,
        "source": "release",
        "splits": {SPLIT: split_report},
    }
    write_json(output / REPORT_NAME, report)
    write_card(output, spec, report)
    return split_report
