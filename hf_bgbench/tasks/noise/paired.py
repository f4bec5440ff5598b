"""The ``noise`` task's per-image values, for ``bgbench publish-results`` (its split) and
``bgbench compare``: ``noise_images.parquet`` -> ``irfs`` = the image's iRFS averaged over
the levels (RFS itself is a ratio of class-mean accuracies, with no per-image form: its
instance-wise form is compared instead)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from hf_bgbench.tasks.noise.summary import PER_IMAGE_FILE
from hf_bgbench.tasks.per_image import read_per_image

# (key, label, unit, reliance): a higher iRFS means the model leans less on the background


def per_image_files(doc: Mapping[str, Any]) -> dict[str, str]:
    return {"noise": str(doc.get("per_image_file") or PER_IMAGE_FILE)}


def paired_values(doc: Mapping[str, Any], folder: Path) -> dict[str, pd.Series]:
    (rel,) = per_image_files(doc).values()
    frame = read_per_image(folder / rel)
    return {"irfs": frame.groupby("id")["irfs"].mean().astype(float)}
