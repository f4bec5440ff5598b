"""``bgbench report --task-option TASK.FLAG=VALUE``: a task's own options on the report's
command line (the Space's caps among them), read from each task's option declarations; and
the Space's report card's "Reproduce this" command, which gives them back."""

from __future__ import annotations

import json
import shlex

import pytest

from hf_bgbench.benchmarks import all_specs
from hf_bgbench.cli import build_parser, main
from hf_bgbench.report.card import ReportError, parse_data_pairs, run_report
from hf_bgbench.report.task_options import parse_task_options, task_option_text
from tests.model_fixtures import write_transformers_classifier

QUIET = {"progress": False, "num_workers": 0}


def _in9_model(folder):
    """A tiny transformers classifier over IN-9's nine classes (random weights, saved once:
    both runs below read the same ones)."""
    from hf_bgbench.benchmarks.in9.labels import in9_classes

    return write_transformers_classifier(folder, in9_classes()[0])


def test_the_command_line_task_options_give_the_python_apis_report(in9_release, tmp_path):
    model = str(_in9_model(tmp_path / "model"))
    caps = {
        "evaluate": {"variants": ["original", "mixed_same", "mixed_rand"]},  # the headlines'
        "challenge": {"max_foregrounds": 4, "max_backgrounds": 6},
    }
    run_report(
        model,
        tmp_path / "api",
        data={"in9": str(in9_release)},
        benchmarks=["in9"],
        task_options=caps,
        **QUIET,
    )
    argv = ["report", model, "--benchmarks", "in9", "--data", f"in9={in9_release}"]
    argv += ["--task-option", "evaluate.variants=original,mixed_same,mixed_rand"]
    argv += ["--task-option", "challenge.max-foregrounds=4"]
    argv += ["--task-option", "challenge.max_backgrounds=6"]  # a field's spelling works too
    assert main([*argv, "--output", str(tmp_path / "cli"), "--quiet", "--workers", "0"]) == 0
    api, cli = (json.loads((tmp_path / run / "report.json").read_text()) for run in ("api", "cli"))

    def numbers(doc):
        return [(r["key"], r["value"], r["ci95"], r["n"]) for r in doc["headlines"]]

    assert numbers(cli) == numbers(api)
    assert all(r["value"] is not None for r in cli["headlines"])  # every headline was run
    (bench,) = cli["benchmarks"]
    challenge = bench["tasks"]["challenge"]["results"]
    assert (challenge["n_foregrounds"], challenge["n_backgrounds"]) == (4, 6)
    assert set(bench["tasks"]["evaluate"]["results"]["variants"]) == set(
        caps["evaluate"]["variants"]
    )


def _space_allow_list(benchmarks):
    from hf_bgbench.space.checks.allowlist import AllowedDataset

    return {name: AllowedDataset(f"{name}-local", f"/srv/{name}", name) for name in benchmarks}


@pytest.mark.parametrize("covered", ["every", "in9"])
def test_the_space_report_command_reads_back_to_the_space_caps(covered):
    from hf_bgbench.space.views.report_card import report_caps
    from hf_bgbench.space.views.reproduce import report_command

    every = [s.name for s in all_specs() if s.report]
    allowed = _space_allow_list(every if covered == "every" else [covered])
    caps = report_caps(list(allowed))
    command = report_command("tf_efficientnet_lite0", allowed, caps)
    words = shlex.split(command)
    assert words[:3] == ["bgbench", "report", "tf_efficientnet_lite0"]
    args = build_parser().parse_args(words[1:])  # the command line takes it as it is
    # no server path: each folder by its allow-list name
    assert parse_data_pairs(args.data) == {name: f"{name}-local" for name in allowed}
    assert not any("/srv/" in w for w in words)
    assert args.benchmarks == (None if covered == "every" else [covered])
    read = parse_task_options(args.task_option, args.benchmarks)
    assert read == {task: options for task, options in caps.items() if options}
    assert set(read["challenge"]) == {"max_foregrounds", "max_backgrounds"}  # real caps


