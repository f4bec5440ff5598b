"""The package version and the versions of what a run's numbers can depend on, at the bottom
layer so the results format can record them."""

from __future__ import annotations

import platform
import sys
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

__version__ = "0.1.0"

SOFTWARE = (
    "torch",
    "torchvision",
    "timm",
    "transformers",
    "open_clip_torch",
    "datasets",
    "numpy",
    "pillow",
    "opencv-python-headless",
    "scikit-image",
    "grad-cam",
)
"""Distributions whose version can move a number: the models' code and weights loading
(torch, timm, transformers, open_clip), decoding and resizing (Pillow, OpenCV, torchvision),
masks and saliency (scikit-image, grad-cam), the data (datasets) and the arithmetic (numpy)."""


@lru_cache(maxsize=1)
def software_versions() -> dict[str, str]:
    """Python and the installed :data:`SOFTWARE` (read from the installed distributions'
    metadata, nothing imported), and CUDA's version where torch runs on a GPU: what a reader
    needs to reproduce a run's numbers to the last digit."""
    from importlib import metadata

    versions = {"python": platform.python_version()}
    for name in SOFTWARE:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    torch = sys.modules.get("torch")  # already imported by any run; never imported here
    if torch is not None and torch.cuda.is_available():  # the CUDA the GPU runs, not a build
        versions["cuda"] = str(torch.version.cuda)
    return versions


def software_text(software: Any) -> str:
    """A ``software`` record as prose: "Python 3.11.7, torch 2.14.1, timm 1.0.31, ..."; ""
    for a document written before runs recorded it."""
    if not isinstance(software, Mapping):
        return ""
    return ", ".join(f"{'Python' if k == 'python' else k} {v}" for k, v in software.items())
