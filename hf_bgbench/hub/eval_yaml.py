"""A benchmark dataset's ``eval.yaml``: what registers it as a Hub benchmark.

With it at the dataset repo's root (name, description, evaluation framework, tasks), the
scores that model repos publish in ``.eval_results/*.yaml`` for the dataset's id show on its
leaderboard and on each model's page. One task per report headline of the spec
(:attr:`~hf_bgbench.spec.BenchmarkSpec.report`); builders write it beside the dataset card.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from hf_bgbench.spec import BenchmarkSpec

EVALUATION_FRAMEWORK = "hf-bgbench"
"""The framework id ``eval.yaml`` names. The Hub validates it against the frameworks listed in
huggingface.js (``packages/tasks/src/eval.ts``); until hf-bgbench is listed there the Hub marks
the file invalid and shows no leaderboard -- the registration is a pull request to that list."""


def eval_yaml(spec: BenchmarkSpec) -> dict[str, Any]:
    """The ``eval.yaml`` that registers ``spec``'s Hub dataset as a benchmark: one task per
    report headline (its id, the dataset config it is read from, the test split)."""
    tasks = []
    for h in spec.report:
        variant = h.key.partition("/")[2] if h.key.startswith("accuracy/") else ""
        tasks.append(
            {
                "id": h.eval_task_id,
                "name": h.label,
                "config": variant or spec.reference_variant,
                "split": "test",
                "description": (
                    f"{h.description or h.label} ({_unit_words(h.unit)}; "
                    f"{_direction_words(h.reliance)}); bgbench task `{h.task}`."
                ),
            }
        )
    return {
        "name": spec.title,
        "description": spec.description,
        "evaluation_framework": EVALUATION_FRAMEWORK,
        "tasks": tasks,
    }


def _unit_words(unit: str) -> str:
    return {"%": "percent, 0-100", "pts": "percentage points"}.get(unit, "a ratio, as is")


def _direction_words(reliance: int) -> str:
    return {
        1: "lower means less reliance on the background",
        -1: "higher means less reliance on the background",
    }.get(reliance, "context for the other scores")


def write_eval_yaml(spec: BenchmarkSpec, folder: str | Path) -> Path | None:
    """Write ``eval.yaml`` at the root of a built dataset folder (None when the benchmark
    has no report headlines to declare)."""
    if not spec.report:
        return None
    path = Path(folder) / "eval.yaml"
    path.write_text(
        "# Registers this dataset as a Hub benchmark; scores from model repos'\n"
        "# .eval_results/*.yaml then show on its leaderboard (written by hf_bgbench).\n"
        + yaml.safe_dump(eval_yaml(spec), sort_keys=False, allow_unicode=True),
        encoding="utf-8",
    )
    return path
