"""An image as the page shows it: read from a benchmark's data, named by its class, as a
thumbnail, and as a data URI for an ``<img>`` in HTML (Explore, the samples after a run, the
images behind a gap)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from hf_bgbench.benchmarks import BenchmarkSpec
from hf_bgbench.data.sources import Reader, resolve_source

THUMBNAIL = 224  # longest side of an image shown in a gallery


def open_reader(data: Reader | str | Path, spec: BenchmarkSpec) -> Reader:
    """``data`` as a reader of ``spec``'s benchmark (a reader given stays as it is)."""
    return data if isinstance(data, Reader) else resolve_source(data, spec)


def class_name(spec: BenchmarkSpec, label: int) -> str:
    """The class name of ``label``, or a note that it lies outside the benchmark's classes
    (a 1000-class model's prediction none of them stands for: counted wrong)."""
    if 0 <= label < spec.num_classes:
        return spec.classes[label]
    return f"none of {spec.short_name}'s classes"


def thumbnail(image: Any) -> np.ndarray:
    """``image`` (PIL or array) as an RGB array at most ``THUMBNAIL`` pixels a side."""
    from PIL import Image

    picture = image if isinstance(image, Image.Image) else Image.fromarray(image)
    picture = picture.convert("RGB")
    picture.thumbnail((THUMBNAIL, THUMBNAIL))
    return np.asarray(picture)


def data_uri(image: np.ndarray) -> str:
    """``image`` as a PNG data URI, for an ``<img>`` in HTML."""
    import base64
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(image).save(buffer, format="JPEG", quality=85)
    return "data:image/jpeg;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")
