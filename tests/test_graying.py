"""The graying task (background ablation, Moayeri et al. 2022 Fig. 8) on the synthetic IN-9
release of tests/in9_fixture.py, where each answer can be worked out by hand."""

from __future__ import annotations

import json

import pytest
import torch

from hf_bgbench.cli import main
from hf_bgbench.tasks.graying import GRAYING_OUTPUTS, run_graying
from tests.in9_fixture import BOX
from tests.test_noise import RegionRule


def _run(release, model, **kw):
    kw.setdefault("progress", False)
    kw.setdefault("num_workers", 0)
    kw.setdefault("device", "cpu")
    return run_graying(model, release, **kw)


def test_background_model_loses_everything_object_model_nothing(in9_release, tmp_path):
    """18 images (9 classes x 2). A model that reads the background is right on 16 clean
    images (classes 7 and 8 have one misleading background each: class means 1.0 x 7 and
    0.5 x 2 -> 8/9) and on none once the background is grey; a model that reads the object
    is right on the 9 coloured objects, grey background or not."""
    bg_model = RegionRule("bg")
    r = _run(in9_release, bg_model, output_dir=tmp_path)
    assert r["accuracy_clean"] == pytest.approx(8 / 9)
    assert r["accuracy_grayed"] == 0.0 and r["drop"] == pytest.approx(8 / 9)
    assert r["per_class"]["fish"]["accuracy_clean"] == 0.5  # class 8: one misleading bg
    assert bg_model.forward_images == 36  # each image clean and grayed, once
    lo, hi = r["drop_ci95"]
    assert lo <= r["drop"] <= hi
    assert r["protocol"]["name"] == "moayeri2022" and r["aggregation"] == "image-pooled"
    assert set(p.name for p in tmp_path.iterdir()) == set(GRAYING_OUTPUTS)
    assert json.loads((tmp_path / "graying.json").read_text())["drop"] == pytest.approx(8 / 9)

    fg = _run(in9_release, RegionRule("fg"))
    assert fg["accuracy_clean"] == 0.5 and fg["accuracy_grayed"] == 0.5 and fg["drop"] == 0.0


class _Recorder(RegionRule):
    def __init__(self):
        super().__init__("fg")
        self.inputs: list[torch.Tensor] = []

    def logits(self, x: torch.Tensor) -> torch.Tensor:
        self.inputs.append(x.clone())
        return super().logits(x)


def test_grayed_image_keeps_the_object_and_greys_the_rest(in9_release):
    model = _Recorder()
    _run(in9_release, model, gray=0.25, max_images=2, batch_size=2)
    clean, grayed = torch.cat(model.inputs).split(2)
    x0, y0, x1, y1 = BOX
    inside = torch.zeros(clean.shape[-2:], dtype=torch.bool)
    inside[y0:y1, x0:x1] = True
    assert torch.equal(grayed[:, :, inside], clean[:, :, inside])
    assert torch.all(grayed[:, :, ~inside] == 0.25)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--gray", "1.5"], "grey level is a pixel value in [0, 1]"),
        (["--protocol", "nope"], "--protocol 'nope'"),
    ],
)
def test_bad_graying_arguments_are_named(in9_release, tmp_path, capsys, args, message):
    try:  # argparse refuses a bad value (SystemExit 2), the task a bad name (exit code 2)
        code = main(["graying", "tf_efficientnet_lite0", "--data", str(in9_release), *args])
    except SystemExit as stop:
        code = stop.code
    assert code == 2
    assert message in capsys.readouterr().err


def test_rival10_grays_each_attribute_alone(tmp_path):
    """RIVAL10 (the paper protocol: photos and masks stretched to 224x224): besides the
    background, each attribute with a mask is grayed alone, on the images that have it;
    the model sees one copy per such attribute."""
    from tests.rival10_fixture import attribute_image_counts, fixture_items, write_rival10_release
    from tests.test_noise import Recorder

    release = write_rival10_release(tmp_path)
    model = Recorder()
    r = _run(release, model, benchmark="rival10", label_map="imagenet", batch_size=4)
    test = [item for item in fixture_items() if item.split == "test"]
    expected = attribute_image_counts("test")
    assert len(expected) >= 3
    assert {a: v["n"] for a, v in r["per_attribute"].items()} == expected
    forwarded = sum(len(x) for x in model.inputs)
    assert forwarded == 2 * len(test) + sum(expected.values())
    assert r["protocol"]["name"] == "rival10-paper"
    assert r["settings"]["geometry"]["resize"] == [224, 224]
    assert r["aggregation"] == "image-pooled"  # as the authors count graying
    # scored through its own ImageNet classes: no head to re-fit, and the result says so
    assert "accuracy_grayed_refit" not in r and r["refit_head"]["fitted"] is False
    assert "own classes" in r["refit_head"]["reason"]
    assert any(d.startswith("Only the first number of Fig. 8") for d in r["protocol_deviations"])


