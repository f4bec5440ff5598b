"""The Space is a thin shell: its scoring function checks what a visitor entered, returns
the library's report and keeps full runs on the leaderboard."""

from __future__ import annotations

import importlib.util
import inspect
import json
import re
from pathlib import Path

import pytest

pytest.importorskip("gradio")


def _load_app():
    path = Path(__file__).resolve().parents[1] / "spaces" / "app.py"
    spec = importlib.util.spec_from_file_location("bgbench_space_app", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _quiet(*args, **kwargs) -> None:
    return None


@pytest.fixture
def space(in9_release, tmp_path, monkeypatch):
    """The app with the synthetic IN-9 allow-listed as 'in9-local' and its own leaderboard."""
    monkeypatch.setenv("BGBENCH_SPACE_DATASETS", f"in9=bgbench/in9,in9-local={in9_release}")
    monkeypatch.setenv("BGBENCH_LEADERBOARD_DIR", str(tmp_path / "leaderboard"))
    return _load_app()


def _colour_rule(app, monkeypatch, calls=None):
    from hf_bgbench.tasks.evaluate import evaluate_model as real
    from tests.in9_fixture import ColourRuleClassifier

    def fake(task, model_id, options, on_progress=None):
        if calls is not None:
            calls.append((task, model_id, options))
        return real(ColourRuleClassifier(), **options | {"use_cache": False})

    monkeypatch.setattr(app, "execute", fake)


def test_space_scores_with_the_library(space, in9_release, monkeypatch):
    from tests.in9_fixture import EXPECTED_BG_GAP

    calls: list = []
    _colour_rule(space, monkeypatch, calls)
    report, plots, results_json, samples, extras = space.score(
        "any/model", "in9-local", ["mixed_same", "mixed_rand"], False, progress=_quiet
    )
    assert "BG-GAP = 22.2 points" in report
    assert plots and all(Path(p).is_file() for p in plots)
    assert json.loads(Path(results_json).read_text())["bg_gap"] == pytest.approx(EXPECTED_BG_GAP)
    assert str(in9_release) not in report  # the server path is shown by its allow-list name
    assert "Added to the leaderboard" in report
    ((task, model_id, options),) = calls
    assert options["data"] == str(in9_release) and "checkpoint" not in options
    headers, rows = space.table(space.read_rows(space.leaderboard_dir()), published=False)
    assert [dict(zip(headers, r, strict=True))["BG-GAP"] for r in rows] == [pytest.approx(22.22)]
    # a grid of six images per variant, captioned with the run's predictions
    captions = re.findall(r'<img [^>]*alt="([^"]+)"', samples)
    assert samples.count("<img ") == 12 and samples.count("<tr>") == 3  # header + 2 variants
    assert [c.split(":")[0] for c in captions] == ["mixed_same"] * 6 + ["mixed_rand"] * 6
    assert all(re.fullmatch(r"\w+: (✓ [\w ]+|✗ [\w ]+ \(true \w+\))", c) for c in captions)
    # the gallery shows what the run recorded for those images
    predictions = space.read_predictions(Path(results_json).parent / "predictions")
    classes = space.get_benchmark("in9").classes
    recorded = {
        (v, classes[p] if p >= 0 else "outside in9", classes[y])
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


def test_space_reports_errors_to_the_user(space):
    import gradio as gr

    with pytest.raises(gr.Error, match="Pick at least one variant"):
        space.score("tf_efficientnet_lite0", "in9-local", [], False, progress=_quiet)
    assert isinstance(space.build_demo(), gr.Blocks)


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

    monkeypatch.setattr(space, "execute", never)
    with pytest.raises(gr.Error, match="(?s)" + said.replace("(", r"\(")):
        space.score(model, dataset, ["original"], False, progress=_quiet)


def test_the_space_never_passes_a_checkpoint_or_remote_code(space):
    assert "checkpoint" not in inspect.signature(space.score).parameters
    for task in ("evaluate", "challenge", "noise", "saliency"):
        options = space.task_options(task, ["original"], False)
        assert not {"checkpoint", "label_map", "trust_remote_code"} & set(options)
    challenge = space.task_options("challenge", [], False)
    assert challenge["max_foregrounds"] == 100 and challenge["max_backgrounds"] == 200


def test_the_space_controls_come_from_the_task_options(space, monkeypatch):
    """Variants go to the tasks that take them; each option a task caps on shared hardware
    (Option.space_cap) gets the operator's cap, 0 meaning all."""
    assert space.takes_variants("evaluate") and not space.takes_variants("noise")
    assert space.task_options("evaluate", ["original"], True) == {
        "restrict_to_benchmark": True,
        "progress": True,
        "variants": ["original"],
    }
    monkeypatch.setenv("BGBENCH_SPACE_MAX_IMAGES", "7")
    for task in ("noise", "saliency"):
        assert space.task_options(task, ["original"], False)["max_images"] == 7
    monkeypatch.setenv("BGBENCH_SPACE_FOREGROUNDS", "0")
    assert space.task_options("challenge", [], False)["max_foregrounds"] is None


def test_library_errors_reach_the_visitor_in_plain_words(space, in9_release, monkeypatch):
    import gradio as gr

    def fails(task, model_id, options, on_progress=None):
        raise ValueError(
            f"{options['data']} has no variant 'mixed_next'. Pass another folder with --data, "
            "or run `bgbench download in9`."
        )

    monkeypatch.setattr(space, "execute", fails)
    with pytest.raises(gr.Error) as info:
        space.score("tf_efficientnet_lite0", "in9-local", ["mixed_next"], False, progress=_quiet)
    message = info.value.message
    assert message.startswith("in9-local has no variant")
    assert "--data" not in message and "bgbench download" not in message
    assert str(in9_release) not in message and message.endswith(".")


def test_subset_runs_are_not_ranked(space, monkeypatch):
    from hf_bgbench.tasks.evaluate import evaluate_model as real
    from tests.in9_fixture import ColourRuleClassifier

    def capped(task, model_id, options, on_progress=None):
        doc = real(ColourRuleClassifier(), **options | {"use_cache": False})
        return doc | {"max_images": 5}

    monkeypatch.setattr(space, "execute", capped)
    report, *_ = space.score("any/model", "in9-local", ["original"], False, progress=_quiet)
    assert "Not added to the leaderboard: it scored a seeded subset (max_images=5)" in report
    assert space.read_rows(space.leaderboard_dir()) == []


def test_queue_limits_concurrency(space):
    demo = space.build_demo()
    assert demo._queue.default_concurrency_limit == space.CONCURRENCY == 1
    assert space.JOB_SECONDS > 0


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
    from hf_bgbench.tasks.evaluate import evaluate_model as real
    from tests.in9_fixture import ColourRuleClassifier

    def reports(task, model_id, options, on_progress=None):
        on_progress("in9/original", 9, 18)
        return real(ColourRuleClassifier(), **options | {"use_cache": False, "progress": False})

    shown = []
    monkeypatch.setattr(space, "execute", reports)
    space.score(
        "any/model",
        "in9-local",
        ["original"],
        False,
        progress=lambda value, desc=None, **kw: shown.append((value, desc)),
    )
    assert ((9, 18), "in9/original") in shown
    assert space.task_options("evaluate", ["original"], False)["progress"] is True


def _explore_in_process(space, monkeypatch):
    from hf_bgbench.space.explore import explore_image
    from tests.in9_fixture import ColourRuleClassifier

    def fake(model_id, options):
        return explore_image(ColourRuleClassifier(), **options)

    monkeypatch.setattr(space, "execute_explore", fake)


def test_explore_shows_an_image_in_every_variant_with_predictions(space, monkeypatch):
    from tests.in9_fixture import VARIANTS

    update = space.images_of("in9-local", "in9")
    choices = update["choices"]
    assert len(choices) == 18 and update["value"] == choices[0][1]
    shown_label, image_id = choices[-1]
    assert shown_label.endswith(f" · {image_id}")
    _explore_in_process(space, monkeypatch)
    gallery, summary = space.explore("any/model", "in9-local", "in9", image_id, progress=_quiet)
    assert [caption.split(":")[0] for _, caption in gallery] == list(VARIANTS)
    assert all(re.search(r": [✓✗] .+ \d+%$", caption) for _, caption in gallery)
    assert all(image.shape == (224, 224, 3) for image, _ in gallery)
    assert image_id in summary and f"of {len(VARIANTS)} variants" in summary


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

    _explore_in_process(space, monkeypatch)
    with pytest.raises(gr.Error, match=said):
        space.explore(model, dataset, "in9", image, progress=_quiet)


def test_a_hub_id_in_the_allow_list_is_never_read_as_a_folder(tmp_path, monkeypatch):
    (tmp_path / "acme" / "in9").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BGBENCH_SPACE_DATASETS", "in9=acme/in9")
    monkeypatch.setenv("BGBENCH_LEADERBOARD_DIR", str(tmp_path / "leaderboard"))
    app = _load_app()
    calls: list = []
    _colour_rule(app, monkeypatch, calls)
    import gradio as gr

    with pytest.raises(gr.Error, match="not in the local Hugging Face cache"):
        app.score("any/model", "in9", ["original"], False, progress=_quiet)
    ((_, _, options),) = calls
    assert options["data"].kind == "hub" and options["data"].location == "acme/in9"
