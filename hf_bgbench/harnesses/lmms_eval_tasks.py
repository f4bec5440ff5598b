"""bgbench's benchmarks as lmms-eval tasks: the YAML files (written from each benchmark's
spec, never by hand) and the functions they name.

Per benchmark and rule, one task per variant (``bgbench_in9_open_mixed_rand``) and one group
(``bgbench_in9_open``) whose aggregations are the benchmark's accuracy gaps (BG-GAP =
acc(mixed_same) - acc(mixed_rand), lower is better). lmms-eval aggregates a group from its
subtasks' numbers alone (never their names), so a gap is a sum of signed terms: the minuend's
task reports its accuracy under the gap's name, the subtrahend's task minus its accuracy,
and the group adds them. The terms have no standard error (a sum of two accuracies' pooled
error would be a wrong one), so lmms-eval prints N/A beside them.

The question of each image and the verdict on its answer come from bgbench's own rules
(:mod:`hf_bgbench.harnesses.asking`): the same prompt text and the same answer reading as
``bgbench evaluate --vlm-protocol <rule>``. The model wrapper applies its chat template to the
image and that text (one user turn: the image, then the text), as bgbench does."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from hf_bgbench.benchmarks import all_specs, get_benchmark
from hf_bgbench.harnesses.asking import AskedRule, asked_rule, harness_rules
from hf_bgbench.models.vlm.settings import PAIR
from hf_bgbench.scoring import AccuracyGap
from hf_bgbench.spec import BenchmarkSpec

SPLIT = "test"
PACKAGED_TASKS = Path(__file__).resolve().parents[1] / "lmms_eval_plugin" / "tasks"
"""The plugin's task folders (``hf_bgbench.lmms_eval_plugin.TASKS``, which imports nothing
of bgbench: the tasks' own ``utils.py`` import this module)."""
GENERATED = "# Written by `bgbench export lmms-eval` from bgbench's benchmark spec: do not edit."


def identifier(text: str) -> str:
    """A name lmms-eval takes as a task or metric name: lower case, letters, digits, ``_``."""
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def task_name(benchmark: str, rule: str, variant: str | None = None) -> str:
    parts = ["bgbench", benchmark, rule] + ([variant] if variant else [])
    return "_".join(identifier(p) for p in parts)


def gaps(spec: BenchmarkSpec) -> list[AccuracyGap]:
    """The benchmark's accuracy gaps: what a group aggregates."""
    return [m for m in spec.metrics if isinstance(m, AccuracyGap)]


# ---- the functions a task's YAML names (through its folder's utils.py) -------------------


class TaskFunctions:
    """What one benchmark's rule gives lmms-eval: the image, the question text and the
    per-document numbers (``accuracy``, ``no_answer``, and each gap's term)."""

    def __init__(self, benchmark: str, rule: str):
        self.benchmark = benchmark
        self.rule_name = rule

    @property
    def rule(self) -> AskedRule:
        return asked_rule(self.benchmark, self.rule_name)  # built on first use, then cached

    def doc_to_visual(self, doc: Mapping[str, Any]) -> list:
        return [doc["image"].convert("RGB")]

    def doc_to_text(self, doc: Mapping[str, Any], lmms_eval_specific_kwargs: Any = None) -> str:
        (text,) = self.rule.questions(doc)  # one question: the harness asks once per image
        return text

    def process_results(
        self, doc: Mapping[str, Any], results: Sequence[Any], variant: str = ""
    ) -> dict[str, Any]:
        """``accuracy`` (None where the rule leaves the image out), ``no_answer``, and the
        gap terms ``variant`` takes part in: only the task's own metrics (lmms-eval lists any
        other key it is given as a number of the task)."""
        answer = results[0] if results else None
        text = answer if isinstance(answer, str) else getattr(answer, "text", None)
        verdict = self.rule.verdict([text], doc)
        correct = float(verdict.correct) if verdict.counted else None
        out: dict[str, Any] = {"accuracy": correct, "no_answer": float(verdict.pred is None)}
        for gap in gaps(get_benchmark(self.benchmark)):
            if variant in gap.variants:
                out[identifier(gap.name)] = correct
        return out

    def results_of(self, variant: str) -> Callable[..., dict[str, Any]]:
        """:meth:`process_results` of ``variant``'s task."""
        return functools.partial(self.process_results, variant=variant)


def counted_mean(items: Sequence[float | None]) -> float | None:
    """The mean over the documents the rule counts (``pair`` leaves some out)."""
    counted = [x for x in items if x is not None]
    return sum(counted) / len(counted) if counted else None


def negated_counted_mean(items: Sequence[float | None]) -> float | None:
    """Minus :func:`counted_mean`: a gap's subtrahend term."""
    mean = counted_mean(items)
    return None if mean is None else -mean


