"""IN-9 scored end to end on the synthetic fixture: numbers checked against hand computation."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from hf_bgbench.tasks.evaluate import evaluate_model
from tests.in9_fixture import (
    EXPECTED_ACCURACY,
    EXPECTED_BG_GAP,
    EXPECTED_CATEGORIES,
    EXPECTED_ORIGINAL_MINUS_ONLY_FG,
    EXPECTED_SAME_MINUS_NEXT,
    VARIANTS,
    ColourRuleClassifier,
)

APPROX = dict(abs=1e-9)


@pytest.fixture(scope="module")
def release_results(in9_release, tmp_path_factory):
    out = tmp_path_factory.mktemp("out")
    model = ColourRuleClassifier()
    results = evaluate_model(
        model, data=in9_release, output_dir=out, use_cache=False, num_workers=0, progress=False
    )
    return results, out


def test_per_variant_accuracy_matches_hand_computation(release_results):
    results, _ = release_results
    assert list(results["variants"]) == list(VARIANTS)
    for variant, expected in EXPECTED_ACCURACY.items():
        assert results["variants"][variant]["accuracy"] == pytest.approx(expected, **APPROX), (
            variant
        )
        assert results["variants"][variant]["n"] == 18


def test_gaps_and_categories_match_hand_computation(release_results):
    results, _ = release_results
    assert results["bg_gap"] == pytest.approx(EXPECTED_BG_GAP, **APPROX)
    assert results["same_minus_next"] == pytest.approx(EXPECTED_SAME_MINUS_NEXT, **APPROX)
    assert results["original_minus_only_fg"] == pytest.approx(
        EXPECTED_ORIGINAL_MINUS_ONLY_FG, **APPROX
    )
    cats = results["categories"]
    for name, expected in EXPECTED_CATEGORIES.items():
        assert cats[name] == pytest.approx(expected, **APPROX), name
    assert set(cats) == set(EXPECTED_CATEGORIES)  # fractions only
    assert results["categories_n"] == 18
    assert results["categories_roles"] == {
        "full": "original",
        "foreground": "mixed_rand",
        "background": "only_bg_t",
    }


def test_per_class_accuracy(release_results):
    per_class = release_results[0]["variants"]["original"]["per_class"]
    # Only the two classes photographed in front of another class's background lose an image.
    assert per_class == {
        "dog": 1.0,
        "bird": 1.0,
        "vehicle": 1.0,
        "reptile": 1.0,
        "carnivore": 1.0,
        "insect": 1.0,
        "instrument": 1.0,
        "primate": 0.5,
        "fish": 0.5,
    }


def test_output_files(release_results):
    results, out = release_results
    on_disk = json.loads((out / "results.json").read_text())
    assert on_disk["bg_gap"] == pytest.approx(EXPECTED_BG_GAP)
    assert on_disk["benchmark"] == "in9" and on_disk["model"] == "colour-rule-imagenet-1k"
    assert on_disk["label_protocol"].startswith("argmax over all model classes")
    md = (out / "results.md").read_text()
    assert "BG-GAP = 22.2 points" in md
    # the versions the numbers depend on, recorded and said under the report
    from importlib.metadata import version

    software = on_disk["software"]
    assert software["torch"] == version("torch") and software["timm"] == version("timm")
    assert {"python", "numpy", "pillow", "datasets"} <= set(software)
    assert f"Python {software['python']}, torch {version('torch')}, " in md
    # 14/18 right; Wilson 95%: centre 0.72892, half-width 0.18107 (worked out by hand)
    assert "| mixed_rand | 77.8 | [54.8, 91.0] | 18 | 0 |" in md
    assert on_disk["variants"]["mixed_rand"]["accuracy_ci95"] == pytest.approx(
        [0.54785, 0.90998], abs=1e-4
    )
    lo, hi = on_disk["bg_gap_ci95"]
    assert lo <= EXPECTED_BG_GAP <= hi and on_disk["bootstrap"]["seed"] == 0
    preds = pd.read_parquet(out / "predictions" / "only_fg.parquet")
    assert list(preds.columns) == ["id", "label", "pred", "pred_model", "prob_true"]
    # grey objects on black: the model answers an ImageNet class outside IN-9 -> -1, wrong
    assert (preds.loc[preds["id"].str.endswith("_1"), "pred"] == -1).all()
    assert (out / "accuracy.png").stat().st_size > 1000


def test_restricted_protocol_is_an_option_not_the_default(in9_release):
    model = ColourRuleClassifier()
    restricted = evaluate_model(
        model,
        data=in9_release,
        variants=["only_fg"],
        use_cache=False,
        restrict_to_benchmark=True,
        num_workers=0,
        progress=False,
    )
    # the runner-up "dog" logit now wins for the 9 grey objects: only the dog one is right
    assert restricted["variants"]["only_fg"]["accuracy"] == pytest.approx(10 / 18)
    assert restricted["label_protocol"].startswith("argmax restricted")


def test_nine_class_model_is_scored_directly(in9_release):
    model = ColourRuleClassifier(space="in9")
    results = evaluate_model(
        model,
        data=in9_release,
        variants=["original", "mixed_rand"],
        use_cache=False,
        num_workers=0,
        progress=False,
    )
    assert results["variants"]["original"]["accuracy"] == pytest.approx(16 / 18)
    assert results["variants"]["mixed_rand"]["accuracy"] == pytest.approx(14 / 18)
    assert results["bg_gap"] is None and results["categories"] is None


def test_hub_layout_and_release_layout_give_the_same_numbers(in9_hub, release_results):
    results = evaluate_model(
        ColourRuleClassifier(), data=in9_hub, use_cache=False, num_workers=0, progress=False
    )
    assert results["data"]["kind"] == "hub-folder"
    reference = release_results[0]
    for variant in VARIANTS:
        assert results["variants"][variant] == reference["variants"][variant]
    assert results["categories"] == reference["categories"]


def test_resume_after_interruption_computes_only_the_rest(in9_release, tmp_path):
    class Interrupted(Exception):
        pass

    class Flaky(ColourRuleClassifier):
        fail_after = 8

        def logits(self, x):
            if self.forward_images >= self.fail_after:
                raise Interrupted
            return super().logits(x)

    flaky = Flaky()
    kwargs = dict(
        data=in9_release,
        variants=["mixed_rand"],
        cache_dir=tmp_path,
        batch_size=4,
        num_workers=0,
        progress=False,
    )
    with pytest.raises(Interrupted):
        evaluate_model(flaky, **kwargs)
    resumed_model = ColourRuleClassifier()
    resumed = evaluate_model(resumed_model, **kwargs)
    assert resumed["reused_images"] == 8 and resumed["computed_images"] == 10
    assert resumed_model.forward_images == 10
    assert resumed["variants"]["mixed_rand"]["accuracy"] == pytest.approx(14 / 18)
    again_model = ColourRuleClassifier()
    again = evaluate_model(again_model, **kwargs)
    assert again_model.forward_images == 0 and again["reused_images"] == 18
    assert again["variants"] == resumed["variants"]


def test_worker_processes_give_the_same_predictions_and_start_once_per_run(
    in9_release, release_results
):
    results = evaluate_model(
        ColourRuleClassifier(),
        data=in9_release,
        variants=["mixed_rand", "only_fg", "original"],
        use_cache=False,
        num_workers=2,
        batch_size=5,
        progress=False,
    )
    for variant in ("mixed_rand", "only_fg", "original"):
        assert results["variants"][variant] == release_results[0]["variants"][variant]
    # one pipeline for the run: the workers started once, not once per variant
    assert results["preprocessing"]["decode_pipeline"] == {
        "workers": 2,
        "chosen_by": "--workers",
        "worker_starts": 1,
    }


def test_cli_numbers_and_the_evaluate_module_are_one_implementation(release_results):
    """bgbench evaluate's results equal evaluate.load('metrics/bg_gap') on its predictions."""
    import evaluate

    from tests.test_metric_modules import METRICS_DIR

    results, out = release_results
    frames = [
        pd.read_parquet(out / "predictions" / f"{v}.parquet").assign(variant=v) for v in VARIANTS
    ]
    rows = pd.concat(frames, ignore_index=True)
    module = evaluate.load(str(METRICS_DIR / "bg_gap"), "with_ids")
    scores = module.compute(
        predictions=rows["pred"].tolist(),
        references=rows["label"].tolist(),
        variants=rows["variant"].tolist(),
        ids=rows["id"].tolist(),
    )
    assert scores["bg_gap"] == results["bg_gap"]
    assert scores["same_minus_next"] == results["same_minus_next"]
    for v in VARIANTS:
        assert scores[f"accuracy_{v}"] == results["variants"][v]["accuracy"]
    for name, value in scores["prediction_categories"].items():
        assert value == results["categories"][name]


def test_the_reports_protocol_note_says_how_images_were_decoded_in_words():
    """results.md's (and the Space's) "Protocol:" line: the decode pipeline's record is said
    in words, never printed as a Python dict."""
    from hf_bgbench.tasks.evaluate.summary import protocol_note

    pipeline = {"workers": 0, "chosen_by": "pilot", "pilot_decode_ms_per_image": 5.6}
    body = {
        "label_protocol": "in9-paper",
        "preprocessing": {"input_size": [224, 224], "decode_pipeline": pipeline},
        "bootstrap": {"resamples": 1000, "seed": 0},
    }
    note = protocol_note(body)
    assert "input_size=[224, 224], decoded in the main process (chosen by pilot)" in note
    assert "{" not in note
    pipeline.update(workers=2, chosen_by="--workers")
    assert "decoded in 2 decode worker process(es) (chosen by --workers)" in protocol_note(body)
