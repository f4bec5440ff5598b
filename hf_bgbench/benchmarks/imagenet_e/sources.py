"""Where ``bgbench build imagenet-e`` takes its masked images from.

- ``--images DIR --masks DIR``: ImageNet photos (ROOT/<wnid>/<stem>.JPEG or a flat folder of
  <wnid>_<n>.JPEG), labelled with their ImageNet-1k index (the ImageNet-E protocol), and one
  mask per photo, MASKS/<stem>.<png|jpg|...> or MASKS/<wnid>/<stem>.<...> (non-zero = object);
- ``--from NAME DIR``: the Hub folder of another registered benchmark that offers its
  photos as a masked source (its spec's ``masked_source``): its ``mask_variant`` config and
  that config's ``mask_column`` (e.g. an IN-9 build: ``original`` and ``mask``).

Labels are ImageNet-1k indices, as the ImageNet-E protocol scores them: from the wnid of
photo folders, and for IN-9 / RIVAL10 Hub folders from the wnid each id starts with; a Hub
folder whose ids carry no wnid keeps its own classes (recorded as ``label_space``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import datasets
import pyarrow.parquet as pq

from hf_bgbench.files import IMAGE_SUFFIXES, is_image_file
from hf_bgbench.spec import BenchmarkSpec

WNID = re.compile(r"^n\d{8}$")


@dataclass(frozen=True)
class SourceItem:
    id: str
    label: int
    image: bytes | str  # encoded bytes or a file path
    mask: bytes | str


@dataclass
class Source:
    kind: str
    location: str
    items: list[SourceItem]
    class_names: list[str]
    label_space: str
    skipped: dict[str, int]


def _wnid_of(path: Path) -> str | None:
    if WNID.match(path.parent.name):
        return path.parent.name
    head = path.stem.split("_")[0]
    return head if WNID.match(head) else None


def _find_mask(masks: Path, wnid: str, stem: str) -> Path | None:
    for folder in (masks, masks / wnid):
        for suffix in sorted(IMAGE_SUFFIXES):
            for name in (f"{stem}{suffix}", f"{stem}{suffix.upper()}"):
                if (folder / name).is_file():
                    return folder / name
    return None


def from_folders(images: Path, masks: Path) -> Source:
    from hf_bgbench.labels import full_imagenet_label_space, imagenet_wnid_index

    for flag, folder in (("--images", images), ("--masks", masks)):
        if not Path(folder).is_dir():
            raise FileNotFoundError(f"{flag} {folder}: no such folder.")
    index = imagenet_wnid_index()
    skipped: Counter = Counter()
    items = []
    for path in sorted(p for p in Path(images).rglob("*") if is_image_file(p)):
        wnid = _wnid_of(path)
        if wnid not in index:
            skipped["no_imagenet_wnid"] += 1
            continue
        mask = _find_mask(Path(masks), wnid, path.stem)
        if mask is None:
            skipped["no_mask"] += 1
            continue
        items.append(SourceItem(path.stem, index[wnid], str(path), str(mask)))
    if not items:
        raise FileNotFoundError(
            f"No photo in --images {images} has a mask in --masks {masks} "
            f"({dict(skipped) or 'no photo found'}). Expected ROOT/<wnid>/<stem>.JPEG or "
            "<wnid>_<n>.JPEG photos and MASKS/<stem>.png masks."
        )
    names = list(full_imagenet_label_space().names)
    return Source("folders", str(images), items, names, "imagenet-1k", dict(skipped))


def hub_sources(specs: Sequence[BenchmarkSpec]) -> dict[str, tuple[str, str, str]]:
    """Benchmark name -> (config, mask column, the commands that make such a folder) of the
    Hub folders ``--from`` reads: the benchmarks that offer their photos as a masked source
    (``masked_source``), in order."""
    return {
        s.name: (
            s.mask_variant,
            s.mask_column,
            " or ".join(f"`{c}`" for c in (s.download_command, *s.build_commands) if c),
        )
        for s in specs
        if s.masked_source
    }


def from_hub(kind: str, folder: Path, sources: Mapping[str, tuple[str, str, str]]) -> Source:
    """The masked photos of the Hub folder ``folder`` of benchmark ``kind`` (one of
    ``sources``, :func:`hub_sources`)."""
    if kind not in sources:
        raise ValueError(f"--from must be one of {sorted(sources)}, got {kind!r}.")
    config, mask_column, makers = sources[kind]
    files = sorted((Path(folder) / "data" / config).glob("test-*.parquet"))
    if not files:
        raise FileNotFoundError(
            f"--from {kind} {folder}: no data/{config}/test-*.parquet; expected a {kind} "
            f"dataset folder in the Hub layout{f' (made by {makers})' if makers else ''} with "
            f"its {config!r} config."
        )
    features = datasets.Features.from_arrow_schema(pq.read_schema(files[0]))
    if mask_column not in features:
        raise ValueError(
            f"--from {kind} {folder}: the {config!r} config has no {mask_column!r} column "
            f"(columns: {', '.join(features)}); the edits need the object masks."
        )
    label = features["label"]
    names = list(label.names) if isinstance(label, datasets.ClassLabel) else []
    items, skipped = [], Counter()
    for file in files:
        table = pq.read_table(file, columns=["id", "label", "image", mask_column])
        for row in table.to_pylist():
            if not row[mask_column] or not row[mask_column].get("bytes"):
                skipped["no_mask"] += 1
                continue
            items.append(
                SourceItem(
                    str(row["id"]),
                    int(row["label"]),
                    row["image"]["bytes"],
                    row[mask_column]["bytes"],
                )
            )
    items.sort(key=lambda i: (i.label, i.id))
    if len(names) != 1000:
        relabelled = _imagenet_labels(items)
        if relabelled is not None:
            # The ImageNet-E protocol scores the fine ImageNet-1k class: IN-9 and RIVAL10 ids
            # start with the source photo's wnid, which gives it exactly.
            from hf_bgbench.labels import full_imagenet_label_space

            names = list(full_imagenet_label_space().names)
            return Source(kind, str(folder), relabelled, names, "imagenet-1k", dict(skipped))
    space = "imagenet-1k" if len(names) == 1000 else kind
    return Source(kind, str(folder), items, names, space, dict(skipped))


def _imagenet_labels(items: list[SourceItem]) -> list[SourceItem] | None:
    """``items`` labelled with the ImageNet-1k index of the wnid their id starts with, or
    None when some id carries no ImageNet wnid (then the source's own labels are kept)."""
    from hf_bgbench.labels import imagenet_wnid_index

    index = imagenet_wnid_index()
    heads = [item.id.split("_")[0] for item in items]
    if not items or not all(WNID.match(h) and h in index for h in heads):
        return None
    out = [
        SourceItem(item.id, index[head], item.image, item.mask)
        for item, head in zip(items, heads, strict=True)
    ]
    return sorted(out, key=lambda i: (i.label, i.id))