def sum_of_terms(metrics: Sequence[float | None], sizes: Any = None, weight: Any = None) -> Any:
    """A group's gap: the sum of its subtasks' signed terms (None if one is missing)."""
    return None if any(m is None for m in metrics) else float(sum(metrics))


# ---- the YAML files --------------------------------------------------------------------


def _yaml(lines: Mapping[str, Any]) -> str:
    """YAML of ``lines`` (values as JSON, which YAML reads; ``!function`` values as given)."""
    out = [GENERATED]
    for key, value in lines.items():
        if isinstance(value, str) and value.startswith("!function "):
            out.append(f"{key}: {value}")
        else:
            out.append(f"{key}: {json.dumps(value)}")
    return "\n".join(out) + "\n"


def _metric_list(spec: BenchmarkSpec, rule: AskedRule, variant: str) -> list[str]:
    fn = "mean" if rule.name != PAIR else "!function utils.counted_mean"
    items = [("accuracy", fn, True), ("no_answer", "mean", False)]
    for gap in gaps(spec):
        if variant == gap.minuend:
            items.append((identifier(gap.name), "!function utils.counted_mean", False))
        elif variant == gap.subtrahend:
            items.append((identifier(gap.name), "!function utils.negated_counted_mean", False))
    lines = ["metric_list:"]
    for metric, aggregation, higher in items:
        agg = aggregation if aggregation.startswith("!") else json.dumps(aggregation)
        lines += [f"  - metric: {metric}", f"    aggregation: {agg}"]
        lines.append(f"    higher_is_better: {str(higher).lower()}")
    return lines


def task_yaml(spec: BenchmarkSpec, rule: AskedRule, variant: str) -> str:
    """One variant's task: the template, its data config and its numbers."""
    prefix = identifier(rule.name)
    head = _yaml(
        {
            "include": "_default_template_yaml",
            "task": task_name(spec.name, rule.name, variant),
            "tag": [f"bgbench_{identifier(spec.name)}", "bgbench"],
            "dataset_name": variant,
            "doc_to_text": f"!function utils.{prefix}_doc_to_text",
            "process_results": f"!function utils.{prefix}_{identifier(variant)}_results",
        }
    )
    return head + "\n".join(_metric_list(spec, rule, variant)) + "\n"


def template_yaml(spec: BenchmarkSpec, dataset_path: str, rule: AskedRule) -> str:
    """What every task of a benchmark shares: its data, the image, how it generates."""
    return _yaml(
        {
            "dataset_path": dataset_path,
            "dataset_kwargs": {},
            "test_split": SPLIT,
            "output_type": "generate_until",
            "doc_to_visual": "!function utils.doc_to_visual",
            "doc_to_target": "label",
            "generation_kwargs": {  # greedy, every token kept: bgbench's generation
                "until": [],
                "max_new_tokens": rule.max_new_tokens,
                "temperature": 0,
                "do_sample": False,
                "num_beams": 1,
                "top_p": None,
            },
            "metadata": {"version": 1.0, "benchmark": spec.name, "source": "bgbench"},
        }
    )


def group_yaml(spec: BenchmarkSpec, rule: AskedRule) -> str:
    """The rule's group over every variant, aggregating the benchmark's gaps."""
    text = _yaml(
        {
            "group": task_name(spec.name, rule.name),
            "task": [task_name(spec.name, rule.name, v) for v in spec.variants],
            "metadata": {
                "version": 1.0,
                "rule": rule.name,
                "protocol": rule.protocol,
                "gaps": {
                    identifier(g.name): f"acc({g.minuend}) - acc({g.subtrahend})"
                    for g in gaps(spec)
                },
            },
        }
    )
    if not gaps(spec):
        return text
    lines = ["aggregate_metric_list:"]
    for gap in gaps(spec):
        lines += [
            f"  - metric: {identifier(gap.name)}",
            "    aggregation: !function utils.sum_of_terms",
            "    weight_by_size: false",
        ]
    return text + "\n".join(lines) + "\n"


UTILS_PY = f'''{GENERATED}
"""lmms-eval's functions of the tasks in this folder: bgbench's rules on the benchmark its
_default_template_yaml names (:func:`hf_bgbench.harnesses.lmms_eval_tasks.task_function`)."""

from hf_bgbench.harnesses.lmms_eval_tasks import task_function


def __getattr__(name: str):
    return task_function(__file__, name)
'''


class _TemplateLoader(yaml.SafeLoader):
    """Reads a task template, its ``!function`` values as their names."""


_TemplateLoader.add_constructor("!function", lambda loader, node: loader.construct_scalar(node))


