"""What a task's ``paired`` hook (:class:`~hf_bgbench.tasks.runner.Task`) builds on: reading
one per-image file of a run folder, and the error that says two runs cannot be compared
image by image. ``bgbench compare`` (:mod:`hf_bgbench.report.compare`) calls the hooks; they
live in the tasks' folders, which cannot import the report (it runs the tasks)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd


class CompareError(ValueError):
    """Two runs that cannot be compared image by image (the message names why)."""


def read_per_image(path: Path) -> pd.DataFrame:
    """The per-image file ``path`` of a run folder, its ids checked: each image once (a file
    with a ``level`` column holds one row per image and level)."""
    if not path.is_file():
        raise CompareError(
            f"{path} is missing: the comparison needs the run's per-image file. Compare "
            "the folder a bgbench command wrote, as it wrote it."
        )
    frame = pd.read_parquet(path)
    if frame["id"].duplicated().any() and "level" not in frame:
        dup = frame.loc[frame["id"].duplicated(), "id"].iloc[0]
        raise CompareError(f"{path}: image id {dup!r} appears twice; the file was edited.")
    return frame
