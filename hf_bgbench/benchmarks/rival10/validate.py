"""RIVAL10's own checks for ``bgbench validate`` (the layout's ``row_checks``).

The generic checks (:mod:`hf_bgbench.builders.validate`) already cover the card, both
splits, labels in range, unique ids and the ``object_mask`` (binary "L", the image's
size). Here, per config/split: the schema (18 attribute names in order, in both attribute
structs; the attribute-mask list; the merged mask; the wnid), and per row: attribute masks
only for present attributes, named once, binary and of the image's size; the merged mask
likewise; every row has an object mask; the wnid is the id's prefix and maps to the row's label.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import datasets
import numpy as np
import pyarrow.parquet as pq

from hf_bgbench.benchmarks.rival10.items import (
    ATTRIBUTE_MASKS,
    ATTRIBUTES,
    CHANGED_ATTRIBUTES,
    MERGED_MASK,
    OBJECT_MASK,
    WNID,
)
from hf_bgbench.benchmarks.rival10.labels import rival10_attributes
from hf_bgbench.benchmarks.rival10.release import label_of_wnid
from hf_bgbench.files import ImageDecodeError, image_size, open_image

EXAMPLES = 3
COLUMNS = ("id", "label", "image", OBJECT_MASK, ATTRIBUTES, ATTRIBUTE_MASKS, MERGED_MASK, WNID)


def _schema_problems(features: datasets.Features) -> list[str]:
    """What is wrong with a shard's features (empty when they follow the RIVAL10 schema)."""
    names = rival10_attributes()
    problems = []
    for column in (ATTRIBUTES, CHANGED_ATTRIBUTES):
        feature = features.get(column)
        got = list(feature) if isinstance(feature, dict) else None
        if got != names:
            problems.append(
                f"column {column!r} is not a struct of the 18 RIVAL10 attributes in order "
                f"(found {got if got is not None else feature})"
            )
    masks = features.get(ATTRIBUTE_MASKS)
    inner = getattr(masks, "feature", None)
    if not (
        isinstance(inner, dict)
        and isinstance(inner.get("mask"), datasets.Image)
        and inner.get("attribute") == datasets.Value("string")
    ):
        problems.append(
            f"column {ATTRIBUTE_MASKS!r} is not a list of {{attribute: string, mask: Image}} "
            f"(found {masks})"
        )
    if not isinstance(features.get(MERGED_MASK), datasets.Image):
        problems.append(
            f"column {MERGED_MASK!r} is not an Image (found {features.get(MERGED_MASK)})"
        )
    if features.get(WNID) != datasets.Value("string"):
        problems.append(f"column {WNID!r} is not a string (found {features.get(WNID)})")
    return problems


def _mask_problem(data: dict[str, Any] | None, size: tuple[int, int]) -> str | None:
    """Why an encoded mask is not a binary "L" image of ``size`` (None if it is)."""
    if not data or not data.get("bytes"):
        return "empty"
    try:  # as stored: the mode is checked
        m = open_image(data, "the mask", eight_bits=False)
    except ImageDecodeError as err:
        return str(err)
    arr, mode = np.asarray(m), m.mode
    if arr.shape[::-1][:2] != size:
        return f"{arr.shape[1]}x{arr.shape[0]}, not the image's {size[0]}x{size[1]}"
    if mode != "L" or not set(np.unique(arr).tolist()) <= {0, 255}:
        return "not an 'L' image with values 0/255"
    return None


def _row_problems(row: dict[str, Any]) -> dict[str, str]:
    """kind -> what is wrong with one row (attribute masks, merged mask, wnid)."""
    out: dict[str, str] = {}
    names = rival10_attributes()
    try:
        size = image_size(row["image"], "the image")
    except ImageDecodeError:
        return out  # the generic checks name the undecodable image
    if not (row[OBJECT_MASK] or {}).get("bytes"):
        out["no object_mask"] = "empty"
    else:
        try:
            if not np.asarray(
                open_image(row[OBJECT_MASK], "the object_mask", eight_bits=False)
            ).any():
                out["object_mask with no object pixel (all zero)"] = "all zero"
        except ImageDecodeError as err:
            out["object_mask cannot be decoded"] = str(err)
    present = row[ATTRIBUTES] or {}
    seen = [entry["attribute"] for entry in row[ATTRIBUTE_MASKS] or []]
    unknown = [a for a in seen if a not in names]
    if unknown:
        out["unknown attribute name in attribute_masks"] = ", ".join(unknown)
    absent = [a for a in seen if a in names and not present.get(a)]
    if absent:
        out["attribute mask for an attribute marked absent"] = ", ".join(absent)
    if len(set(seen)) != len(seen):
        out["attribute mask listed twice"] = ", ".join(
            sorted({a for a in seen if seen.count(a) > 1})
        )
    for entry in row[ATTRIBUTE_MASKS] or []:
        problem = _mask_problem(entry["mask"], size)
        if problem:
            out["attribute mask not binary or not the image's size"] = (
                f"{entry['attribute']}: {problem}"
            )
    problem = _mask_problem(row[MERGED_MASK], size)
    if problem:
        out["merged_mask not binary or not the image's size"] = problem
    wnid = row[WNID]
    if not str(row["id"]).startswith(f"{wnid}_") or label_of_wnid(wnid) != row["label"]:
        out["imagenet_wnid does not match the id or the label"] = f"{wnid} (label {row['label']})"
    return out


def check_rival10_split(files: list[Path], where: str, result: Any) -> None:
    """Append to ``result.problems`` what is wrong with one RIVAL10 config/split."""
    features = datasets.Features.from_arrow_schema(pq.read_schema(files[0]))
    missing = [c for c in (*COLUMNS, CHANGED_ATTRIBUTES) if c not in features]
    if missing:
        result.problems.append(
            f"{where}: RIVAL10 column(s) missing: {', '.join(missing)} (rebuild it with "
            "`bgbench convert rival10`)"
        )
        return
    schema = _schema_problems(features)
    if schema:
        result.problems.extend(f"{where}: {p}" for p in schema)
        return
    found: dict[str, list[str]] = defaultdict(list)
    for path in files:
        for batch in pq.ParquetFile(path).iter_batches(batch_size=64, columns=list(COLUMNS)):
            for row in batch.to_pylist():
                for kind, detail in _row_problems(row).items():
                    found[kind].append(f"{row['id']} ({detail})")
    for kind, rows in found.items():
        result.problems.append(f"{where}: {len(rows)} row(s) with {kind}, e.g. {rows[:EXAMPLES]}")
