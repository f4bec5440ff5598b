"""The watermark benchmark's row check for ``bgbench validate`` (its layout's ``row_checks``).

The generic checks (:mod:`hf_bgbench.builders.validate`) cover the card (both configs,
split ``test``), labels in range (the 1000 ImageNet-1k classes), unique ids identical and in
the same order in both configs, and every image 224x224 (the spec's layout). Here, per row of
``watermark``: the image differs from the ``original`` of the same id only where the
package draws its text, and the watermark is seen somewhere (not every row unchanged).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq

from hf_bgbench.benchmarks.watermark.facts import CROP, ORIGINAL, WATERMARKED
from hf_bgbench.benchmarks.watermark.transform import (
    WatermarkPackageMissing,
    load_watermarker,
    text_mask,
)
from hf_bgbench.files import ImageDecodeError, open_image

EXAMPLES = 3


def _rows(files: Sequence[Path]) -> Iterator[tuple[str, np.ndarray]]:
    for path in files:
        for batch in pq.ParquetFile(path).iter_batches(batch_size=64, columns=["id", "image"]):
            data = batch.to_pydict()
            for image_id, image in zip(data["id"], data["image"], strict=True):
                try:  # an undecodable row is named by the generic checks
                    decoded = open_image(image, f"{path.name}, id {image_id!r}")
                except ImageDecodeError:
                    yield image_id, None
                    continue
                yield image_id, np.asarray(decoded.convert("RGB"))


def check_watermark_split(files: Sequence[Path], where: str, result: Any) -> None:
    """Compare each ``watermark`` row with its ``original`` (``where`` is "config/split")."""
    config, _, split = where.partition("/")
    if config != WATERMARKED or not files:
        return
    originals = sorted((Path(files[0]).parent.parent / ORIGINAL).glob(f"{split}-*.parquet"))
    if not originals:
        return  # the generic checks report the missing config
    try:
        allowed = text_mask(load_watermarker(CROP))
    except WatermarkPackageMissing as err:
        result.notes.append(f"{where}: pixels not compared with {ORIGINAL} ({err})")
        return
    outside, unchanged, compared = [], 0, 0
    for (wm_id, marked), (orig_id, plain) in zip(_rows(files), _rows(originals), strict=False):
        if wm_id != orig_id:
            break  # the generic id check reports the difference
        if marked is None or plain is None:
            continue  # the generic checks name the undecodable image
        if marked.shape != plain.shape or marked.shape[:2] != allowed.shape:
            continue  # the generic size check reports it
        changed = (marked != plain).any(axis=2)
        compared += 1
        if (changed & ~allowed).any():
            outside.append(wm_id)
        unchanged += not changed.any()
    if outside:
        result.problems.append(
            f"{where}: {len(outside)} image(s) differ from {ORIGINAL} outside the watermark "
            f"text, e.g. {outside[:EXAMPLES]}"
        )
    if compared and unchanged == compared:
        result.problems.append(f"{where}: no image differs from {ORIGINAL} (no watermark)")
