"""A new task is one folder and one line: a task defined here, outside the package (an options
class, a settings class and three hooks), registered with ``register_task``, runs from
``bgbench`` (its command is generated), from the Space's library side (its options, the job's
``run_task``, a leaderboard row) and from the report card (a headline of the toy benchmark
names it) -- with no edit anywhere in the package.

Hand computation (the toy benchmark of tests/test_toy_benchmark.py): the model answers "blue"
for every image, and ``clean``, the reference variant, holds 2 red, 2 green and 2 blue
images, so the task's ``reference_accuracy`` is 2/6 = 33.3%.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hf_bgbench.benchmarks import register, unregister
from hf_bgbench.builders.arguments import positive_int
from hf_bgbench.cli import build_parser, main
from hf_bgbench.results import Report, Score
from hf_bgbench.spec import Headline
from hf_bgbench.tasks.options import RunOptions, option, output_option
from hf_bgbench.tasks.protocol_settings import HeadSettings
from hf_bgbench.tasks.runner import Run, Summary, Task
from tests.test_toy_benchmark import TOY, _always_blue_model, _write_toy_release

NAME = "first-look"
CAP_ENV = "BGBENCH_SPACE_MAX_IMAGES_FIRST_LOOK"


@dataclass
class FirstLookOptions(RunOptions):
    """First look: the model's accuracy on the benchmark's reference variant (a task defined
    outside the package). Writes first-look.json, first-look.md and
    first-look_model_index.yaml to --output."""

    data: str | Path | None = option(None, "the benchmark's data: a folder or Hub dataset id")
    output_dir: Path | None = output_option("bgbench_first-look")
    seed: int = option(0, "seed of the --max-images subset (recorded)")
    max_images: int | None = option(
        None,
        "score a seeded subset of this many images (default: all)",
        parse=positive_int,
        space_cap=(CAP_ENV, 50),
    )


@dataclass(frozen=True)
class FirstLookSettings:
    """What a benchmark's first-look protocol may set: only what the runner reads."""

    stretch: tuple[int, int] | None = None
    head: HeadSettings | None = None


def prepare(run: Run) -> tuple[Any, list[int]]:
    ds = run.reader.load(run.spec.reference_variant)
    rows = run.subset(len(ds), run.options.max_images, what="images")
    run.start_model()
    return ds, rows


def compute(run: Run, work: tuple[Any, list[int]]) -> dict[str, Any]:
    ds, rows = work
    correct: list[bool] = []
    ids: list[str] = []
    skipped: list[dict[str, Any]] = []
    for batch in run.batches(ds, rows, skipped=skipped, desc="first look"):
        x = batch.images.to(run.step.device).float().div_(255)
        out = run.step.predict(x, batch.labels)
        correct += (out.pred == batch.labels.numpy()).tolist()
        ids += batch.ids
    return {"correct": correct, "ids": ids, "skipped": skipped}


def summarise(run: Run, work: Any, out: dict[str, Any]) -> Summary:
    n = len(out["correct"])
    accuracy = sum(out["correct"]) / n
    score = Score(
        "reference_accuracy", "accuracy on the reference variant", accuracy, n=n, headline=True
    )
    body = run.body(
        {"reference_accuracy": accuracy, "n": n},
        variant=run.spec.reference_variant,
        max_images=run.options.max_images,
        # what a capped run drew: the leaderboard sees that a cap above the data's size left
        # no image out
        image_ids=out["ids"] if run.options.max_images is not None else None,
        skipped=out["skipped"],
        settings=run.settings(),
    )
    return Summary(body, Report(scores=[score]), head=["reference_accuracy"])


FIRST_LOOK = Task(
    name=NAME,
    description="accuracy on the benchmark's reference variant",
    options=FirstLookOptions,
    prepare=prepare,
    compute=compute,
    summarise=summarise,
    stem=NAME,
    outputs=(f"{NAME}.json", f"{NAME}.md", f"{NAME}_model_index.yaml"),
    gpu_batch_size=32,
    settings=FirstLookSettings,
    command_help="a first look: accuracy on the reference variant",
)

# the toy benchmark, offering the new task and with a headline from it
TOY_WITH_FIRST_LOOK = dataclasses.replace(
    TOY,
    tasks=("evaluate", NAME),
    report=(Headline(NAME, "reference_accuracy", "accuracy on clean", "%", config="clean"),),
)


