"""The ``challenge`` task's per-image values, for ``bgbench publish-results`` (its split)
and ``bgbench compare``: ``vulnerable.parquet`` -> ``challenge_accuracy`` = not vulnerable
(one value per foreground)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from hf_bgbench.tasks.per_image import read_per_image

PER_FOREGROUND_FILE = "vulnerable.parquet"


def per_image_files(doc: Mapping[str, Any]) -> dict[str, str]:
    return {"challenge": PER_FOREGROUND_FILE}


def paired_values(doc: Mapping[str, Any], folder: Path) -> dict[str, pd.Series]:
    frame = read_per_image(folder / PER_FOREGROUND_FILE).set_index("id")
    return {"challenge_accuracy": (~frame["vulnerable"].astype(bool)).astype(float)}
