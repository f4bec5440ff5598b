"""What every benchmark's dataset card (README.md) is made of, whatever the benchmark.

The YAML front matter is what the Hub and ``load_dataset`` read: ``configs``,
``dataset_info`` (features and split sizes, read back from the Parquet shards so the card
always matches the files) and ``size_categories``; the prose ends with the benchmark's
citation. Each benchmark's own card (its configs' prose, licence, tags, counts) lives in
its folder (``hf_bgbench/benchmarks/<name>/card.py``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import datasets
import pyarrow.parquet as pq

from hf_bgbench.spec import BenchmarkSpec


def folder_dataset_info(folder: str | Path) -> dict[str, dict[str, Any]]:
    """config -> {"features", "splits": {split: (num_examples, num_bytes)}, "download_size"},
    read from the Parquet shards under ``folder/data``."""
    folder = Path(folder)
    info: dict[str, dict[str, Any]] = {}
    for config_dir in sorted(p for p in (folder / "data").glob("*") if p.is_dir()):
        shards = sorted(config_dir.glob("*.parquet"))
        if not shards:
            continue
        splits: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for shard in shards:
            meta = pq.read_metadata(shard)
            split = shard.name.split("-")[0]
            splits[split][0] += meta.num_rows
            splits[split][1] += sum(
                meta.row_group(i).total_byte_size for i in range(meta.num_row_groups)
            )
        info[config_dir.name] = {
            "features": datasets.Features.from_arrow_schema(pq.read_schema(shards[0])),
            "splits": {k: tuple(v) for k, v in sorted(splits.items())},
            "download_size": sum(s.stat().st_size for s in shards),
        }
    return info


def size_category(n: int) -> str:
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")):
        if n < limit:
            return name
    return "100K<n<1M" if n < 1_000_000 else "1M<n<10M"


def dataset_info_entries(info: dict[str, dict[str, Any]], names: list[str]) -> list[dict]:
    """The card's ``dataset_info`` list (features and split sizes) for configs ``names``."""
    entries = []
    for name in names:
        entry = info[name]
        splits = [
            {"name": split, "num_bytes": nbytes, "num_examples": rows}
            for split, (rows, nbytes) in entry["splits"].items()
        ]
        entries.append(
            {
                "config_name": name,
                "features": entry["features"]._to_yaml_list(),
                "splits": splits,
                "download_size": entry["download_size"],
                "dataset_size": sum(s["num_bytes"] for s in splits),
            }
        )
    return entries


def largest_config(info: dict[str, dict[str, Any]]) -> int:
    """Rows of the largest config (all splits), for ``size_categories``."""
    return max((sum(n for n, _ in i["splits"].values()) for i in info.values()), default=0)


def markdown_table(header: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def variant_card_metadata(
    spec: BenchmarkSpec, folder: str | Path, licence: Mapping[str, str], tags: list[str]
) -> tuple[dict[str, Any], list[str]]:
    """(the card's front matter, the variants it holds) of a folder whose configs are the
    benchmark's variants (the reference one the default): ``licence`` is its ``license``
    (and ``license_name`` / ``license_link``) entries; features and sizes read back from the
    shards (:func:`folder_dataset_info`)."""
    from hf_bgbench.data import hub

    info = folder_dataset_info(folder)
    names = [v for v in spec.variants if v in info]
    metadata = {
        "pretty_name": spec.title,
        **licence,
        "task_categories": ["image-classification"],
        "tags": tags,
        "size_categories": [size_category(largest_config(info))],
        "configs": hub.configs_yaml(
            {n: list(info[n]["splits"]) for n in names}, spec.reference_variant
        ),
        "dataset_info": dataset_info_entries(info, names),
    }
    return metadata, names


def write_card(folder: str | Path, text: str) -> Path:
    """``folder/README.md`` holding ``text`` (UTF-8)."""
    path = Path(folder) / "README.md"
    path.write_text(text, encoding="utf-8")
    return path


def citation_lines(spec: BenchmarkSpec) -> list[str]:
    """The card's closing "Citation" section: the benchmark's BibTeX."""
    return ["## Citation", "", "```bibtex", spec.citation, "```"]
