"""ImageNet-E's own checks for ``bgbench validate`` (the layout's ``row_checks``).

The generic checks (:mod:`hf_bgbench.builders.validate`) already cover the card (the
``original`` config required, missing edits noted), split ``test``, labels in range (the
1000 ImageNet-1k classes), unique ids identical across edits, and each mask (where present)
a binary "L" image of the image's size. Here, per edit config: the shared columns
``object_pixel_rate`` (float) and ``edit_params`` (string), and per row: the rate is NaN or
in [0, 1], ``edit_params`` is a JSON object, and where both a mask and a rate are there the
rate is the mask's foreground fraction (within 0.01).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from hf_bgbench.benchmarks.imagenet_e.release import EDIT_PARAMS, OBJECT_PIXEL_RATE
from hf_bgbench.files import ImageDecodeError, open_image

EXAMPLES = 3
RATE_TOLERANCE = 0.01


def _schema_problems(schema: pa.Schema) -> list[str]:
    problems = []
    if OBJECT_PIXEL_RATE not in schema.names:
        problems.append(f"no {OBJECT_PIXEL_RATE!r} column (float32; NaN when unknown)")
    elif not pa.types.is_floating(schema.field(OBJECT_PIXEL_RATE).type):
        problems.append(
            f"{OBJECT_PIXEL_RATE!r} is {schema.field(OBJECT_PIXEL_RATE).type}, not float"
        )
    if EDIT_PARAMS not in schema.names:
        problems.append(f"no {EDIT_PARAMS!r} column (JSON string; '{{}}' when unknown)")
    elif not pa.types.is_string(schema.field(EDIT_PARAMS).type):
        problems.append(f"{EDIT_PARAMS!r} is {schema.field(EDIT_PARAMS).type}, not a string")
    return problems


def _foreground_fraction(mask: dict[str, Any], where: str) -> float | None:
    """The mask's share of object pixels; None when it cannot be decoded (the generic
    checks name it)."""
    try:
        return float((np.asarray(open_image(mask, where).convert("L")) > 0).mean())
    except ImageDecodeError:
        return None


def check_imagenet_e_split(files: list[Path], where: str, result: Any) -> None:
    """Append to ``result.problems`` what is wrong with one edit config/split."""
    schema = pq.read_schema(files[0])
    problems = _schema_problems(schema)
    if problems:
        result.problems += [f"{where}: {p}" for p in problems]
        return
    columns = ["id", OBJECT_PIXEL_RATE, EDIT_PARAMS] + (["mask"] if "mask" in schema.names else [])
    bad_rate, bad_params, off = [], [], []
    for path in files:
        for batch in pq.ParquetFile(path).iter_batches(batch_size=256, columns=columns):
            data = batch.to_pydict()
            for i, image_id in enumerate(data["id"]):
                rate = data[OBJECT_PIXEL_RATE][i]
                known = rate is not None and not math.isnan(rate)
                if known and not 0.0 <= rate <= 1.0:
                    bad_rate.append(image_id)
                try:
                    params = json.loads(data[EDIT_PARAMS][i] or "")
                except ValueError:
                    params = None
                if not isinstance(params, dict):
                    bad_params.append(image_id)
                mask = data["mask"][i] if "mask" in data else None
                if known and mask is not None and mask.get("bytes"):
                    share = _foreground_fraction(mask, f"{path.name}, id {image_id!r}, mask")
                    if share is not None and abs(share - rate) > RATE_TOLERANCE:
                        off.append(image_id)
    if bad_rate:
        result.problems.append(
            f"{where}: {len(bad_rate)} {OBJECT_PIXEL_RATE} value(s) outside [0, 1], "
            f"e.g. {bad_rate[:EXAMPLES]}"
        )
    if bad_params:
        result.problems.append(
            f"{where}: {len(bad_params)} {EDIT_PARAMS} value(s) are not a JSON object, "
            f"e.g. {bad_params[:EXAMPLES]}"
        )
    if off:
        result.problems.append(
            f"{where}: {len(off)} {OBJECT_PIXEL_RATE} value(s) differ from the mask's "
            f"foreground fraction by more than {RATE_TOLERANCE}, e.g. {off[:EXAMPLES]}"
        )
