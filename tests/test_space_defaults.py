"""What the Space ticks and caps by default on its declared hardware (2 vCPU, no GPU): the
variants a benchmark's headline metrics read, and every capped task's default run within a
share of its time limit by the forward passes it makes (the cost per pass is measured by
bench/space_defaults.py, never timed here)."""

from __future__ import annotations

import pytest

from hf_bgbench.benchmarks import get_benchmark
from hf_bgbench.benchmarks.imagenet_e.edit_names import CONTROL_EDIT, PAPER_ATTRIBUTE_EDITS
from hf_bgbench.space.checks.inputs import default_variants
from hf_bgbench.space.settings import task_options


def test_in9_ticks_the_variants_bg_gap_reads():
    assert get_benchmark("in9").headline_variants == ("original", "mixed_same", "mixed_rand")


def test_imagenet_e_ticks_every_paper_edit_and_not_the_control():
    ticked = get_benchmark("imagenet-e").headline_variants
    assert ticked[0] == get_benchmark("imagenet-e").reference_variant
    assert set(ticked[1:]) == set(PAPER_ATTRIBUTE_EDITS)
    assert CONTROL_EDIT not in ticked


def test_a_dataset_without_the_headline_variants_ticks_all_it_holds(monkeypatch):
    from hf_bgbench.space.checks import inputs

    monkeypatch.setattr(inputs, "variants_of", lambda dataset, benchmark: ["only_fg", "no_fg"])
    assert default_variants("x", "in9") == ["only_fg", "no_fg"]
    monkeypatch.setattr(inputs, "variants_of", lambda d, b: ["only_fg", "mixed_rand", "original"])
    assert default_variants("x", "in9") == ["mixed_rand", "original"]


def noise_passes_per_image() -> int:
    """Forward passes of one image at noise's defaults: the clean one, then every level x
    both regions (object, background) x the trials."""
    from hf_bgbench.tasks import get_task
    from hf_bgbench.tasks.noise.levels import DEFAULT_LEVELS

    defaults = get_task("noise").options()
    return 1 + len(DEFAULT_LEVELS[defaults.norm]) * 2 * defaults.trials


# bench/space_defaults.py: ~0.028 s a forward pass of the bundled model on an idle 2 vCPU
# (36 images/s end to end); the default runs keep within 60 % of the 20-minute limit
PASS_SECONDS, LIMIT, SHARE = 0.028, 1200, 0.6


@pytest.mark.parametrize(
    ("task", "passes"),
    [
        ("noise", lambda o: o["max_images"] * noise_passes_per_image()),
        # at worst no foreground is fooled: every background, and the clean pass
        ("challenge", lambda o: o["max_foregrounds"] * (o["max_backgrounds"] + 1)),
    ],
)
def test_the_capped_default_runs_fit_the_limit(monkeypatch, task, passes):
    for name in (
        "BGBENCH_SPACE_NOISE_IMAGES",
        "BGBENCH_SPACE_FOREGROUNDS",
        "BGBENCH_SPACE_BACKGROUNDS",
    ):
        monkeypatch.delenv(name, raising=False)
    options = task_options(task, [], False)
    assert passes(options) * PASS_SECONDS <= SHARE * LIMIT, options


@pytest.mark.parametrize("benchmark", ["in9", "imagenet-e"])
def test_the_default_evaluate_run_fits_the_limit(monkeypatch, benchmark):
    """Every variant ticked by default, at most its share of the job's image budget each:
    ImageNet-E's 11 ticked variants (original + 10 paper edits) x 4,352 images (about
    22 min) would not fit uncapped."""
    monkeypatch.delenv("BGBENCH_SPACE_EVALUATE_IMAGES", raising=False)
    ticked = list(get_benchmark(benchmark).headline_variants)
    per_variant = task_options("evaluate", ticked, False)["max_images"]
    assert per_variant * len(ticked) * PASS_SECONDS <= SHARE * LIMIT
    if benchmark == "in9":  # BG-GAP's three variants are scored whole (4,050 images each)
        assert per_variant >= 4_050
