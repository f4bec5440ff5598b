"""Typed protocol settings: a benchmark's protocols write plain mappings,
each task's frozen settings dataclass types them when the benchmark registers -- an unknown
key, a wrong type or a missing value fails there, naming the benchmark, the protocol, the
task and the key -- and a run records the typed values, with the keys its benchmark wrote."""

from __future__ import annotations

import dataclasses
import json

import pytest

from hf_bgbench import benchmarks
from hf_bgbench.benchmarks import all_specs, get_benchmark, list_benchmarks, register, unregister
from hf_bgbench.probe.adam_head import ADAM_RECIPE, check_recipe
from hf_bgbench.spec import Protocol
from hf_bgbench.tasks import all_tasks, get_task, register_task
from hf_bgbench.tasks.protocol_settings import (
    ProtocolSettingsError,
    check_protocols,
    typed_protocol,
)

WHERE = "benchmark 'misspelt', protocol 'paper' of task '{task}': "


def _with_protocol(task: str, **settings) -> benchmarks.BenchmarkSpec:
    """RIVAL10's spec, renamed, whose one ``task`` protocol has ``settings``."""
    protocol = Protocol("paper", "a recipe with a slip in it", settings=settings)
    return dataclasses.replace(
        get_benchmark("rival10"), name="misspelt", protocols={task: (protocol,)}
    )


def test_every_protocol_is_typed_and_records_what_its_benchmark_wrote():
    """Every registered protocol (and every task's default, where a benchmark declares none)
    becomes its task's dataclass, recorded as the same JSON as the mapping -- key order
    included -- so that no results document changes."""
    checked = 0
    for spec in all_specs():
        for name in spec.tasks:
            task = get_task(name)
            for protocol in spec.protocols.get(name) or (spec.protocol_for(name),):
                typed = typed_protocol(spec, task, protocol)
                assert isinstance(typed.settings, task.settings)
                assert json.dumps(typed.record()) == json.dumps(protocol.record())
                checked += 1
    assert checked >= 20
    paper = typed_protocol(
        get_benchmark("rival10"), get_task("noise"), get_benchmark("rival10").protocol_for("noise")
    ).settings
    assert (paper.stretch, paper.aggregation, paper.head.recipe) == (
        (224, 224),
        "class-mean",
        "adam-augmented-v1",
    )
    assert (paper.noise_trials.paper, paper.noise_trials.authors_code) == (10, 1)


def test_an_undeclared_protocol_runs_and_records_the_tasks_defaults():
    """A benchmark that declares no noise recipe runs the task's own (class-mean), and its
    results say so."""
    spec = get_benchmark("watermark")
    default = spec.protocol_for("noise")
    typed = typed_protocol(spec, get_task("noise"), default)
    assert typed.record()["settings"] == {"aggregation": "class-mean"}
    assert typed_protocol(spec, get_task("evaluate"), default).record()["settings"] == {}


