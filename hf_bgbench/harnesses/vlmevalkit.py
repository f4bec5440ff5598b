"""A benchmark as a VLMEvalKit multiple-choice dataset: one TSV (VLMEvalKit's layout: index,
image as base64, question, the lettered options A.., answer, category) and its MD5 beside it.
Dropped into ``$LMUData``, VLMEvalKit loads it with no code (its ``CustomMCQDataset``) and
reports the accuracy per ``category``: here the benchmark's variant, so a gap such as BG-GAP
is two of its numbers.

The options are the class strings bgbench's ``choice`` rules list, in the same order and,
with ``circular`` > 1, the same rotations (VLMEvalKit's circular evaluation: rotation ``k`` of
row ``i`` is row ``i + k * 1000000``, which VLMEvalKit groups back; a dataset name holding
"circular" turns it on). The question is bgbench's; VLMEvalKit writes the options and its own
instruction around it and reads the letter its own way, so its numbers are its rule's, not
bgbench's ``choice-text`` (the guide in docs says how they differ)."""

from __future__ import annotations

import base64
import csv
import hashlib
import io
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from hf_bgbench.benchmarks import get_benchmark
from hf_bgbench.models.vlm.rules.choice import rotations
from hf_bgbench.models.vlm.settings import LETTERS, QUESTION, class_string
from hf_bgbench.spec import BenchmarkSpec

ROTATION_STRIDE = 1_000_000
"""VLMEvalKit's circular layout: rotation k of question i has index i + k * this."""
COLUMNS = ("index", "image", "question", "answer", "category", "bgbench_id")


@dataclass(frozen=True)
class WrittenTsv:
    name: str  # the dataset name VLMEvalKit is given (the TSV's stem)
    tsv: Path
    md5: str
    rows: int


def dataset_name(spec: BenchmarkSpec, circular: int) -> str:
    base = "BGBench_" + "".join(c if c.isalnum() else "_" for c in spec.name.upper())
    return base + ("_Circular" if circular > 1 else "")


def check_exportable(spec: BenchmarkSpec) -> None:
    """Refuse a benchmark whose classes do not fit lettered options."""
    if spec.num_classes > len(LETTERS):
        raise ValueError(
            f"{spec.name} has {spec.num_classes} classes; a VLMEvalKit multiple-choice question "
            f"lists at most {len(LETTERS)} lettered options. "
            + (
                f"Run it in lmms-eval instead: bgbench export lmms-eval --benchmark {spec.name}."
                if spec.hub_variant_configs
                else f"Score the VLM with bgbench itself: bgbench evaluate MODEL --benchmark "
                f"{spec.name} --vlm-protocol open (served models too: openai:<name> "
                "--api-base URL)."
            )
        )


def png_base64(image) -> str:
    """The image as VLMEvalKit stores it: base64 of a lossless PNG of its RGB pixels (the
    pixels bgbench scores; VLMEvalKit writes it back as ``<index>.png``)."""
    buffer = io.BytesIO()
    image.convert("RGB").save(buffer, format="PNG")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def tsv_rows(
    spec: BenchmarkSpec, data: str, variants: Sequence[str], circular: int
) -> Iterator[dict[str, str]]:
    """The TSV's rows: each image of each variant, once per rotation of its options."""
    from hf_bgbench.data.sources import resolve_source

    reader = resolve_source(data, spec)
    choices = [class_string(n) for n in spec.label_space.names]
    orders = rotations(len(choices), circular)
    index = 0
    for variant in variants:
        for row in reader.load(variant):
            try:
                image = png_base64(row["image"])
            except OSError as err:  # no image skipped unsaid: the export is refused
                raise ValueError(
                    f"{data} [{variant}] image {row['id']}: cannot be read ({err}). "
                    "Repair or remove it, then export again."
                ) from err
            for k, order in enumerate(orders):
                out = {
                    "index": str(index + k * ROTATION_STRIDE),
                    "image": image if k == 0 else str(index),  # a rotation points at row i
                    "question": QUESTION,
                    "answer": LETTERS[order.index(int(row["label"]))],
                    "category": variant,
                    "bgbench_id": str(row["id"]),
                }
                out |= {LETTERS[i]: choices[c] for i, c in enumerate(order)}
                yield out
            index += 1
            if index >= ROTATION_STRIDE:
                raise ValueError(f"more than {ROTATION_STRIDE:,} images: VLMEvalKit's layout.")


def write_tsv(
    benchmark: str,
    data: str,
    out: str | Path,
    variants: Sequence[str] | None = None,
    name: str | None = None,
    circular: int = 1,
) -> WrittenTsv:
    """Write ``<out>/<name>.tsv`` and ``<name>.tsv.md5`` (its MD5, as VLMEvalKit checks a
    dataset's file) for ``benchmark``'s ``data``."""
    spec = get_benchmark(benchmark)
    check_exportable(spec)
    if circular < 1:
        raise ValueError(f"--circular must be 1 or more, got {circular}.")
    chosen = list(variants or spec.variants)
    spec.check_variants(chosen)
    name = name or dataset_name(spec, circular)
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    tsv = folder / f"{name}.tsv"
    partial = folder / f"{name}.tsv.partial"  # a failed export leaves no TSV that looks whole
    fields = ["index", "image", "question", *LETTERS[: spec.num_classes], *COLUMNS[3:]]
    rows = 0
    with partial.open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fields, delimiter="\t", lineterminator="\n")
        writer.writeheader()
        for row in tsv_rows(spec, data, chosen, circular):
            writer.writerow(row)
            rows += 1
    partial.replace(tsv)
    md5 = hashlib.md5(tsv.read_bytes()).hexdigest()
    (folder / f"{name}.tsv.md5").write_text(f"{md5}  {tsv.name}\n", encoding="utf-8")
    return WrittenTsv(name, tsv, md5, rows)
