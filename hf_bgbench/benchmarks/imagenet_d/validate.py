"""ImageNet-D's row check for ``bgbench validate`` (its layout's ``row_checks``): every row's
hard negative is an ImageNet-D class other than its own. The generic checks cover the card,
the three configs, split ``test``, labels in range and unique ids."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from hf_bgbench.benchmarks.imagenet_d.facts import CLEAN, NEGATIVE
from hf_bgbench.benchmarks.imagenet_d.labels import imagenet_d_classes

EXAMPLES = 3


def check_imagenet_d_split(files: Sequence[Path], where: str, result: Any) -> None:
    """Name the rows whose ``negative`` is missing, out of range or their own class (the
    clean photos have no question)."""
    if where.partition("/")[0] == CLEAN:
        return
    classes = len(imagenet_d_classes())
    bad: list[str] = []
    for path in files:
        if NEGATIVE not in pq.read_schema(path).names:
            result.problems.append(f"{where}: {Path(path).name} has no '{NEGATIVE}' column.")
            return
        rows = pq.read_table(path, columns=["id", "label", NEGATIVE]).to_pydict()
        for image_id, label, negative in zip(
            rows["id"], rows["label"], rows[NEGATIVE], strict=True
        ):
            if negative is None or not 0 <= negative < classes or negative == label:
                bad.append(image_id)
    if bad:
        result.problems.append(
            f"{where}: {len(bad)} row(s) have no valid hard negative (another ImageNet-D class), "
            f"e.g. {', '.join(bad[:EXAMPLES])}. Convert the release again with its questions/."
        )
