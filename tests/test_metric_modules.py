"""The ``evaluate`` metric modules in ``metrics/`` (loaded offline from the folders), their
metric cards (every example is run) and Space files, and ``bgbench publish-metrics``.

Every module result is compared with the core function called directly on the same inputs,
which shows that the generated modules compute what the core computes.
"""

from __future__ import annotations

import doctest
import math
import re
from pathlib import Path

import numpy as np
import pytest
import yaml

from hf_bgbench.metrics import (
    FoolingMatrix,
    bg_gap_report,
    challenge_accuracy,
    challenge_accuracy_per_class,
    challenge_report,
    dropped_accuracy_report,
    rfs_report,
)
from tests.assertions import assert_close
from tests.metric_core_args import BG_GAP_ARGS, DROPPED_ACCURACY_ARGS
from tests.metric_env import (
    METRICS_DIR,
    NAMES,
    evaluate,
    evaluate_cache,  # noqa: F401  (autouse fixture)
    load,
)

DOCTEST_FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


# ----------------------------------------------------------------------------- fixtures

RNG = np.random.default_rng(0)
N = 90
IN9_VARIANTS = ["original", "mixed_same", "mixed_rand", "mixed_next", "only_bg_t", "only_fg"]
IN9 = dict(
    predictions=RNG.integers(-1, 9, N * len(IN9_VARIANTS)).tolist(),
    references=np.tile(RNG.integers(0, 9, N), len(IN9_VARIANTS)).tolist(),
    variants=np.repeat(IN9_VARIANTS, N).tolist(),
    ids=np.tile([f"img{i}" for i in range(N)], len(IN9_VARIANTS)).tolist(),
)
NOISE = dict(
    predictions_fg_noise=RNG.integers(0, 10, 120).tolist(),
    predictions_bg_noise=RNG.integers(0, 10, 120).tolist(),
    references=np.repeat(RNG.integers(0, 10, 30), 4).tolist(),
    probabilities_fg_noise=RNG.random(120).tolist(),
    probabilities_bg_noise=RNG.random(120).tolist(),
    noise_levels=np.tile([30 / 255, 30 / 255, 90 / 255, 90 / 255], 30).tolist(),
    instance_ids=np.repeat([f"r{i}" for i in range(30)], 4).tolist(),
)
EDITS = dict(
    predictions=RNG.integers(0, 5, 80).tolist(),
    references=np.tile(RNG.integers(0, 5, 20), 4).tolist(),
    edits=np.repeat(["original", "bg_complex", "size_0.05", "rotation"], 20).tolist(),
)
FG_LABELS = np.repeat(np.arange(9), 3)
BG_LABELS = np.repeat(np.arange(9), 2)
FOOLING = RNG.choice([-1, *range(9)], size=(27, 18), p=[0.05] + [0.95 / 9] * 9)
FOOLING[FOOLING[:, 0] >= 0] = np.where(
    RNG.random((int((FOOLING[:, 0] >= 0).sum()), 18)) < 0.6,
    FG_LABELS[FOOLING[:, 0] >= 0, None],
    FOOLING[FOOLING[:, 0] >= 0],
)
FOOLING[:3] = 0  # three dog foregrounds never fooled


# ----------------------------------------------------------------------------- loading


@pytest.mark.parametrize("name", NAMES)
def test_module_loads_offline_from_its_folder(name, evaluate_cache):  # noqa: F811
    module = load(name)
    assert module.name == name
    assert module.info.citation.strip().startswith("@")
    assert "Args" in module.inputs_description and "Returns" in module.inputs_description
    # the module was cached under the temporary modules folder, not under ~
    assert any(evaluate_cache.rglob(f"{name}.py"))


# ----------------------------------------------------------------------------- bg_gap


def test_bg_gap_module_equals_core():
    rows = {k: v for k, v in IN9.items() if k != "ids"}
    result = load("bg_gap").compute(**rows)
    assert_close(result, bg_gap_report(**rows, **BG_GAP_ARGS))
    assert result["bg_gap"] == pytest.approx(
        result["accuracy_mixed_same"] - result["accuracy_mixed_rand"]
    )
    assert {"same_minus_next", "original_minus_only_fg"} <= result.keys()