def test_a_cap_at_the_commands_default_is_left_out():
    from hf_bgbench.space.views.reproduce import report_command

    allowed = _space_allow_list(["in9"])
    caps = {"evaluate": {}, "challenge": {"max_foregrounds": 100, "full_matrix": False}}
    command = report_command("m", allowed, caps)
    assert command == (
        "bgbench report m --benchmarks in9 --data in9=in9-local "
        "--task-option challenge.max-foregrounds=100"
    )


@pytest.mark.parametrize(
    "pairs, expected",
    [
        (["noise.max-images=5"], {"noise": {"max_images": 5}}),
        (
            ["noise.levels=0.1,0.2", "noise.norm=l2"],
            {"noise": {"levels": ["0.1", "0.2"], "norm": "l2"}},
        ),
        (["challenge.no-cache=true"], {"challenge": {"use_cache": False}}),  # a negated switch
        (["challenge.full-matrix=false"], {"challenge": {"full_matrix": False}}),
        (
            ["saliency.method=gradcam++", "evaluate.label-map=model"],
            {"saliency": {"method": "gradcam++"}, "evaluate": {"label_map": "model"}},
        ),
    ],
)
def test_task_options_are_read_as_the_task_command_reads_them(pairs, expected):
    assert parse_task_options(pairs) == expected


@pytest.mark.parametrize(
    "task, name, value",
    [
        ("noise", "max_images", 7),
        ("noise", "levels", [0.1, 0.25]),
        ("challenge", "use_cache", False),
        ("challenge", "full_matrix", True),
        ("saliency", "method", "layercam"),
    ],
)
def test_task_option_text_is_read_back(task, name, value):
    (read,) = parse_task_options([task_option_text(task, name, value)]).values()
    expected = [str(v) for v in value] if isinstance(value, list) else value  # as argparse
    assert read == {name: expected}


@pytest.mark.parametrize(
    "pairs, message",
    [
        (["noise.max-images"], "give TASK.FLAG=VALUE"),
        (["max-images=3"], "give TASK.FLAG=VALUE"),
        (["nosie.max-images=3"], "'nosie' is not a task of this report (did you mean noise?)"),
        (["graying.max-images=3"], "its tasks: evaluate, challenge, noise, saliency"),
        (["noise.max-image=3"], "no flag --max-image (did you mean max-images?)"),
        (["challenge.use-cache=false"], "(did you mean no-cache?)"),
        (["noise.seed=3"], "the report sets it itself: give bgbench report --seed"),
        (["noise.output=x"], "the report sets it itself: give bgbench report --output"),
        (["challenge.foreground-variant=x"], "has no command-line flag"),
        (["noise.max-images=0"], "--max-images '0': must be 1 or more, got 0"),
        (["noise.max-images=many"], "--max-images 'many': invalid positive_int value"),
        (["noise.norm=l3"], "--norm 'l3': choose one of linf, l2"),
        (["challenge.full-matrix=yes"], "--full-matrix is a switch: give true or false"),
        (["noise.max-images=3", "noise.max_images=4"], "gives noise --max-images twice"),
    ],
)
def test_bad_task_options(pairs, message):
    with pytest.raises(ReportError) as caught:
        parse_task_options(pairs)
    assert message in str(caught.value)


def test_a_task_option_of_a_benchmark_left_out_is_refused():
    with pytest.raises(ReportError, match="its tasks: evaluate, challenge"):
        parse_task_options(["noise.max-images=3"], ["in9"])


def test_challenge_foregrounds_and_the_same_task_option_are_not_both_taken(tmp_path):
    with pytest.raises(ReportError, match="give one of them"):  # before the model loads
        run_report(
            "not-loaded",
            tmp_path,
            challenge_foregrounds=5,
            task_options={"challenge": {"max_foregrounds": 3}},
        )


def test_an_unknown_task_option_fails_before_any_work(tmp_path):
    with pytest.raises(ReportError, match="The noise task has no option"):
        run_report("not-loaded", tmp_path, task_options={"noise": {"max_imgs": 3}})
