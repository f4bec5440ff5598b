"""The Space is a thin shell: its scoring function returns the library's report."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

pytest.importorskip("gradio")


def _load_app():
    path = Path(__file__).resolve().parents[1] / "spaces" / "app.py"
    spec = importlib.util.spec_from_file_location("bgbench_space_app", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_space_scores_with_the_library(in9_release, monkeypatch):
    app = _load_app()
    from hf_bgbench.tasks.evaluate import evaluate_model as real
    from tests.in9_fixture import EXPECTED_BG_GAP, ColourRuleClassifier

    monkeypatch.setattr(
        app,
        "evaluate_model",
        lambda model_id, **kw: real(ColourRuleClassifier(), **kw | {"use_cache": False}),
    )
    report, plot, results_json = app.score(
        "any/model",
        str(in9_release),
        ["mixed_same", "mixed_rand"],
        False,
        progress=lambda *a, **k: None,
    )
    assert "BG-GAP = 22.2 points" in report
    assert Path(plot).is_file()
    assert json.loads(Path(results_json).read_text())["bg_gap"] == pytest.approx(EXPECTED_BG_GAP)


def test_space_reports_errors_to_the_user(in9_release):
    import gradio as gr

    app = _load_app()
    with pytest.raises(gr.Error, match="Pick at least one variant"):
        app.score(
            "tf_efficientnet_lite0", str(in9_release), [], False, progress=lambda *a, **k: None
        )
    assert isinstance(app.build_demo(), gr.Blocks)
