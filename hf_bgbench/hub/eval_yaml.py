"""A benchmark dataset's ``eval.yaml``: what registers it as a Hub benchmark.

With it at the dataset repo's root (name, description, evaluation framework, tasks), the
scores that model repos publish in ``.eval_results/*.yaml`` for the dataset's id show on its
leaderboard and on each model's page. One task per leaderboard number of the spec
(:attr:`~hf_bgbench.spec.BenchmarkSpec.leaderboard`: higher-is-better numbers only, since a
Hub leaderboard ranks high first), each naming the config and split it is read from.

``bgbench publish --eval-yaml`` writes it; the Hub validates ``evaluation_framework`` against
the frameworks listed in huggingface.js, so it is uploaded only once ours is listed there
(:data:`FRAMEWORK_REGISTERED`), or when forced. docs/hub_benchmark.md holds the entry to
propose and the steps.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from hf_bgbench.spec import BenchmarkSpec

EVALUATION_FRAMEWORK = "hf-bgbench"
"""The framework id ``eval.yaml`` names."""

FRAMEWORK_REGISTERED = False
"""Whether :data:`EVALUATION_FRAMEWORK` is in huggingface.js ``packages/tasks/src/eval.ts``
(``EVALUATION_FRAMEWORKS``). Until it is, the Hub shows "YAML Metadata Error" on a dataset
whose ``eval.yaml`` names it, and no leaderboard: set this when the listing is merged."""

FRAMEWORK_ENTRY = {
    "name": EVALUATION_FRAMEWORK,
    "description": "hf-bgbench measures how much image classifiers rely on the background "
    "instead of the object, on the published background-reliance benchmarks.",
    "url": "https://huggingface.co/bgbench",  # the org that publishes the benchmark datasets
}
"""The ``EVALUATION_FRAMEWORKS`` entry to propose to huggingface.js (docs/hub_benchmark.md)."""


class EvalYamlRefused(ValueError):
    """``eval.yaml`` would break the dataset page (the framework is not listed yet)."""


def eval_yaml(spec: BenchmarkSpec) -> dict[str, Any]:
    """The ``eval.yaml`` that registers ``spec``'s Hub dataset as a benchmark: one task per
    leaderboard number (its id, name, config, split and what it measures)."""
    tasks = [
        {
            "id": h.eval_task_id,
            "name": h.label,
            "config": spec.leaderboard_config(h),
            "split": h.split,
            "description": (
                f"{h.description or h.label} ({_unit_words(h.unit)}; higher is better); "
                f"bgbench task `{h.task}`."
            ),
        }
        for h in spec.leaderboard
    ]
    return {
        "name": spec.title,
        "description": spec.description,
        "evaluation_framework": EVALUATION_FRAMEWORK,
        "tasks": tasks,
    }


def _unit_words(unit: str) -> str:
    return {"%": "percent, 0-100", "pts": "percentage points"}.get(unit, "a ratio, as is")


def check_registration(force: bool = False) -> None:
    """Refuse to publish an ``eval.yaml`` naming an unlisted framework unless ``force``."""
    if FRAMEWORK_REGISTERED or force:
        return
    raise EvalYamlRefused(
        f"--eval-yaml: the evaluation framework {EVALUATION_FRAMEWORK!r} is not yet listed in "
        "huggingface.js (packages/tasks/src/eval.ts), and the Hub marks a dataset whose "
        "eval.yaml names an unlisted framework with a YAML metadata error. Publish without "
        "--eval-yaml, or propose the listing first (docs/hub_benchmark.md); add "
        "--force-eval-yaml to upload it anyway, or --dry-run to write it for inspection."
    )


def write_eval_yaml(spec: BenchmarkSpec, folder: str | Path) -> Path | None:
    """Write ``eval.yaml`` at the root of a built dataset folder (None when the benchmark
    has no leaderboard numbers to declare)."""
    if not spec.leaderboard:
        return None
    path = Path(folder) / "eval.yaml"
    path.write_text(
        "# Registers this dataset as a Hub benchmark; scores from model repos'\n"
        "# .eval_results/*.yaml then show on its leaderboard (written by hf_bgbench).\n"
        + yaml.safe_dump(eval_yaml(spec), sort_keys=False, allow_unicode=True),
        encoding="utf-8",
    )
    return path