def test_bg_gap_module_hand_computed_and_streaming():
    module = load("bg_gap")
    module.add_batch(predictions=[0, 1], references=[0, 1], variants=["mixed_same"] * 2)
    module.add_batch(predictions=[1, 2], references=[1, 1], variants=["mixed_rand"] * 2)
    assert module.compute() == {
        "accuracy_mixed_rand": 0.5,
        "accuracy_mixed_same": 1.0,
        "bg_gap": 0.5,
    }


def test_bg_gap_with_ids_config_adds_categories():
    module = load("bg_gap", "with_ids")
    assert set(module.features) == {"predictions", "references", "variants", "ids"}
    result = module.compute(**IN9)
    assert_close(result, bg_gap_report(**IN9, **BG_GAP_ARGS))
    assert sum(result["prediction_categories"].values()) == pytest.approx(1.0)


def test_bg_gap_module_row_order_free():
    order = RNG.permutation(len(IN9["ids"]))
    shuffled = {k: [v[i] for i in order] for k, v in IN9.items()}
    expected = bg_gap_report(**IN9, **BG_GAP_ARGS)
    assert_close(load("bg_gap", "with_ids").compute(**shuffled), expected)


def test_bg_gap_module_bad_inputs():
    module = load("bg_gap")
    with pytest.raises(ValueError, match="`variants`.*mixed-rand"):
        module.compute(predictions=[0, 1], references=[0, 1], variants=["mixed_same", "mixed-rand"])
    with pytest.raises(ValueError, match="predictions.*references"):
        module.compute(predictions=[0, 1], references=[0], variants=["mixed_same", "mixed_rand"])
    with pytest.raises(ValueError, match="`references`.*range"):
        module.compute(
            predictions=[0, 1], references=[0, -1], variants=["mixed_same", "mixed_rand"]
        )
    with pytest.raises(ValueError, match="Unknown config"):
        load("bg_gap", "nope")


# ----------------------------------------------------------------------------- rfs

RFS_CONFIGS = {
    "default": [],
    "irfs": ["probabilities_fg_noise", "probabilities_bg_noise"],
    "noise_levels": ["noise_levels"],
    "irfs+noise_levels": ["probabilities_fg_noise", "probabilities_bg_noise", "noise_levels"],
    "noise_levels+irfs+instance_ids": [
        "probabilities_fg_noise",
        "probabilities_bg_noise",
        "noise_levels",
        "instance_ids",
    ],
}


@pytest.mark.parametrize("config, extra", RFS_CONFIGS.items())
def test_rfs_module_configs_equal_core(config, extra):
    module = load("rfs", config)
    base = ["predictions_fg_noise", "predictions_bg_noise", "references"]
    assert list(module.features) == base + extra
    inputs = {k: NOISE[k] for k in base + extra}
    result = module.compute(**inputs)
    core = rfs_report(*(NOISE[k] for k in base), **{k: NOISE[k] for k in extra})
    assert_close(result, core)
    assert -1.0 <= result["rfs"] <= 1.0
    assert ("irfs_mean" in result) == ("probabilities_fg_noise" in extra)
    assert ("rfs_per_noise_level" in result) == ("noise_levels" in extra)


def test_rfs_module_hand_computed():
    result = load("rfs").compute(
        predictions_fg_noise=[0, 1, 2, 2],
        predictions_bg_noise=[0, 1, 1, 3],
        references=[0, 1, 1, 3],
    )
    assert_close(
        result,
        {
            "rfs": 1.0,
            "accuracy_fg_noise": 0.5,
            "accuracy_bg_noise": 1.0,
            "rfs_per_class": {0: 0.0, 1: 1.0, 3: 1.0},
        },
    )


