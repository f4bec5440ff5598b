"""Every task's documents, pinned: one run per task on the synthetic fixtures with a rule-built
model (exact numbers, no floating-point luck), its results JSON, Markdown report, model-index
YAML and per-image tables compared with the copies in tests/golden/<task>/.

What may differ between two honest runs is masked first (the clock, the software versions,
the temporary folders, timings, memory); numbers are compared to 1e-6 relative (float32
kernels differ in the last bits between CPUs). A change to what a
task writes is a change to these files: after checking the new documents by eye, write them
again with ``BGBENCH_UPDATE_GOLDEN=1 python -m pytest tests/test_golden_documents.py``.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("BGBENCH_UPDATE_GOLDEN") == "1"
# values that change from run to run, by key, wherever they sit in a document
VOLATILE_KEYS = {
    "created",
    "software",
    "hf_bgbench_version",
    "location",
    "seconds",
    "timing",
    "memory",
}
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")
COMMON = {"progress": False, "num_workers": 0, "device": "cpu"}
UNCACHED = {**COMMON, "use_cache": False}  # the session's cache would serve other tests


def _evaluate(in9: Path, out: Path) -> None:
    from hf_bgbench.tasks.evaluate import evaluate_model
    from tests.in9_fixture import ColourRuleClassifier

    evaluate_model(ColourRuleClassifier(), "in9", str(in9), output_dir=out, **UNCACHED)


def _challenge(in9: Path, out: Path) -> None:
    from hf_bgbench.tasks.challenge import run_challenge
    from tests.in9_fixture import ColourRuleClassifier

    run_challenge(ColourRuleClassifier(), str(in9), output_dir=out, **UNCACHED)


def _noise(in9: Path, out: Path) -> None:
    from hf_bgbench.tasks.noise import run_noise
    from tests.test_noise import RegionRule

    options = {**COMMON, "levels": [30, 120], "trials": 2}
    run_noise(RegionRule("bg"), str(in9), output_dir=out, **options)


def _graying(in9: Path, out: Path) -> None:
    from hf_bgbench.tasks.graying import run_graying
    from tests.test_noise import RegionRule

    run_graying(RegionRule("bg"), str(in9), output_dir=out, **COMMON)


def _saliency(in9: Path, out: Path) -> None:
    from hf_bgbench.tasks.saliency import run_saliency
    from tests.test_saliency import GreyClassifier

    run_saliency(GreyClassifier("object"), str(in9), output_dir=out, batch_size=5, **COMMON)


def _attribution(rival10: Path, out: Path) -> None:
    from hf_bgbench.tasks.attribution import run_attribution
    from tests.test_attribution import spot_classifier

    options = {**COMMON, "batch_size": 4, "benchmark": "rival10", "label_map": "imagenet"}
    run_attribution(spot_classifier(), str(rival10), output_dir=out, **options)


RUNS: dict[str, tuple[str, Callable[[Path, Path], None]]] = {
    "evaluate": ("in9_release", _evaluate),
    "challenge": ("in9_release", _challenge),
    "noise": ("in9_release", _noise),
    "graying": ("in9_release", _graying),
    "saliency": ("in9_release", _saliency),
    "attribution": ("rival10_release", _attribution),
}


def _masked(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: "<masked>" if k in VOLATILE_KEYS else _masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v) for v in value]
    return value


def _data_fingerprints(folder: Path) -> set[str]:
    """The data's fingerprints a run recorded: they hash the data's path too."""
    found = set()
    for path in folder.glob("*.json"):
        data = json.loads(path.read_text()).get("data")
        if isinstance(data, dict) and data.get("fingerprint"):
            found.add(data["fingerprint"])
    return found


def _text(path: Path, run_folder: Path, data: Path) -> str:
    """A written file as text, its run-to-run differences masked."""
    if path.suffix == ".parquet":
        return pd.read_parquet(path).to_csv(index=False, float_format="%.12g")
    text = path.read_text()
    if path.suffix == ".json":
        text = json.dumps(_masked(json.loads(text)), indent=1, sort_keys=True)
    for fingerprint in _data_fingerprints(run_folder):
        text = text.replace(fingerprint, "<data fingerprint>")
    text = text.replace(str(run_folder), "<run>").replace(str(data.resolve()), "<data>")
    text = text.replace(str(data), "<data>")
    text = re.sub(r"\d{4}-\d\d-\d\dT[\d:.]+(?:[+-]\d\d:\d\d|Z)?", "<time>", text)
    text = re.sub(r"(hf_bgbench|hf-bgbench) \d+\.\d+\.\d+\S*", r"\1 <version>", text)
    return text


def _documents(folder: Path, data: Path) -> dict[str, str]:
    # a Parquet table is kept as CSV text (<name>.parquet.csv), which a reviewer can read
    return {
        str(p.relative_to(folder)) + (".csv" if p.suffix == ".parquet" else ""): _text(
            p, folder, data
        )
        for p in sorted(folder.rglob("*"))
        if p.is_file()
        and p.suffix in {".json", ".md", ".yaml", ".parquet"}
        and not p.name.startswith(".")
    }


def _same_numbers(got: str, want: str) -> bool:
    """Equal text, and every number equal to 1e-6 relative."""
    if NUMBER.sub("#", got) != NUMBER.sub("#", want):
        return False
    pairs = zip(NUMBER.findall(got), NUMBER.findall(want), strict=True)
    return all(math.isclose(float(a), float(b), rel_tol=1e-6, abs_tol=1e-9) for a, b in pairs)


@pytest.mark.parametrize("task", list(RUNS))
def test_a_task_writes_the_pinned_documents(task, request, tmp_path):
    fixture, run = RUNS[task]
    data = request.getfixturevalue(fixture)
    run(data, tmp_path)
    got = _documents(tmp_path, data)
    folder = GOLDEN / task
    if UPDATE:
        for name, text in got.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(text)
    want = {str(p.relative_to(folder)): p.read_text() for p in folder.rglob("*") if p.is_file()}
    assert sorted(got) == sorted(want), f"{task} wrote other files than tests/golden/{task}/"
    changed = [name for name in got if not _same_numbers(got[name], want[name])]
    assert not changed, f"{task}: {changed} differ from tests/golden/{task}/ (module docstring)"