@pytest.fixture
def no_decode_workers(monkeypatch):
    """The heads' decode loops in this process (no worker start-ups on a shared CPU)."""
    import hf_bgbench.probe.features as features

    monkeypatch.setattr(features, "default_num_workers", lambda device=None: 0)


def test_rival10_head_refitted_on_grey_backgrounds_scores_the_grayed_images(
    rival10_release, tmp_path, no_decode_workers, monkeypatch
):
    """Under the paper protocol a model scored through the linear head also gets the second
    number of Fig. 8: a head trained (20 epochs) on grey-background train photos, through
    which exactly the grayed test copies are scored."""
    import pandas as pd

    from hf_bgbench.inference.model_step import ModelStep
    from tests.test_probe_adam import pixel_classifier

    calls: list[tuple[str, torch.Tensor]] = []
    predict = ModelStep.predict

    def spy(self, x, labels):
        calls.append((self.classifier.probe_record["key"], x.detach().clone()))
        return predict(self, x, labels)

    monkeypatch.setattr(ModelStep, "predict", spy)
    r = _run(rival10_release, pixel_classifier(), benchmark="rival10", batch_size=4,
             output_dir=tmp_path)  # fmt: skip
    ordinary, refit = r["probe"], r["refit_head"]["probe"]
    assert r["refit_head"]["fitted"] is True and refit["key"] != ordinary["key"]
    assert refit["recipe"]["background"]["gray"] == 0.5 and refit["epochs"] == 20
    assert "background" not in ordinary["recipe"] and ordinary["epochs"] == 10
    assert refit["seed"] == ordinary["seed"] and refit["normalise"] == ordinary["normalise"]
    # per batch of 4, the grey head sees exactly the grayed half of what the scoring head
    # was just given (clean + grayed; its attribute ablations follow), and nothing else
    assert {key for key, _ in calls} == {ordinary["key"], refit["key"]}
    at = [i for i, (key, _) in enumerate(calls) if key == refit["key"]]
    assert len(at) == 5 and r["n_images"] == 20
    for i in at:
        key, both = calls[i - 1]
        assert key == ordinary["key"] and len(both) == 8
        assert torch.equal(calls[i][1], both[4:])
        assert not torch.equal(both[:4], both[4:])
    frame = pd.read_parquet(tmp_path / "graying_images.parquet")
    right = frame["pred_grayed_refit"] == frame["label"]
    assert r["accuracy_grayed_refit"] == pytest.approx(right.mean())
    lo, hi = r["accuracy_grayed_refit_ci95"]
    assert lo <= r["accuracy_grayed_refit"] <= hi
    for name, c in r["per_class"].items():
        in_class = frame["class"] == name
        assert c["accuracy_grayed_refit"] == pytest.approx(right[in_class].mean())
        # a class right (or wrong) on every image: resampling cannot vary it, so no
        # interval (it was zero-width), the reason recorded with the class
        if right[in_class].nunique() == 1:
            assert c["accuracy_grayed_refit_ci95"] is None
            assert "same value" in c["intervals_withheld"]["accuracy_grayed_refit"]
        else:
            assert len(c["accuracy_grayed_refit_ci95"]) == 2
    assert not any("Only the first number" in d for d in r["protocol_deviations"])
    assert adam_deviation("GRAY_SELECTION_DEVIATION") in r["protocol_deviations"]
    scores = {s["key"]: s for s in r["report"]["scores"]}
    assert scores["accuracy_grayed_refit"]["value"] == r["accuracy_grayed_refit"]
    table = next(t for t in r["report"]["tables"] if t["key"] == "per_class")
    assert "Grayed, re-fitted head (%)" in table["columns"]
    assert "re-fitted" in (tmp_path / "graying.md").read_text()

    # --no-refit-head: the first number only (the scoring head is reused from the cache)
    calls.clear()
    skipped = _run(rival10_release, pixel_classifier(), benchmark="rival10", batch_size=4,
                   refit_head=False)  # fmt: skip
    assert "accuracy_grayed_refit" not in skipped and skipped["probe"]["reused"]
    assert skipped["refit_head"] == {"fitted": False, "reason": "--no-refit-head was given"}
    assert {key for key, _ in calls} == {ordinary["key"]}
    assert skipped["accuracy_grayed"] == r["accuracy_grayed"]
    assert any(d.startswith("Only the first number") for d in skipped["protocol_deviations"])
    assert all("accuracy_grayed_refit" not in c for c in skipped["per_class"].values())


def adam_deviation(name: str) -> str:
    import hf_bgbench.probe.adam_head as adam

    return getattr(adam, name)


def test_no_refit_head_flag():
    import argparse

    from hf_bgbench.cli._common import task_options
    from hf_bgbench.cli.tasks import register

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    assert task_options(parser.parse_args(["graying", "m"]))["refit_head"] is True
    args = parser.parse_args(["graying", "m", "--no-refit-head"])
    assert task_options(args)["refit_head"] is False