def test_rfs_module_swapping_fg_and_bg_negates():
    module = load("rfs", "irfs")
    keys = ["predictions_fg_noise", "predictions_bg_noise", "references"]
    keys += ["probabilities_fg_noise", "probabilities_bg_noise"]
    inputs = {k: NOISE[k] for k in keys}
    result = module.compute(**inputs)
    swapped = module.compute(
        predictions_fg_noise=NOISE["predictions_bg_noise"],
        predictions_bg_noise=NOISE["predictions_fg_noise"],
        references=NOISE["references"],
        probabilities_fg_noise=NOISE["probabilities_bg_noise"],
        probabilities_bg_noise=NOISE["probabilities_fg_noise"],
    )
    assert swapped["rfs"] == pytest.approx(-result["rfs"])
    assert swapped["irfs_mean"] == pytest.approx(-result["irfs_mean"])


@pytest.mark.parametrize("config", ["bogus", "irfs+irfs", "instance_ids"])
def test_rfs_module_rejects_bad_configs(config):
    with pytest.raises(ValueError, match="config|needs 'irfs'"):
        load("rfs", config)


def test_rfs_module_bad_probability():
    with pytest.raises(ValueError, match="`probabilities_bg_noise`"):
        load("rfs", "irfs").compute(
            predictions_fg_noise=[0],
            predictions_bg_noise=[0],
            references=[0],
            probabilities_fg_noise=[0.5],
            probabilities_bg_noise=[1.5],
        )


# ----------------------------------------------------------------------------- dropped_accuracy


def test_dropped_accuracy_module_equals_core():
    result = load("dropped_accuracy").compute(**EDITS)
    assert_close(result, dropped_accuracy_report(**EDITS, **DROPPED_ACCURACY_ARGS))
    for edit, value in result["dropped_accuracy"].items():
        assert value == pytest.approx(result["accuracy"]["original"] - result["accuracy"][edit])


def test_dropped_accuracy_module_hand_computed_and_keywords():
    module = load("dropped_accuracy")
    assert module.compute(
        predictions=[3, 7, 3, 0],
        references=[3, 7, 3, 7],
        edits=["original", "original", "size_0.05", "size_0.05"],
    ) == {
        "accuracy": {"original": 1.0, "size_0.05": 0.5},
        "dropped_accuracy": {"size_0.05": 0.5},
        "mean_dropped_accuracy": 0.5,
    }
    custom = module.compute(
        predictions=[1, 0, 1],
        references=[1, 1, 1],
        edits=["original", "leopard", "checker"],
        known_edits=None,
    )
    assert custom["dropped_accuracy"] == {"checker": 0.0, "leopard": 1.0}
    assert custom["mean_dropped_accuracy"] == 0.5
    with pytest.raises(ValueError, match="`edits` has unknown edit name"):
        module.compute(predictions=[1, 1], references=[1, 1], edits=["original", "leopard"])


# ----------------------------------------------------------------------------- bg_challenge


def test_bg_challenge_default_and_per_class():
    vulnerable = (FOOLING != FG_LABELS[:, None]).any(axis=1).tolist()
    assert load("bg_challenge").compute(vulnerable=vulnerable) == {
        "challenge_accuracy": challenge_accuracy(vulnerable)
    }
    assert load("bg_challenge").compute(vulnerable=[True, False, True, True]) == {
        "challenge_accuracy": 0.25
    }
    result = load("bg_challenge", "per_class").compute(
        vulnerable=vulnerable, foreground_labels=FG_LABELS.tolist()
    )
    assert result["challenge_accuracy"] == challenge_accuracy(vulnerable)
    assert result["challenge_accuracy_per_class"] == challenge_accuracy_per_class(
        vulnerable, FG_LABELS
    )


def test_bg_challenge_fooling_matrix_equals_core_and_streams():
    module = load("bg_challenge", "fooling_matrix")
    for label, row in zip(FG_LABELS.tolist(), FOOLING.tolist(), strict=True):
        module.add(foreground_labels=label, predictions=row)
    result = module.compute(background_labels=BG_LABELS.tolist())
    core = challenge_report(FoolingMatrix.from_arrays(FOOLING, FG_LABELS, BG_LABELS))
    assert_close(result, core)
    assert len(result["attack_success_rate"]) == len(BG_LABELS)
    assert 0.0 < result["challenge_accuracy"] < 1.0


