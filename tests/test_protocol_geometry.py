"""A model whose native input is not 224 is scored by the published IN-9 protocol: the
benchmark's 224x224 images go in as they are (ToTensor only), unless the user asks for a
resize -- and then the deviation is written everywhere the number goes.

tf_efficientnet_lite2 (bundled, real ImageNet weights) takes 260x260 natively and, being a
CNN, runs on 224x224 as well.
"""

from __future__ import annotations

import json

import pytest
import yaml

from hf_bgbench.cli import main
from hf_bgbench.models import load_classifier
from tests.test_published_protocol import _independent_accuracy, _release_from_photos

ARGS = ["--benchmark", "in9", "--quiet", "--no-cache", "--variants", "original", "mixed_rand"]


@pytest.fixture(scope="module")
def photo_release(shared_data, tmp_path_factory):
    return _release_from_photos(shared_data, tmp_path_factory.mktemp("release"), per_class=2)


def _evaluate(release, out, *extra):
    argv = ["evaluate", "tf_efficientnet_lite2", "--data", str(release), "--output", str(out)]
    assert main([*argv, *ARGS, *extra]) == 0
    return json.loads((out / "results.json").read_text())


def test_non_224_model_gets_the_published_protocol_by_default(photo_release, shared_data, tmp_path):
    results = _evaluate(photo_release, tmp_path / "out")
    # the one deviation: its own normalisation (0.5 / 0.5), not the authors' ImageNet one
    (deviation,) = results["protocol_deviations"]
    assert deviation.startswith("Inputs normalised with the model's own mean (0.5, 0.5, 0.5)")
    assert "mean (0.485, 0.456, 0.406), std (0.229, 0.224, 0.225)" in deviation
    assert results["preprocessing"]["input_size"] == [260, 260]
    assert results["preprocessing"]["applied"] == "precropped"
    clf = load_classifier("tf_efficientnet_lite2", device="cpu")
    pre = clf.preprocessing
    for variant in ("original", "mixed_rand"):
        acc, n = _independent_accuracy(
            clf.model, photo_release, variant, shared_data, pre.mean, pre.std
        )
        assert results["variants"][variant]["n"] == n == 18
        assert results["variants"][variant]["accuracy"] == pytest.approx(acc, abs=1e-12)


def test_resizing_is_an_option_and_is_declared_everywhere(photo_release, tmp_path):
    out = tmp_path / "out"
    results = _evaluate(photo_release, out, "--resize-to-model-input")
    deviation, normalisation = results["protocol_deviations"]
    assert deviation.startswith("resized 224x224 -> 260x260 (bicubic)")
    assert normalisation.startswith("Inputs normalised with the model's own")
    assert results["preprocessing"]["applied"] == "precropped+resized"
    assert f"Protocol deviation:** {deviation}" in (out / "results.md").read_text()
    index = yaml.safe_load((out / "results_model_index.yaml").read_text())["model-index"][0]
    joined = f"{deviation}; {normalisation}"  # every deviation, in the recorded order
    assert {r["dataset"]["args"]["protocol_deviation"] for r in index["results"]} == {joined}
