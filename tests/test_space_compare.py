"""The Space's research views: Compare (``bgbench compare`` as a tab,
its runs reused), the images behind BG-GAP, the exact command that reproduces a result,
the ImageNet-E task label, and what "Use via API" accepts."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from tests.in9_fixture import ColourRuleClassifier
from tests.test_space import _app_for, _final, _quiet

pytest.importorskip("gradio")

from hf_bgbench.space import settings  # noqa: E402
from hf_bgbench.space.checks import inputs  # noqa: E402
from hf_bgbench.space.jobs import running  # noqa: E402
from hf_bgbench.space.jobs.finished_runs import FinishedRuns  # noqa: E402
from hf_bgbench.space.page import tab_compare, tab_explore, tab_score  # noqa: E402
from hf_bgbench.space.page.demo import build_demo  # noqa: E402
from hf_bgbench.space.views import reproduce  # noqa: E402

COMPARE_OUTPUTS = ("status", "report", "plot", "files", "button")


class BackgroundRuleClassifier(ColourRuleClassifier):
    """The border's colour first, the centre's only on a border of no class colour: a model
    that reads the background (its BG-GAP is large)."""

    def __init__(self) -> None:
        super().__init__()
        self.model_id = "background-rule"

    def logits(self, x: torch.Tensor) -> torch.Tensor:
        border = x.clone()
        border[:, :, 96:128, 96:128] = x[:, :, :8, :8].mean(dim=(2, 3), keepdim=True)
        return super().logits(border)


RULES = {
    "tf_efficientnet_lite0": ColourRuleClassifier,
    "tf_efficientnet_lite1": BackgroundRuleClassifier,
}


def rule_run(task, model_id, options):
    from hf_bgbench.tasks import run_task

    model = RULES[model_id]()
    return run_task(task, model, **options | {"use_cache": False})


@pytest.fixture
def space(in9_release, tmp_path, monkeypatch):
    allow_list = f"in9-local={in9_release}"
    monkeypatch.setenv("BGBENCH_SPACE_DATASETS", allow_list)
    monkeypatch.setenv("BGBENCH_LEADERBOARD_DIR", str(tmp_path / "leaderboard"))
    _app_for(allow_list)
    calls: list = []
    hints: list = []  # (command, how) of each job: what a stop for time says

    def job_for(task, model_id, options, command="", **how):
        from hf_bgbench.space.jobs.process import ThreadJob

        calls.append((task, model_id, sorted(options.get("variants") or [])))
        hints.append((command, how))
        return ThreadJob(rule_run, (task, model_id, options), seconds=300)

    monkeypatch.setattr(running, "job_for", job_for)
    monkeypatch.setattr(running, "FINISHED", FinishedRuns())  # a fresh Space: no run to reuse
    return SimpleNamespace(job_calls=calls, job_hints=hints)


def _compared(a="tf_efficientnet_lite0", b="tf_efficientnet_lite1") -> dict:
    updates = tab_compare.compare_models(a, b, "in9-local", "in9", "evaluate", progress=_quiet)
    return dict(zip(COMPARE_OUTPUTS, _final(updates), strict=True))


def test_compare_is_bgbench_compare_over_the_two_runs(space, tmp_path):
    from hf_bgbench.cli import main

    out = _compared()
    assert "Done in" in out["status"], out["status"]
    # a stop for time would name each run's command; Compare offers no variants to drop
    for (command, how), model in zip(space.job_hints, RULES, strict=True):
        assert command.startswith(f"bgbench evaluate {model} --benchmark in9")
        assert how == {"variants_offered": False}
    files = {Path(f).name: Path(f) for f in out["files"]}
    assert set(files) == {"compare.json", "compare.md", "compare.png"}
    doc = json.loads(files["compare.json"].read_text())
    gap = next(r for r in doc["rows"] if r["key"] == "bg_gap")
    # the colour rule reads the object, the background rule the background: A relies less
    assert gap["difference"] < 0 and gap["ci95"][1] < 0
    assert gap["verdict"].startswith("A relies on backgrounds less than B: BG-GAP")
    assert gap["verdict"] in out["report"] and "<img " in out["plot"]
    # the same numbers as the command line's `bgbench compare` over the same two runs
    options = settings.task_options("evaluate", inputs.default_variants("in9-local", "in9"), False)
    options["benchmark"] = "in9"
    a, b = (running.FINISHED.find("evaluate", m, "in9-local", options) for m in RULES)
    assert main(["compare", str(a.folder), str(b.folder), "--output", str(tmp_path / "c")]) == 0
    cli = json.loads((tmp_path / "c" / "compare.json").read_text())
    assert [(r["key"], r["difference"], r["ci95"]) for r in cli["rows"]] == [
        (r["key"], r["difference"], r["ci95"]) for r in doc["rows"]
    ]
    # no server path in what the visitor reads or downloads
    for text in (out["report"], files["compare.json"].read_text(), files["compare.md"].read_text()):
        assert str(a.folder) not in text and "/tmp/" not in text
    # the commands that give the same compare.json: both runs, then bgbench compare
    commands = re.search(r"```bash\n(.*?)\n```", out["report"], re.S).group(1).splitlines()
    assert (
        commands[-1]
        == "bgbench compare bgbench_evaluate_a bgbench_evaluate_b --output bgbench_compare"
    )
    assert commands[0].startswith("bgbench evaluate tf_efficientnet_lite0 --benchmark in9")
    assert "--output bgbench_evaluate_a" in commands[0]


def test_compare_reuses_the_runs_this_space_finished(space):
    """Score's default run (the variants the headline reads) serves Compare, which scores
    those same variants and says so, instead of every variant the dataset holds."""
    ticked = inputs.default_variants("in9-local", "in9")
    assert ticked == ["original", "mixed_same", "mixed_rand"]
    score = tab_score.score(
        "tf_efficientnet_lite0", "in9-local", ticked, False, "in9", "evaluate", progress=_quiet
    )
    _final(score)
    assert len(space.job_calls) == 1
    out = _compared()
    assert "Done in" in out["status"], out["status"]
    assert space.job_calls[-1] == ("evaluate", "tf_efficientnet_lite1", sorted(ticked))
    assert [m for _, m, _ in space.job_calls] == ["tf_efficientnet_lite0", "tf_efficientnet_lite1"]
    # which run was reused, and that the new one joined the leaderboard, are said
    assert "A: tf_efficientnet_lite0: reused this Space's earlier run" in out["report"]
    assert "B: Added to the leaderboard (" in out["report"]
    _compared()  # both runs known now: nothing is scored again
    assert len(space.job_calls) == 2
    # the flips need three variants: the full run serves
    _final(
        tab_explore.flips("tf_efficientnet_lite0", "in9-local", "in9", "bg_gap", progress=_quiet)
    )
    assert len(space.job_calls) == 2


@pytest.mark.parametrize(
    ("a", "b", "said"),
    [
        ("tf_efficientnet_lite0", "tf_efficientnet_lite0", "two different models"),
        ("tf_efficientnet_lite0", "/etc/passwd", "paths and links are refused"),
        ("timm", "tf_efficientnet_lite1", "names a model library"),
    ],
)
def test_compare_refuses_what_it_must(space, a, b, said):
    import gradio as gr

    with pytest.raises(gr.Error, match=said) as info:
        _compared(a, b)
    assert space.job_calls == []
    assert info.value.visible is False  # said on the tab's status line, no toast


def test_the_flips_are_the_images_behind_bg_gap(space):
    from tests.in9_fixture import EXPECTED_BG_GAP

    summary, html = _final(
        tab_explore.flips("tf_efficientnet_lite0", "in9-local", "in9", "bg_gap", progress=_quiet)
    )
    ((task, _, variants),) = space.job_calls
    assert task == "evaluate" and variants == ["mixed_rand", "mixed_same", "original"]
    # colour rule: right on all 18 of mixed_same, wrong on 4 of mixed_rand, none the reverse
    assert f"= {100 * EXPECTED_BG_GAP:.1f} points over 18 images" in summary
    assert "**4** images, the reverse for **0**" in summary
    heads = re.findall(r'<h3 class="bgbench-flips-head">([^<]+)</h3>', html)
    assert heads == [
        "Right on mixed_same, wrong on mixed_rand (4)",
        "Wrong on mixed_same, right on mixed_rand (0)",
    ]
    flipped = re.findall(r'class="bgbench-flip" data-id="([^"]+)"', html)
    # the k=1 (grey object) images whose random background is another class's: y 3..6
    assert flipped == [f"n{y:08d}_1" for y in (3, 4, 5, 6)]
    # each shown as the original photo and in both variants, with the prediction on each
    alts = re.findall(r'<img [^>]*alt="([^"]+)"', html)
    assert [a.split(":")[0] for a in alts] == ["original", "mixed_same", "mixed_rand"] * 4
    assert all(a.startswith("mixed_rand: ✗") for a in alts[2::3])
    assert all(a.startswith("mixed_same: ✓") for a in alts[1::3])
    assert "bgbench evaluate tf_efficientnet_lite0 --benchmark in9" in summary
    # the release names no background: the summary says its photo is not shown
    assert "does not record which photo each mixed_rand background was taken from" in summary


def test_a_flip_shows_the_background_the_data_records(in9_release, tmp_path):
    """A dataset with ``bg_id``/``bg_label`` (the Hub build): the background's source photo
    and its class are shown beside the mixed image."""
    import datasets
    import pandas as pd

    from hf_bgbench.benchmarks import get_benchmark
    from hf_bgbench.data.sources import resolve_source
    from hf_bgbench.space.views.flips import flip_rows, pair_named, unrecorded_background

    spec = get_benchmark("in9")
    reader = resolve_source(str(in9_release), spec)
    mixed = reader.load("mixed_rand")
    ids = mixed["id"]
    source = {i: ids[(n + 1) % len(ids)] for n, i in enumerate(ids)}
    mixed = mixed.add_column("bg_id", [source[i] for i in ids])
    mixed = mixed.add_column("bg_label", [2] * len(ids))

    original_load = reader.load
    reader.load = lambda v: (
        mixed if v == "mixed_rand" else original_load(v)
    )  # the Hub build's columns

    table = pd.DataFrame({"id": ids, "label": mixed["label"], "pred": mixed["label"]})
    predictions = {v: table for v in ("original", "mixed_same", "mixed_rand")}
    pair = pair_named(spec, "bg_gap")
    (row,) = flip_rows(reader, "in9", predictions, pair, [ids[0]])
    assert row.background == f"{spec.classes[2]} · {source[ids[0]]}"
    assert [c.title for c in row.cells] == [
        "original",
        "mixed_same",
        "mixed_rand",
        "background from",
    ]
    assert isinstance(mixed, datasets.Dataset)
    assert unrecorded_background(reader, "in9", pair) == ""  # recorded: no note


def test_the_reproduce_command_gives_the_same_results(space, in9_release, tmp_path, monkeypatch):
    """The Space's command, run through ``bgbench``, writes the same numbers (the real
    bundled model on both sides, each with a prediction cache of its own)."""
    from hf_bgbench.cli import main
    from hf_bgbench.space.jobs.process import ThreadJob
    from hf_bgbench.tasks import run_task

    def real_job(task, model_id, options, command=""):
        return ThreadJob(
            lambda t, m, o: run_task(t, m, **o), (task, model_id, options), seconds=600
        )

    monkeypatch.setattr(running, "job_for", real_job)
    monkeypatch.setenv("HF_BGBENCH_CACHE", str(tmp_path / "space_cache"))
    out = dict(
        zip(
            ("status", "report", "plots", "files", "samples", "extras", "button"),
            _final(
                tab_score.score(
                    "tf_efficientnet_lite0",
                    "in9-local",
                    ["mixed_same", "mixed_rand"],
                    True,
                    "in9",
                    "evaluate",
                    progress=_quiet,
                )
            ),
            strict=True,
        )
    )
    files = {Path(f).name: Path(f) for f in out["files"]}
    # results.md and the per-image predictions, as the command line writes them
    assert {"results.json", "results.md", "mixed_same.parquet", "mixed_rand.parquet"} <= set(files)
    assert files["mixed_same.parquet"].parent.name == "predictions"
    assert str(in9_release) not in files["results.md"].read_text()
    (command,) = re.search(r"```bash\n(.*?)\n```", out["report"], re.S).group(1).splitlines()
    assert (
        "--restrict-to-benchmark-classes" in command
        and "--variants mixed_same mixed_rand" in command
    )
    assert "`in9-local` is this Space's own copy" in out["report"]
    words = shlex.split(command)
    assert words[0] == "bgbench"
    words = [str(in9_release) if w == "in9-local" else w for w in words[1:]]
    monkeypatch.setenv("HF_BGBENCH_CACHE", str(tmp_path / "cli_cache"))
    assert main([*words, "--output", str(tmp_path / "cli"), "--quiet"]) == 0
    cli = json.loads((tmp_path / "cli" / "results.json").read_text())
    shown = json.loads(files["results.json"].read_text())
    for key in ("bg_gap", "bg_gap_ci95", "variants", "label_protocol", "protocol"):
        assert cli[key] == shown[key], key
    assert cli["data"]["fingerprint"] == shown["data"]["fingerprint"]


def test_the_command_carries_the_space_caps(space, monkeypatch):
    """A capped task's command holds the cap, and the command line reads it back as the
    options the Space passed."""
    from hf_bgbench.cli import build_parser
    from hf_bgbench.cli._common import task_options
    from hf_bgbench.space.checks.allowlist import AllowedDataset
    from hf_bgbench.tasks import get_task

    monkeypatch.setenv("BGBENCH_SPACE_MAX_IMAGES", "4")
    for task in ("noise", "saliency", "graying", "challenge", "evaluate"):
        options = settings.task_options(task, ["mixed_same"], True)
        options["benchmark"] = "in9"
        entry = AllowedDataset("in9", "bgbench/in9", "in9")
        section = reproduce.reproduce_section(task, "timm/resnet50.a1_in1k", entry, options)
        (command,) = re.search(r"```bash\n(.*?)\n```", section, re.S).group(1).splitlines()
        args = build_parser().parse_args(shlex.split(command)[1:])
        parsed = task_options(args)
        assert args.model == "timm/resnet50.a1_in1k" and parsed["data"] == "bgbench/in9"
        for name, value in options.items():
            if name not in ("progress", "benchmark"):
                assert parsed[name] == value, (task, name)
        assert "own copy" not in section  # a Hub dataset is named as it is
        assert get_task(task).name in command


def test_task_labels_name_the_benchmarks_own_metrics(space):
    labels = dict((v, k) for k, v in inputs.task_choices("imagenet-e"))
    assert "BG-GAP" not in labels["evaluate"] and "mean DA" in labels["evaluate"]
    assert "BG-GAP" in dict((v, k) for k, v in inputs.task_choices("in9"))["evaluate"]


def test_use_via_api_accepts_every_benchmark(space):
    """Gradio checks an API call's values against a control's choices at build time: they
    hold every benchmark's tasks and variants, every allowed dataset, any image id."""
    from hf_bgbench.benchmarks import get_benchmark, list_benchmarks

    demo = build_demo()
    by_label = {}
    for block in demo.blocks.values():
        by_label.setdefault(getattr(block, "label", None), []).append(block)
    (variants,) = by_label["Variants (those the dataset holds)"]
    (image,) = by_label["Image (class · id)"]
    for name in list_benchmarks():
        spec = get_benchmark(name)
        assert variants.preprocess(list(spec.variants)) == list(spec.variants)
        for radio in by_label["Task"]:
            comparable = [v for _, v in radio.choices]
            for task in spec.tasks:
                if task in comparable:
                    assert radio.preprocess(task) == task
        assert "evaluate" in [v for _, v in by_label["Task"][0].choices]
    assert image.preprocess("n00000003_1") == "n00000003_1"
    for dataset in by_label["Dataset"]:
        assert dataset.preprocess("in9-local") == "in9-local"