def test_bg_challenge_fooling_matrix_hand_computed():
    result = load("bg_challenge", "fooling_matrix").compute(
        foreground_labels=[0, 1, 2],
        predictions=[[0, 1, 0], [1, 1, 0], [2, 2, 2]],
        background_labels=[0, 1, 2],
    )
    assert_close(
        result,
        {
            "challenge_accuracy": 1 / 3,
            "challenge_accuracy_per_class": {0: 0.0, 1: 0.0, 2: 1.0},
            "attack_success_rate": [0.0, 0.5, 0.0],
            "max_attack_success_rate_per_class": {0: 0.0, 1: 0.5, 2: 0.0},
            "foolable_into": {0: 0.0, 1: 0.5, 2: 0.0},
            "fooled_into_background_class": 1 / 3,
        },
    )


def test_bg_challenge_fooling_matrix_bad_inputs():
    module = load("bg_challenge", "fooling_matrix")
    with pytest.raises(ValueError, match="`background_labels` is missing"):
        module.compute(foreground_labels=[0], predictions=[[0, 1]])
    with pytest.raises(ValueError, match="`predictions` row 1 has 1"):
        module.compute(
            foreground_labels=[0, 1], predictions=[[0, 1], [1]], background_labels=[0, 1]
        )
    with pytest.raises(ValueError, match="`background_labels`.*range"):
        module.compute(
            foreground_labels=[0], predictions=[[0, 1]], background_labels=[0, 9], num_classes=9
        )
    with pytest.raises(ValueError, match="`vulnerable` is empty"):
        load("bg_challenge").compute(vulnerable=[])


# ----------------------------------------------------------------------------- cards and Spaces

CARD_SECTIONS = [
    "## Metric Description",
    "## How to Use",
    "### Inputs",
    "### Output Values",
    "### Examples",
    "## Limitations and Bias",
    "## Citation",
]


def _card(name: str) -> tuple[dict, str]:
    text = (METRICS_DIR / name / "README.md").read_text(encoding="utf-8")
    match = re.match(r"---\n(.*?)\n---\n(.*)", text, re.S)
    assert match, f"{name}/README.md has no YAML header"
    return yaml.safe_load(match.group(1)), match.group(2)


@pytest.mark.parametrize("name", NAMES)
def test_metric_card_and_space_files(name):
    meta, body = _card(name)
    for key in ("title", "emoji", "colorFrom", "colorTo", "sdk_version", "description"):
        assert meta.get(key), f"{name} card lacks {key}"
    assert meta["sdk"] == "gradio" and meta["app_file"] == "app.py" and meta["pinned"] is False
    assert {"evaluate", "metric"} <= set(meta["tags"])
    positions = [body.find(section) for section in CARD_SECTIONS]
    assert all(p >= 0 for p in positions), f"{name} card lacks a section"
    assert positions == sorted(positions)
    assert "Values from Popular Papers" in body
    # Load forms that work today, and the Hub form with what it needs.
    assert f'hf_bgbench.load_metric("{name}")' in body
    assert f'evaluate.load("path/to/metrics/{name}")' in body
    assert f'`evaluate.load("bgbench/{name}")` from the Hub. This works once' in body
    assert "bgbench publish-metrics" in body
    folder = METRICS_DIR / name
    app = (folder / "app.py").read_text()
    assert "launch_metric_space(__file__)" in app  # finds the module script beside it
    requirements = (folder / "requirements.txt").read_text()
    assert "hf-bgbench" not in requirements and "torch" not in requirements
    script = (folder / f"{name}.py").read_text()
    assert not re.search(r"^\s*(from|import) hf_bgbench", script, flags=re.M)


def _card_examples(name: str) -> doctest.DocTest:
    """Every ```python block of the card, as one doctest (state carries over)."""
    blocks = re.findall(r"```python\n(.*?)```", _card(name)[1], flags=re.S)
    assert blocks and all(b.lstrip().startswith(">>>") for b in blocks), (
        f"every python block of the {name} card is a doctest, so its outputs are checked"
    )
    return doctest.DocTestParser().get_doctest("\n".join(blocks), {}, name, name, 0)


