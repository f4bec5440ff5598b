"""``evaluate --max-images``: one seeded draw of ids shared by every variant (so gaps stay
paired), its numbers those of the full run's per-image predictions on the ids drawn, and a
run that left images out is recorded as such and kept off the leaderboard. Also the Space's
image budget: a job's total, split over the variants a visitor ticks."""

from __future__ import annotations

import pandas as pd
import pytest

from hf_bgbench.space.settings import task_options
from hf_bgbench.space.views.leaderboard import subset_reason
from hf_bgbench.tasks.evaluate import evaluate_model
from tests.in9_fixture import VARIANTS, ColourRuleClassifier

RUN = dict(use_cache=False, num_workers=0, progress=False)


def _run(data, tmp_path_factory, **options):
    out = tmp_path_factory.mktemp("out")
    return evaluate_model(ColourRuleClassifier(), data=data, output_dir=out, **RUN, **options), out


@pytest.fixture(scope="module")
def full(in9_release, tmp_path_factory):
    return _run(in9_release, tmp_path_factory)


@pytest.fixture(scope="module")
def five(in9_release, tmp_path_factory):
    return _run(in9_release, tmp_path_factory, max_images=5, seed=3)


def _ids(out, variant):
    return sorted(pd.read_parquet(out / "predictions" / f"{variant}.parquet")["id"])


def test_every_variant_scores_the_same_five_images(five):
    results, out = five
    assert {results["variants"][v]["n"] for v in VARIANTS} == {5}
    drawn = results["image_ids"]
    assert len(drawn) == 5
    for variant in VARIANTS:
        assert _ids(out, variant) == sorted(drawn), variant
    assert results["max_images"] == 5


def test_the_subset_numbers_are_the_full_runs_on_the_ids_drawn(full, five):
    (_, full_out), (results, _) = full, five
    drawn = set(results["image_ids"])
    correct = {}
    for variant in VARIANTS:
        frame = pd.read_parquet(full_out / "predictions" / f"{variant}.parquet")
        frame = frame[frame["id"].isin(drawn)]
        correct[variant] = (frame["pred"] == frame["label"]).mean()
        assert results["variants"][variant]["accuracy"] == pytest.approx(correct[variant])
    assert results["bg_gap"] == pytest.approx(correct["mixed_same"] - correct["mixed_rand"])


def test_the_draw_is_seeded_and_recorded(in9_release, tmp_path_factory, five):
    again, _ = _run(in9_release, tmp_path_factory, max_images=5, seed=3, variants=["original"])
    assert again["image_ids"] == five[0]["image_ids"]  # same seed, same images, any variants
    other, _ = _run(in9_release, tmp_path_factory, max_images=5, seed=4, variants=["original"])
    assert other["image_ids"] != five[0]["image_ids"]
    departures = " ".join(five[0]["protocol"]["departures"])
    assert "a seeded subset: at most 5 images per variant" in departures
    assert "original: 5 of 18" in departures
    said = (five[1] / "results.md").read_text()  # said where the numbers are, not only in JSON
    assert "> **Not the published protocol on all of the data:** a seeded subset" in said
    # and in the summary the command prints (before: results.md only)
    from hf_bgbench.render import render_table

    printed = render_table(five[0])
    assert "not the published protocol on all of the data: a seeded subset" in printed


def test_a_subset_is_kept_off_the_leaderboard_and_a_cap_above_the_data_is_not(
    in9_release, tmp_path_factory, full, five
):
    assert "max_images=5" in subset_reason(five[0])
    everything, _ = _run(in9_release, tmp_path_factory, max_images=100)
    assert len(everything["image_ids"]) == 18  # every image, recorded as scored
    assert subset_reason(everything) == subset_reason(full[0]) == ""
    assert not any("seeded subset" in d for d in everything["protocol"]["departures"])
    for variant in VARIANTS:
        assert everything["variants"][variant] == full[0]["variants"][variant]


@pytest.mark.parametrize(
    ("variants", "per_variant"),
    [
        (["original", "mixed_same", "mixed_rand"], 8_333),  # IN-9's default: every image
        ([f"v{i}" for i in range(11)], 2_272),  # ImageNet-E's original + 10 paper edits
    ],
)
def test_the_space_splits_its_image_budget_over_the_variants(monkeypatch, variants, per_variant):
    monkeypatch.delenv("BGBENCH_SPACE_EVALUATE_IMAGES", raising=False)
    assert task_options("evaluate", variants, False)["max_images"] == per_variant
    monkeypatch.setenv("BGBENCH_SPACE_EVALUATE_IMAGES", "0")  # the operator: no budget
    assert task_options("evaluate", variants, False)["max_images"] is None
