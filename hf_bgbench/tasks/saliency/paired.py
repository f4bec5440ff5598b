"""The ``saliency`` task's per-image values, for ``bgbench publish-results`` (its split)
and ``bgbench compare``: ``saliency_per_image.parquet`` -> its per-image alignment scores."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from hf_bgbench.tasks.per_image import read_per_image
from hf_bgbench.tasks.saliency.options import PER_IMAGE_FILE

PAIRED_KEYS = ("delta_density", "saliency_fraction_inside", "saliency_iou")


def per_image_files(doc: Mapping[str, Any]) -> dict[str, str]:
    return {"saliency": PER_IMAGE_FILE}


def paired_values(doc: Mapping[str, Any], folder: Path) -> dict[str, pd.Series]:
    frame = read_per_image(folder / PER_IMAGE_FILE).set_index("id")
    return {k: frame[k].astype(float) for k in PAIRED_KEYS if k in frame}