@pytest.mark.parametrize("name", NAMES)
def test_card_examples_print_what_they_say(name):
    runner = doctest.DocTestRunner(optionflags=DOCTEST_FLAGS)
    result = runner.run(_card_examples(name))
    assert result.attempted >= 4
    assert result.failed == 0, f"{name} card: {result.failed} example(s) print something else"


class _EvaluateAtFolders:
    """``evaluate`` for the module docstrings' examples: ``load("path/to/<name>")`` is the
    generated folder ``metrics/<name>``."""

    def load(self, path: str, *args, **kwargs):
        return evaluate.load(str(METRICS_DIR / Path(path).name), *args, **kwargs)


@pytest.mark.parametrize("name", NAMES)
def test_module_docstring_examples_print_what_they_say(name):
    text = load(name).inputs_description
    assert f'evaluate.load("path/to/{name}")' in text and f"bgbench/{name}" in text
    test = doctest.DocTestParser().get_doctest(
        text, {"evaluate": _EvaluateAtFolders()}, name, name, 0
    )
    result = doctest.DocTestRunner(optionflags=DOCTEST_FLAGS).run(test)
    assert result.attempted >= 2 and result.failed == 0


def test_card_published_values_match_spec():
    assert "7.3" in _card("bg_gap")[1] and "22.3%" in _card("bg_challenge")[1]
    assert "15.72" in _card("dropped_accuracy")[1]
    assert "defined as 0" in _card("rfs")[1]


@pytest.mark.parametrize("name", NAMES)
def test_space_widget_builds_and_computes(name):
    pytest.importorskip("gradio")
    import pandas as pd

    from hf_bgbench.evaluate_metrics.widget import build_metric_widget

    module = load(name)
    widget = build_metric_widget(module, METRICS_DIR / name / "README.md")
    tables = {
        "bg_gap": {
            "predictions": [0, 1, 1, 2],
            "references": [0, 1, 1, 1],
            "variants": ['"mixed_same"', '"mixed_same"', '"mixed_rand"', '"mixed_rand"'],
        },
        "bg_challenge": {"vulnerable": ["true", "false"]},
        "rfs": {
            "predictions_fg_noise": [0, 1],
            "predictions_bg_noise": [0, 0],
            "references": [0, 0],
        },
        "dropped_accuracy": {
            "predictions": [0, 1],
            "references": [0, 0],
            "edits": ['"original"', '"rotation"'],
        },
    }
    text = widget.fns[0].fn(pd.DataFrame(tables[name]))
    expected = {"bg_gap": '"bg_gap": 0.5', "bg_challenge": '"challenge_accuracy": 0.5'}
    expected |= {"rfs": '"rfs": 1.0', "dropped_accuracy": '"mean_dropped_accuracy": 1.0'}
    assert expected[name] in text


@pytest.mark.parametrize("name", ["bg_gap", "rfs"])
def test_space_app_runs(name, monkeypatch):
    """app.py loads the script next to it and launches a widget (launch itself stubbed)."""
    gr = pytest.importorskip("gradio")
    import runpy

    launched = []
    monkeypatch.setattr(gr.Interface, "launch", lambda self, *a, **k: launched.append(self))
    runpy.run_path(str(METRICS_DIR / name / "app.py"), run_name="__main__")
    assert len(launched) == 1 and launched[0].title == f"Metric: {name}"


# ----------------------------------------------------------------------------- publish-metrics


def test_publish_metrics_dry_run_lists_the_four_spaces(capsys):
    from hf_bgbench.cli import main

    assert main(["publish-metrics", "--dry-run", "--namespace", "someone"]) == 0
    out = capsys.readouterr().out
    for name in NAMES:
        assert f"someone/{name}" in out
        assert f"{name}.py" in out
    assert "app.py" in out and "requirements.txt" in out


class _StubApi:
    def __init__(self, error: BaseException | None = None):
        self.calls: list[tuple[str, tuple, dict]] = []
        self.error = error

    def create_repo(self, *args, **kwargs):
        self.calls.append(("create_repo", args, kwargs))
        if self.error is not None:
            raise self.error
        return f"https://huggingface.co/spaces/{args[0]}"

    def upload_folder(self, **kwargs):
        self.calls.append(("upload_folder", (), kwargs))


