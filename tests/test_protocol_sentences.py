"""Every sentence a run records about a setting (the protocol's summary and deviations) is
written from the value the run used: each task runs here with settings other than the
paper's, and no recorded sentence may state the paper's value as what was done, while one
names the value used."""

from __future__ import annotations

import re
from typing import Any

import pytest

from hf_bgbench.tasks.attribution import run_attribution
from hf_bgbench.tasks.challenge import run_challenge
from hf_bgbench.tasks.evaluate import evaluate_model
from hf_bgbench.tasks.graying import run_graying
from hf_bgbench.tasks.noise import run_noise
from hf_bgbench.tasks.saliency import run_saliency
from tests.in9_fixture import ColourRuleClassifier
from tests.test_attribution import spot_classifier
from tests.test_noise import MeanColour, Recorder, RegionRule
from tests.test_saliency import GreyClassifier

QUIET = {"progress": False, "num_workers": 0, "device": "cpu"}


def _sentences(doc: dict[str, Any]) -> list[str]:
    protocol = doc["protocol"]
    return [protocol["summary"], *protocol["deviations"], *doc["protocol_deviations"]]


def _check(doc: dict[str, Any], said: str, never: list[str]) -> None:
    """``said`` (a regular expression) is one recorded sentence's; no sentence contains
    any of ``never`` (the paper's value stated as if it were this run's)."""
    sentences = _sentences(doc)
    assert any(re.search(said, s) for s in sentences), (said, sentences)
    for s in sentences:
        for phrase in never:
            assert phrase.lower() not in s.lower(), (phrase, s)


@pytest.fixture(scope="module")
def rival10(rival10_release):
    return rival10_release  # shared, read only (tests/conftest.py)


def test_noise_trials_and_levels_are_the_ones_used(rival10, in9_release):
    # the reported case: --trials 1 recorded "Ten noise trials per image and level"
    doc = run_noise(
        Recorder(),
        rival10,
        benchmark="rival10",
        label_map="imagenet",
        levels=[60, 120],
        trials=1,
        batch_size=8,
        attributes=True,
        **QUIET,
    )
    assert doc["protocol"]["name"] == "rival10-paper" and doc["trials"] == 1
    never = ["ten noise trials", "ten trials", "seven σ", "10 noise trials"]
    _check(doc, r"^1 noise trial per image and level \(--trials\); the paper's text says 10", never)
    _check(doc, r"^Noise levels 60, 120 \(σ x 255, --levels\), not the published 30, 60", never)
    # IN-9's borrowed protocol: the same sentence from the value used
    doc = run_noise(MeanColour(), in9_release, levels=[30], trials=3, **QUIET)
    _check(doc, r"^3 noise trials per image and level \(--trials\)", ["ten noise trials"])
    # the paper's own values: said to be the paper's, and no levels sentence
    doc = run_noise(MeanColour(), in9_release, trials=10, max_images=2, **QUIET)
    _check(doc, r"^10 noise trials per image and level, as the paper's text says", [])
    assert not any(s.startswith("Noise levels") for s in _sentences(doc))


def test_graying_grey_is_the_one_used(in9_release):
    doc = run_graying(RegionRule("bg"), in9_release, gray=0.3, **QUIET)
    _check(doc, r"^Background set to grey: 0\.3 \(--gray\); the paper's: 0\.5", ["0.5 grey"])
    same = run_graying(RegionRule("bg"), in9_release, gray=0.5, **QUIET)
    assert not any("--gray" in s for s in _sentences(same))


def test_saliency_method_and_target_are_the_ones_used(in9_release):
    doc = run_saliency(
        GreyClassifier("object", "in9"),
        str(in9_release),
        method="gradcam++",
        target="true",
        batch_size=6,
        **QUIET,
    )
    never = ["grad-cam against", "grad-cam of the predicted class against"]
    _check(doc, r"^Saliency method: gradcam\+\+ \(--method\); the paper's: gradcam", never)
    _check(doc, r"^Class explained: true \(--target\); the paper's: predicted", never)


def test_attribution_top_k_and_tau_are_the_ones_used(rival10):
    doc = run_attribution(
        spot_classifier(),
        rival10,
        benchmark="rival10",
        label_map="imagenet",
        top_k=1,
        tau=0.3,
        batch_size=4,
        **QUIET,
    )
    never = ["top 10", "0.5 x max", "at 0.5 of its max"]
    _check(doc, r"^Top-activating images per class and feature: 1 \(--top-k\)", never)
    _check(doc, r"^Grad-CAM binarised at this fraction of its maximum: 0\.3 \(--tau\)", never)


@pytest.mark.parametrize("task", ["evaluate", "challenge"])
def test_in9_normalisation_sentence_is_the_models_own(in9_release, task):
    """IN-9's authors normalise every model with ImageNet's mean/std: the sentence names the
    model's own pair (here mean 0, std 1), or is absent when they agree."""
    clf = ColourRuleClassifier()
    if task == "evaluate":
        doc = evaluate_model(clf, data=in9_release, variants=["original"], use_cache=False, **QUIET)
    else:
        doc = run_challenge(clf, in9_release, use_cache=False, max_foregrounds=3, **QUIET)
    _check(
        doc,
        r"^Inputs normalised with the model's own mean \(0, 0, 0\), std \(1, 1, 1\); the "
        r"authors' .* mean \(0\.485, 0\.456, 0\.406\), std \(0\.229, 0\.224, 0\.225\)",
        # one variant scored, 3 foregrounds taken: no sentence may say all were
        ["the eight variants", "every foreground against"],
    )


def test_no_normalisation_sentence_when_the_model_uses_imagenets(in9_release):
    clf = ColourRuleClassifier()
    imagenet = {"mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}
    clf.preprocessing.to_dict = lambda: {**imagenet, "input_size": [64, 64]}
    doc = evaluate_model(clf, data=in9_release, variants=["original"], use_cache=False, **QUIET)
    assert not any("normalised with" in s for s in _sentences(doc))
