"""Per-image values of a run folder, the units a paired comparison resamples.

For each task the comparison understands, :func:`per_image_values` reads the run's per-image
file(s) and returns score key -> values indexed by image id, each a number whose mean over
the images is the score (or, for ``irfs``, the per-image form of the score):

* ``evaluate``: ``predictions/<variant>.parquet`` -> ``accuracy/<variant>`` = correct (0/1);
  each paired gap of the spec (BG-GAP, a DA per edit) = the difference of two variants'
  correctness on the same image; a mean drop (mean DA) = reference correctness minus the
  mean correctness over the averaged variants;
* ``challenge``: ``vulnerable.parquet`` -> ``challenge_accuracy`` = not vulnerable;
* ``noise``: ``noise_images.parquet`` -> ``irfs`` = the image's iRFS averaged over levels
  (RFS itself is a ratio of class-mean accuracies, with no per-image form);
* ``saliency``: ``saliency_per_image.parquet`` -> its per-image alignment scores.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from hf_bgbench.benchmarks import get_benchmark
from hf_bgbench.scoring import MeanDrop, PairedGap

SALIENCY_KEYS = ("delta_density", "saliency_fraction_inside", "saliency_iou")
COMPARABLE_TASKS = ("evaluate", "challenge", "noise", "saliency")


class CompareError(ValueError):
    """Two runs that cannot be compared image by image (the message names why)."""


def load_run(folder: str | Path) -> tuple[str, dict[str, Any], Path]:
    """("report" | "results", the document, its folder) of a report or results folder."""
    folder = Path(folder)
    if not folder.is_dir():
        raise CompareError(f"{folder} is not a folder; give a results or report folder.")
    report = folder / "report.json"
    if report.is_file():
        return "report", json.loads(report.read_text(encoding="utf-8")), folder
    for path in sorted(folder.glob("*.json")):
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            continue
        if isinstance(doc, dict) and "task" in doc and "schema_version" in doc:
            return "results", doc, folder
    raise CompareError(
        f"{folder} holds no bgbench results (no report.json nor a results document); give "
        "the --output folder of `bgbench report` or of a task command."
    )


def per_image_files(doc: Mapping[str, Any]) -> dict[str, str]:
    """Split name -> the run folder's per-image file (relative path) of a results document
    (what ``bgbench publish-results`` declares as the dataset's splits)."""
    task = doc.get("task")
    if task == "evaluate":
        return {v: f"predictions/{v}.parquet" for v in doc.get("variants", {})}
    if task == "challenge":
        return {"foregrounds": "vulnerable.parquet"}
    if task == "noise":
        return {"images": str(doc.get("per_image_file") or "noise_images.parquet")}
    if task == "saliency":
        return {"images": "saliency_per_image.parquet"}
    return {}


def _read(path: Path) -> pd.DataFrame:
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


def per_image_values(doc: Mapping[str, Any], folder: Path) -> dict[str, pd.Series]:
    """Score key -> per-image values (float, indexed by id) of the run in ``folder``, read
    from the files :func:`per_image_files` names."""
    task = doc.get("task")
    files = per_image_files(doc)
    if task not in COMPARABLE_TASKS or not files:
        raise CompareError(
            f"bgbench compare compares the tasks {', '.join(COMPARABLE_TASKS)}; this folder "
            f"holds a {task!r} run."
        )
    if task == "evaluate":
        return _evaluate(doc, {v: folder / rel for v, rel in files.items()})
    (rel,) = files.values()
    frame = _read(folder / rel)
    if task == "challenge":
        frame = frame.set_index("id")
        return {"challenge_accuracy": (~frame["vulnerable"].astype(bool)).astype(float)}
    if task == "noise":
        return {"irfs": frame.groupby("id")["irfs"].mean().astype(float)}
    frame = frame.set_index("id")  # saliency
    return {k: frame[k].astype(float) for k in SALIENCY_KEYS if k in frame}


def _evaluate(doc: Mapping[str, Any], files: Mapping[str, Path]) -> dict[str, pd.Series]:
    correct: dict[str, pd.Series] = {}
    for variant, path in files.items():
        frame = _read(path).set_index("id")
        correct[variant] = (frame["pred"] == frame["label"]).astype(float)
    out = {f"accuracy/{v}": c for v, c in correct.items()}
    spec = get_benchmark(doc["benchmark"])
    for metric in spec.metrics:
        if isinstance(metric, PairedGap) and {metric.minuend, metric.subtrahend} <= set(correct):
            a, b = correct[metric.minuend], correct[metric.subtrahend]
            shared = a.index.intersection(b.index)
            out[metric.name] = a[shared] - b[shared]
        elif isinstance(metric, MeanDrop) and metric.reference in correct:
            averaged = [v for v in doc.get(f"{metric.name}_variants", []) if v in correct]
            if averaged:
                table = pd.concat(
                    [correct[metric.reference], *(correct[v] for v in averaged)],
                    axis=1,
                    join="inner",
                )
                out[metric.name] = table.iloc[:, 0] - table.iloc[:, 1:].mean(axis=1)
    return out