@functools.cache
def folder_functions(folder: str) -> dict[str, Callable[..., Any]]:
    """Name -> function of every name a task folder's YAML files give as ``utils.<name>``:
    the benchmark is the one its template names."""
    template = yaml.load((Path(folder) / "_default_template_yaml").read_text(), _TemplateLoader)
    spec = get_benchmark(template["metadata"]["benchmark"])
    functions: dict[str, Callable[..., Any]] = {
        "counted_mean": counted_mean,
        "negated_counted_mean": negated_counted_mean,
        "sum_of_terms": sum_of_terms,
    }
    for rule in harness_rules(spec):
        task = TaskFunctions(spec.name, rule)
        functions["doc_to_visual"] = task.doc_to_visual
        functions[f"{identifier(rule)}_doc_to_text"] = task.doc_to_text
        for variant in spec.variants:
            functions[f"{identifier(rule)}_{identifier(variant)}_results"] = task.results_of(
                variant
            )
    return functions


def task_function(utils_file: str, name: str) -> Callable[..., Any]:
    """The function ``name`` of the task folder holding ``utils_file`` (its ``utils.py``)."""
    functions = folder_functions(str(Path(utils_file).resolve().parent))
    if name not in functions:
        raise AttributeError(f"{utils_file} has no function {name!r}")
    return functions[name]


def benchmark_files(spec: BenchmarkSpec, dataset_path: str | None = None) -> dict[str, str]:
    """File name -> text of ``spec``'s task folder, the data read from ``dataset_path``
    (None: the benchmark's Hub dataset id)."""
    rules = harness_rules(spec)
    built = [asked_rule(spec.name, r) for r in rules]
    files = {
        "_default_template_yaml": template_yaml(spec, dataset_path or spec.hub_repo, built[0]),
        "utils.py": UTILS_PY,
    }
    for rule in built:
        files[f"{task_name(spec.name, rule.name)}.yaml"] = group_yaml(spec, rule)
        for variant in spec.variants:
            files[f"{task_name(spec.name, rule.name, variant)}.yaml"] = task_yaml(
                spec, rule, variant
            )
    return files


def folder_name(spec: BenchmarkSpec) -> str:
    return f"bgbench_{identifier(spec.name)}"


def harness_specs() -> list[BenchmarkSpec]:
    """The benchmarks that become tasks: every one with a Hub dataset of one config per
    variant (an lmms-eval task loads a config)."""
    return [s for s in all_specs() if s.hub_repo and s.hub_variant_configs]


def check_harness_spec(spec: BenchmarkSpec) -> None:
    """Refuse, saying why, a benchmark whose data no lmms-eval task can load."""
    if not spec.hub_variant_configs:
        raise ValueError(
            f"{spec.short_name}'s data ({spec.hub_repo}) is one table that bgbench's own reader "
            "splits into variants, not one dataset config per variant, and an lmms-eval task "
            f"loads a config: score it with `bgbench evaluate MODEL --benchmark {spec.name}` "
            "(served models too: openai:<name> --api-base URL)."
        )


def write_tasks(
    out: str | Path, benchmarks: Sequence[str] | None = None, dataset_path: str | None = None
) -> list[Path]:
    """Write the task folders of ``benchmarks`` (None: all) under ``out``; the folders."""
    specs = [get_benchmark(b) for b in benchmarks] if benchmarks else harness_specs()
    for spec in specs:
        check_harness_spec(spec)
    written = []
    for spec in specs:
        folder = Path(out) / folder_name(spec)
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in benchmark_files(spec, dataset_path).items():
            (folder / name).write_text(text, encoding="utf-8")
        written.append(folder)
    return written


def task_data_path(benchmark: str, data: str) -> str:
    """What a task's ``dataset_path`` holds for ``data``: a Hub dataset id as given, a local
    folder in the Hub layout as its absolute path (refused, saying why, when it is neither or
    declares none of the benchmark's variants)."""
    from hf_bgbench.data.hub import card_configs, looks_like_repo_id

    spec = get_benchmark(benchmark)
    folder = Path(data).expanduser()
    if not folder.exists():
        if looks_like_repo_id(data):
            return data
        raise ValueError(f"--data {data}: no such folder, and not a Hub dataset id (OWNER/NAME).")
    configs = card_configs(folder) if folder.is_dir() else []
    if not configs:
        makes = " or ".join(f"`{c}`" for c in spec.build_commands) or "`hf download`"
        raise ValueError(
            f"--data {data}: not a folder in the Hub layout (a README.md declaring 'configs:' "
            f"beside Parquet files). Write one with {makes}."
        )
    known = [v for v in spec.variants if v in configs]
    if not known:
        raise ValueError(
            f"--data {data}: its README.md declares the configs {', '.join(configs)}, none of "
            f"which is a {spec.name} variant ({', '.join(spec.variants)})."
        )
    return str(folder.resolve())