@pytest.fixture
def first_look(monkeypatch):
    """The task registered in a copy of the registry (the built-in order untouched, nothing
    left registered after the test) and the toy benchmark that offers it."""
    import hf_bgbench.tasks as tasks
    from hf_bgbench.tasks import register_task

    tasks.all_tasks()  # the built-in ones first, as always
    monkeypatch.setattr(tasks, "_TASKS", dict(tasks._TASKS))
    register_task(FIRST_LOOK)
    register(TOY_WITH_FIRST_LOOK)
    yield FIRST_LOOK
    unregister("toy")


@pytest.fixture
def toy_run(tmp_path):
    """(the toy release, the always-blue model)."""
    return _write_toy_release(tmp_path / "toy_release"), _always_blue_model(tmp_path / "blue")


def _commands() -> list[str]:
    (sub,) = [a for a in build_parser()._actions if a.dest == "command"]
    return list(sub.choices)


def test_a_registered_task_gets_its_command(first_look, toy_run, tmp_path, capsys):
    from hf_bgbench.tasks import BUILTIN

    commands = _commands()
    assert commands[: len(BUILTIN) + 1] == [*BUILTIN, NAME]  # after the built-in tasks
    with pytest.raises(SystemExit):
        main([NAME, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "First look: the model's accuracy on the benchmark's reference variant" in text
    assert "--max-images MAX_IMAGES score a seeded subset" in text
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "a first look: accuracy on the reference variant" in capsys.readouterr().out

    data, model = toy_run
    out = tmp_path / "cli"
    argv = [NAME, str(model), "--benchmark", "toy", "--data", str(data), "--output", str(out)]
    assert main([*argv, "--quiet", "--workers", "0"]) == 0
    printed = capsys.readouterr().out
    assert f"wrote {out / 'first-look.json'}, first-look.md, first-look_model_index.yaml" in printed
    results = json.loads((out / "first-look.json").read_text())
    assert results["task"] == NAME and results["benchmark"] == "toy"
    assert results["reference_accuracy"] == pytest.approx(2 / 6) and results["n"] == 6
    assert "accuracy on the reference variant" in (out / "first-look.md").read_text()


def test_a_benchmark_that_does_not_offer_it_refuses_it(first_look, toy_run, capsys):
    data, model = toy_run
    code = main([NAME, str(model), "--benchmark", "in9", "--data", str(data), "--quiet"])
    assert code == 2
    assert f"The '{NAME}' task does not apply to benchmark 'in9'" in capsys.readouterr().err


def test_the_space_runs_it(first_look, toy_run, tmp_path, monkeypatch):
    """What the Space's score job does: the task's options at the Space's caps (its
    ``space_cap``), ``run_task``, then the run's leaderboard row."""
    from hf_bgbench.space.settings import takes_variants, task_options
    from hf_bgbench.space.views.leaderboard import append_result, read_rows
    from hf_bgbench.space.views.report_card import report_caps
    from hf_bgbench.tasks import run_task

    monkeypatch.delenv(CAP_ENV, raising=False)
    data, model = toy_run
    assert not takes_variants(NAME)
    options = task_options(NAME, ["clean"], restrict=False)
    assert options == {"restrict_to_benchmark": False, "progress": True, "max_images": 50}
    assert report_caps(["toy"]) == {NAME: {"max_images": 50}}
    out = tmp_path / "space"
    options.update(benchmark="toy", data=str(data), output_dir=str(out), num_workers=0)
    results = run_task(NAME, str(model), **options)
    assert results["reference_accuracy"] == pytest.approx(2 / 6)
    assert (out / "first-look.json").is_file()
    row = append_result(tmp_path / "board", results, "toy-local")
    assert row["task"] == NAME and row["benchmark"] == "toy"
    assert read_rows(tmp_path / "board") == [row]


def test_the_report_card_runs_it(first_look, toy_run, tmp_path):
    data, model = toy_run
    out = tmp_path / "report"
    argv = ["report", str(model), "--benchmarks", "toy", "--data", f"toy={data}"]
    assert main([*argv, "--output", str(out), "--quiet", "--workers", "0"]) == 0
    doc = json.loads((out / "report.json").read_text())
    (headline,) = doc["headlines"]
    assert headline["task"] == NAME and headline["status"] == "run"
    assert headline["value"] == pytest.approx(100 * 2 / 6)
    assert (out / "toy" / NAME / "first-look.json").is_file()
    assert "accuracy on clean" in (out / "report.md").read_text()


def test_the_registry_is_left_as_it_was():
    """Run after the tests above: the task is gone again and the built-in order is kept."""
    from hf_bgbench.tasks import BUILTIN, list_tasks

    assert NAME not in list_tasks() and NAME not in _commands()
    assert _commands()[: len(BUILTIN)] == list(BUILTIN)