def _results(variants, ids):
    return {"variants": dict.fromkeys(variants, {}), "max_images": None, "image_ids": ids}


def test_a_run_serves_another_cap_only_when_neither_leaves_an_image_out(tmp_path):
    """The Space's evaluate cap is a job's image budget split over the variants picked, so
    a run of 8 variants and one of 3 carry different caps: the full run serves either; a
    run that drew a subset serves only its own measurement."""
    runs, three = FinishedRuns(), ["original", "mixed_same", "mixed_rand"]
    eight = [*three, "only_fg", "only_bg_b", "only_bg_t", "no_fg", "mixed_next"]
    full = tmp_path / "full"
    full.mkdir()
    runs.add("evaluate", "m", "d", {"max_images": 3_125}, full, _results(eight, ["a", "b"]))
    assert runs.find("evaluate", "m", "d", {"max_images": 8_333}, three).folder == full
    assert runs.find("evaluate", "m", "d", {"max_images": 2}, three).folder == full
    assert runs.find("evaluate", "m", "d", {"max_images": 1}, three) is None  # would cut
    assert runs.find("evaluate", "m", "d", {}, three) is None  # uncapped: not known to be all
    cut = tmp_path / "cut"
    cut.mkdir()
    other = _results(eight, ["a", "b", "c"])  # three drawn, the cap reached: a subset
    runs.add("evaluate", "m2", "d", {"max_images": 3}, cut, other)
    assert runs.find("evaluate", "m2", "d", {"max_images": 8_333}, three) is None
    assert runs.find("evaluate", "m2", "d", {"max_images": 3}, three).folder == cut