@pytest.mark.parametrize(
    "task, settings, message",
    [
        (
            "saliency",
            {"agregation": "class-mean"},
            "unknown setting 'agregation' (did you mean 'aggregation'? known: stretch, "
            "aggregation, head, paper_values).",
        ),
        (
            "saliency",
            {"aggregation": "class_mean"},
            "setting 'aggregation' must be one of 'class-mean', 'image-pooled', not str "
            "'class_mean'.",
        ),
        (
            "noise",
            {"stretch": (224,)},
            "setting 'stretch' must be tuple[int, int], not tuple (224,).",
        ),
        (
            "noise",
            {"stretch": (0, 224)},
            "setting 'stretch' must be a size (height, width) >= 1, not (0, 224).",
        ),
        (
            "evaluate",
            {"head": {"recipie": "adam-augmented-v1"}},
            "unknown setting 'head.recipie' (did you mean 'recipe'? known: recipe).",
        ),
        ("evaluate", {"head": {}}, "missing setting 'head.recipe' (required: recipe)."),
        (
            "evaluate",
            {"head": {"recipe": "adam"}},
            "setting 'head': unknown probe recipe 'adam'; choose one of linear-probe-v1, "
            "adam-augmented-v1 (default linear-probe-v1).",
        ),
        (
            "graying",
            {"paper_values": {"grey": (0.5, "Background set to grey")}},
            "setting 'paper_values' names 'grey', which is not an option of the graying task "
            "(did you mean 'gray'?).",
        ),
        (
            "noise",
            {"noise_trials": {"paper": 10}},
            "missing setting 'noise_trials.authors_code' (required: paper, authors_code).",
        ),
        (
            "noise",
            {"noise_trials": {"paper": True, "authors_code": 1}},
            "setting 'noise_trials.paper' must be int, not bool True.",
        ),
        (
            "evaluate",
            {"authors_normalisation": {"mean": (0.5, 0.5), "std": (1, 1, 1), "source": "x"}},
            "setting 'authors_normalisation.mean' must be tuple[float, float, float], not "
            "tuple (0.5, 0.5).",
        ),
    ],
    ids=lambda v: v if isinstance(v, str) and " " not in v else None,
)
def test_a_bad_setting_fails_at_registration_naming_it(task, settings, message):
    with pytest.raises(ProtocolSettingsError) as err:
        register(_with_protocol(task, **settings))
    assert str(err.value) == WHERE.format(task=task) + message
    assert "misspelt" not in list_benchmarks()  # refused: nothing half-registered


def test_protocols_for_a_task_the_benchmark_does_not_run_are_refused():
    with pytest.raises(ValueError, match="declares protocols for task 'salency', which is not"):
        dataclasses.replace(get_benchmark("rival10"), protocols={"salency": ()})
    twice = (Protocol("p", "one"), Protocol("p", "two"))
    with pytest.raises(ValueError, match="protocol 'p' is declared twice"):
        dataclasses.replace(get_benchmark("rival10"), protocols={"noise": twice})


def test_a_benchmark_registered_before_the_tasks_load_is_checked_when_they_do(monkeypatch):
    """The tasks install their check on import; a benchmark registered earlier (no check yet)
    is checked then."""
    monkeypatch.setattr(benchmarks, "_CHECKS", {})
    bad = register(_with_protocol("saliency", agregation="class-mean"))
    try:
        with pytest.raises(ProtocolSettingsError, match="unknown setting 'agregation'"):
            benchmarks.add_spec_check("protocol settings", lambda s: check_protocols(s, get_task))
    finally:
        unregister(bad.name)


def test_every_task_declares_a_frozen_settings_class_with_the_runners_fields():
    for task in all_tasks():
        fields = {f.name for f in dataclasses.fields(task.settings)}
        assert task.settings.__dataclass_params__.frozen and {"stretch", "head"} <= fields

    @dataclasses.dataclass(frozen=True)
    class NoHead:
        stretch: tuple[int, int] | None = None

    lacking = dataclasses.replace(get_task("graying"), name="no-head", settings=NoHead)
    with pytest.raises(ValueError, match=r"lacks the runner's field\(s\) head"):
        register_task(lacking)
    assert "no-head" not in [t.name for t in all_tasks()]


def test_the_adam_head_refuses_a_recipe_key_it_does_not_know():
    """A misspelt ``background`` would fit the ordinary head, not the grey-background one."""
    check_recipe(ADAM_RECIPE)
    check_recipe({**ADAM_RECIPE, "background": {"gray": 0.5}})
    with pytest.raises(ValueError, match="unknown key\\(s\\) backgound"):
        check_recipe({**ADAM_RECIPE, "backgound": {"gray": 0.5}})
    without = {k: v for k, v in ADAM_RECIPE.items() if k != "epochs"}
    with pytest.raises(ValueError, match="has no epochs"):
        check_recipe(without)
