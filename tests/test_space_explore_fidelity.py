"""The Space's Explore scores an image as the Score tab scores it: the same task set up by the
runner, so the same protocol, head, label map and input geometry -- pinned here, benchmark
by benchmark, by the per-image predictions of an ``evaluate`` run on the same data.

On RIVAL10 the published protocol fits the authors' linear head on a 224x224 stretch of every
photo; before Explore went through the runner it fitted bgbench's own head on the model's
resize-and-crop, and said nothing."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from hf_bgbench.benchmarks import get_benchmark
from hf_bgbench.space.views.explore import explore_image
from hf_bgbench.tasks.evaluate import evaluate_model

QUIET = {"progress": False, "num_workers": 0, "device": "cpu"}


def _imagenet_d(tmp: Path) -> Path:
    from tests.imagenet_d_fixture import write_imagenet_d

    return write_imagenet_d(tmp, clean=True)


def _colour_rule():
    from tests.in9_fixture import ColourRuleClassifier

    return ColourRuleClassifier()


def _index_colour():
    from tests.imagenet_d_fixture import IndexColourClassifier

    return IndexColourClassifier()


CASES = {  # benchmark -> (its data fixture or builder, the model, the images explored)
    "in9": ("in9_release", _colour_rule, 3),
    "rival10": ("rival10_release", lambda: "tf_efficientnet_lite0", 3),
    "imagenet-d": (_imagenet_d, _index_colour, 8),
}


@pytest.mark.parametrize("benchmark", list(CASES))
def test_explore_predicts_what_the_score_run_recorded(benchmark, request, tmp_path):
    data, model, count = CASES[benchmark]
    data = request.getfixturevalue(data) if isinstance(data, str) else data(tmp_path / "data")
    out = tmp_path / "score"
    doc = evaluate_model(
        model(), benchmark=benchmark, data=str(data), output_dir=out, use_cache=False, **QUIET
    )
    spec = get_benchmark(benchmark)
    recorded = {
        (variant, row.id): row
        for variant in doc["variants"]
        for row in pd.read_parquet(out / "predictions" / f"{variant}.parquet").itertuples()
    }
    explored = 0
    for variant in doc["variants"]:
        ids = [i for v, i in recorded if v == variant][:count]
        for image_id in ids:
            shown = explore_image(model(), benchmark, str(data), image_id, device="cpu")
            for seen in shown:
                row = recorded[(seen.variant, image_id)]
                assert seen.prediction == (
                    spec.classes[row.pred]
                    if row.pred >= 0
                    else f"none of {spec.short_name}'s classes"
                ), (seen.variant, image_id)
                if seen.correct:  # the confidence of the true class, as the run recorded it
                    assert seen.confidence == pytest.approx(row.prob_true, abs=1e-4)
                explored += 1
    assert explored >= count