def test_publish_metrics_creates_gradio_spaces():
    from hf_bgbench.cli.publish_metrics import publish_metrics

    api = _StubApi()
    results = publish_metrics("someone", names=["rfs", "bg_gap"], api=api)
    assert [r.repo_id for r in results] == ["someone/rfs", "someone/bg_gap"]
    creates = [c for c in api.calls if c[0] == "create_repo"]
    assert [c[1][0] for c in creates] == ["someone/rfs", "someone/bg_gap"]
    for _, _, kwargs in creates:
        assert kwargs["repo_type"] == "space" and kwargs["space_sdk"] == "gradio"
        assert kwargs["exist_ok"] is True
    uploads = [c[2] for c in api.calls if c[0] == "upload_folder"]
    assert [Path(u["folder_path"]).name for u in uploads] == ["rfs", "bg_gap"]
    assert all(u["repo_type"] == "space" for u in uploads)


def test_publish_metrics_unreachable_hub_is_a_clear_error(monkeypatch, capsys):
    from hf_bgbench.cli import main
    from hf_bgbench.cli.publish_metrics import publish_metrics

    class ConnectError(Exception):
        pass

    ConnectError.__module__ = "httpx2"  # what huggingface_hub's HTTP stack raises offline
    with pytest.raises(ConnectionError, match="someone/rfs: the Hub could not be reached"):
        publish_metrics("someone", names=["rfs"], api=_StubApi(ConnectError("no DNS")))

    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    assert main(["publish-metrics", "--only", "bg_gap"]) == 2
    err = capsys.readouterr().err
    assert "bgbench/bg_gap" in err and "HF_HUB_OFFLINE" in err


def test_publish_metrics_generates_self_contained_folders(tmp_path, capsys):
    from hf_bgbench.cli import main
    from hf_bgbench.evaluate_metrics.generate import metric_files

    out = tmp_path / "spaces"
    assert main(["publish-metrics", "--dry-run", "--only", "rfs", "--out", str(out)]) == 0
    assert "generated from the metric core" in capsys.readouterr().out
    written = {p.name: p.read_text(encoding="utf-8") for p in (out / "rfs").iterdir()}
    assert written == metric_files("rfs")


def test_publish_metrics_refuses_folders_that_need_hf_bgbench(tmp_path):
    from hf_bgbench.cli.publish_metrics import publish_metrics
    from hf_bgbench.evaluate_metrics.generate import write_metric_folders

    write_metric_folders(tmp_path, ["bg_gap"])
    script = tmp_path / "bg_gap" / "bg_gap.py"
    script.write_text("from hf_bgbench.metrics import bg_gap_report\n" + script.read_text())
    (tmp_path / "bg_gap" / "requirements.txt").write_text("hf-bgbench\nevaluate\n")
    with pytest.raises(ValueError) as raised:
        publish_metrics("someone", names=["bg_gap"], metrics_dir=tmp_path, dry_run=True)
    assert "bg_gap.py imports hf_bgbench" in str(raised.value)
    assert "requirements.txt lists 'hf-bgbench'" in str(raised.value)


def test_publish_metrics_rejects_broken_folders(tmp_path):
    from hf_bgbench.cli.publish_metrics import publish_metrics

    (tmp_path / "rfs").mkdir()
    (tmp_path / "rfs" / "README.md").write_text("---\nsdk: gradio\napp_file: app.py\n---\n")
    with pytest.raises(ValueError, match=r"rfs\.py is missing"):
        publish_metrics("someone", names=["rfs"], metrics_dir=tmp_path, dry_run=True)
    with pytest.raises(ValueError, match="Unknown metric"):
        publish_metrics("someone", names=["accuracy"], dry_run=True)
    with pytest.raises(ValueError, match="--namespace"):
        publish_metrics("a/b", dry_run=True)


def test_nan_asr_survives_the_module():
    result = load("bg_challenge", "fooling_matrix").compute(
        foreground_labels=[1], predictions=[[1, 1]], background_labels=[1, 0]
    )
    assert math.isnan(result["attack_success_rate"][0])
