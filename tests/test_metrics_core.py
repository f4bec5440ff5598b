"""The functional metric core (hf_bgbench.metrics): hand-computed values, properties, and
errors that name the bad argument."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_bgbench.benchmarks import get_benchmark
from hf_bgbench.metrics import (
    FoolingMatrix,
    accuracy,
    accuracy_by_variant,
    attack_success_rates,
    bg_gap,
    bg_gap_report,
    challenge_accuracy,
    challenge_accuracy_per_class,
    challenge_report,
    delta_density,
    dropped_accuracy,
    dropped_accuracy_report,
    foolable_into_rates,
    fooled_into_background_class_rate,
    instance_rfs,
    max_attack_success_rate_per_class,
    mean_dropped_accuracy,
    prediction_categories,
    prediction_categories_by_id,
    relative_foreground_sensitivity,
    rfs_per_class,
    rfs_per_noise_level,
    rfs_report,
    saliency_alignment,
    saliency_fraction_inside,
    saliency_iou,
    vulnerable_foregrounds,
)
from hf_bgbench.metrics.classification import class_mean
from hf_bgbench.metrics.intervals import class_bootstrap_means, percentile_interval
from hf_bgbench.metrics.saliency import (
    class_mean_gap,
    class_mean_interval,
    saliency_average_precision,
    saliency_mask_coverage,
)
from tests.assertions import assert_close

SETTINGS = settings(max_examples=60, deadline=None)
unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


# ----------------------------------------------------------------------------- IN-9 / BG-GAP

# The core knows no benchmark: the caller passes IN-9's gaps and category views (SPEC §1).
IN9_GAPS = {
    "bg_gap": ("mixed_same", "mixed_rand"),
    "same_minus_next": ("mixed_same", "mixed_next"),
    "original_minus_only_fg": ("original", "only_fg"),
}
IN9_ROLES = {"full": "original", "foreground": "mixed_rand", "background": "only_bg_t"}

GAP_ROWS = dict(
    predictions=[0, 1, 2, 1, 1, 2, 3, 3, 4, 0, 4, 0],
    references=[0, 1, 2, 1, 1, 2, 3, 3, 4, 4, 4, 4],
    variants=["mixed_same"] * 4 + ["mixed_rand"] * 4 + ["mixed_next"] * 4,
    gaps=IN9_GAPS,
)


def test_bg_gap_report_hand_computed():
    out = bg_gap_report(**GAP_ROWS)
    # mixed_same rows 0-3 all right; mixed_rand rows 4-7 all right; mixed_next 2 of 4
    assert out["accuracy_mixed_same"] == 1.0
    assert out["accuracy_mixed_rand"] == 1.0
    assert out["accuracy_mixed_next"] == 0.5
    assert out["bg_gap"] == 0.0
    assert out["same_minus_next"] == 0.5
    assert "original_minus_only_fg" not in out


def test_bg_gap_report_gap_and_other_differences():
    out = bg_gap_report(
        predictions=[0, 1, 0, 2, 5, 5, 5, 0],
        references=[0, 1, 1, 1, 5, 5, 5, 5],
        variants=["mixed_same"] * 2 + ["mixed_rand"] * 2 + ["original"] * 2 + ["only_fg"] * 2,
        gaps=IN9_GAPS,
    )
    assert out["accuracy_mixed_same"] == 1.0
    assert out["accuracy_mixed_rand"] == 0.0
    assert out["bg_gap"] == 1.0
    assert out["original_minus_only_fg"] == 0.5
    assert "same_minus_next" not in out


def test_bg_gap_scalar_and_range_check():
    assert bg_gap(0.862, 0.789) == pytest.approx(0.073)
    with pytest.raises(ValueError, match="accuracy_mixed_rand"):
        bg_gap(0.5, 1.5)


def test_bg_gap_report_needs_both_mixed_variants():
    with pytest.raises(ValueError, match="`variants`.*mixed_rand.*bg_gap needs both mixed_same"):
        bg_gap_report(predictions=[0], references=[0], variants=["mixed_same"], gaps=IN9_GAPS)


def test_gaps_and_views_come_from_the_caller():
    """Any benchmark's gaps: the first is the headline (required), the others when present."""
    rows = dict(predictions=[0, 1, 1, 1, 1], references=[0, 1, 1, 1, 0], variants=[*"aabbc"])
    out = bg_gap_report(**rows, gaps={"a_minus_b": ("a", "b"), "a_minus_z": ("a", "z")})
    assert out == {"accuracy_a": 1.0, "accuracy_b": 1.0, "accuracy_c": 0.0, "a_minus_b": 0.0}
    with pytest.raises(ValueError, match="a_minus_z needs both a and z"):
        bg_gap_report(**rows, gaps={"a_minus_z": ("a", "z")})
    with pytest.raises(ValueError, match="`gaps` must map gap names"):
        bg_gap_report(**rows, gaps={})
    with pytest.raises(ValueError, match="`gaps`: 'x' must map to two variant names"):
        bg_gap_report(**rows, gaps={"x": ("a",)})
    with pytest.raises(ValueError, match="`category_roles` is required with `ids`"):
        bg_gap_report(**rows, ids=["1", "2", "3", "4", "5"], gaps={"a_minus_b": ("a", "b")})
    with pytest.raises(ValueError, match="`category_roles` must map full, foreground"):
        prediction_categories_by_id(**rows, ids=["1"] * 5, category_roles={"full": "a"})
    views = {"full": "a", "foreground": "b", "background": "c"}
    one = dict(predictions=[1, 1, 2], references=[1, 1, 1], variants=["a", "b", "c"])
    assert prediction_categories_by_id(**one, ids=["i"] * 3, category_roles=views) == (
        prediction_categories([1], [1], [2], [1])
    )


IN9_VARIANTS = ("original", "only_bg_b", "only_bg_t", "no_fg", "only_fg")
IN9_VARIANTS += ("mixed_same", "mixed_rand", "mixed_next")


def test_unknown_variant_is_named():
    with pytest.raises(ValueError, match="`variants`.*mixed-rand.*did you mean 'mixed_rand'"):
        accuracy_by_variant(
            [0, 1], [0, 1], ["mixed_same", "mixed-rand"], valid_variants=IN9_VARIANTS
        )
    # Without valid_variants (the default) any name is accepted.
    assert accuracy_by_variant([0, 1], [0, 1], ["a", "b"]) == {"a": 1.0, "b": 1.0}


def test_benchmark_values_come_from_the_caller():
    rows = dict(
        predictions=[0, 8, -1, 1],
        references=[0, 8, 1, 1],
        variants=["mixed_same", "mixed_same", "mixed_rand", "mixed_rand"],
    )
    # IN-9's values accept IN-9 rows and give the same numbers as no checks at all.
    checked = bg_gap_report(**rows, gaps=IN9_GAPS, valid_variants=IN9_VARIANTS, num_classes=9)
    assert checked == bg_gap_report(**rows, gaps=IN9_GAPS)
    assert checked == {"accuracy_mixed_rand": 0.5, "accuracy_mixed_same": 1.0, "bg_gap": 0.5}
    with pytest.raises(ValueError, match=r"`references` has 1 value\(s\) out of range \[0, 9\)"):
        bg_gap_report(**{**rows, "references": [0, 207, 1, 1]}, gaps=IN9_GAPS, num_classes=9)
    with pytest.raises(ValueError, match=r"`predictions` has 1 value\(s\) out of range \[-1, 9\)"):
        bg_gap_report(**{**rows, "predictions": [0, 9, 1, 1]}, gaps=IN9_GAPS, num_classes=9)


def test_the_core_imports_only_numpy_and_itself():
    """Benchmark-agnostic and inlinable: no registry, no torch, no evaluate."""
    import ast
    import sys
    from pathlib import Path

    import hf_bgbench.metrics

    for path in Path(hf_bgbench.metrics.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            for name in names:
                allowed = name.split(".")[0] in sys.stdlib_module_names | {"numpy"}
                assert allowed or name.startswith("hf_bgbench.metrics"), f"{path.name}: {name}"


def _one_row_per_image(rows: list[tuple], names=("mixed_same", "mixed_rand", "mixed_next")):
    """``rows`` (prediction, reference, name) padded with (0, 0, name) rows until every name
    present has as many rows: a gap (or a drop) compares the same images, so without ids each
    of its variants has one row per image (unequal counts are an error)."""
    counts = {n: sum(r[2] == n for r in rows) for n in names}
    most = max(counts.values())
    return rows + [(0, 0, n) for n, c in counts.items() if c for _ in range(most - c)]


@SETTINGS
@given(
    st.lists(
        st.tuples(
            st.integers(-1, 8),
            st.integers(0, 8),
            st.sampled_from(["mixed_same", "mixed_rand", "mixed_next", "original"]),
        ),
        min_size=1,
        max_size=60,
    ),
    st.randoms(use_true_random=False),
)
def test_bg_gap_is_difference_and_row_order_free(rows, rnd):
    rows = _one_row_per_image(rows + [(0, 0, "mixed_same"), (1, 2, "mixed_rand")])
    pred, ref, var = map(list, zip(*rows, strict=True))
    out = bg_gap_report(pred, ref, var, gaps=IN9_GAPS)
    assert out["bg_gap"] == pytest.approx(out["accuracy_mixed_same"] - out["accuracy_mixed_rand"])
    p, r, v = np.array(pred), np.array(ref), np.array(var)
    same, rand = v == "mixed_same", v == "mixed_rand"
    assert out["bg_gap"] == pytest.approx(accuracy(p[same], r[same]) - accuracy(p[rand], r[rand]))
    shuffled = rows[:]
    rnd.shuffle(shuffled)
    pred2, ref2, var2 = map(list, zip(*shuffled, strict=True))
    assert_close(bg_gap_report(pred2, ref2, var2, gaps=IN9_GAPS), out)


def test_prediction_categories_by_id_aligns_views():
    # image a: full right, fg (mixed_rand) wrong, bg right -> bg_required
    # image b: full wrong (3), fg right, bg predicts 3 -> bg_fools
    # image c: only two of the three views -> ignored
    out = prediction_categories_by_id(
        predictions=[1, 0, 1, 3, 1, 3, 1, 1],
        references=[1, 1, 1, 1, 1, 1, 1, 1],
        variants=["original", "mixed_rand", "only_bg_t"] * 2 + ["original", "mixed_rand"],
        ids=["a", "a", "a", "b", "b", "b", "c", "c"],
        category_roles=IN9_ROLES,
    )
    assert out == {
        "bg_required": 0.5,
        "bg_fg_required": 0.0,
        "bg_irrelevant": 0.0,
        "bg_fools": 0.5,
        "other": 0.0,
    }
    assert out == prediction_categories([1, 3], [0, 1], [1, 3], [1, 1])


def test_prediction_categories_by_id_errors():
    with pytest.raises(ValueError, match="`ids`.*no image id"):
        prediction_categories_by_id(
            [0, 0], [0, 0], ["original", "mixed_rand"], ["a", "a"], category_roles=IN9_ROLES
        )
    with pytest.raises(ValueError, match="`ids` repeats"):
        prediction_categories_by_id(
            [0, 0], [0, 0], ["original", "original"], ["a", "a"], category_roles=IN9_ROLES
        )
    with pytest.raises(ValueError, match="`ids` has 1"):
        prediction_categories_by_id(
            [0, 0], [0, 0], ["original", "mixed_rand"], ["a"], category_roles=IN9_ROLES
        )


# ----------------------------------------------------------------------------- challenge

# 3 foregrounds (classes 0, 1, 2) x 3 backgrounds (classes 0, 1, 2)
MATRIX = FoolingMatrix.from_arrays(
    [[0, 1, 0], [1, 1, 0], [2, 2, 2]], foreground_labels=[0, 1, 2], background_labels=[0, 1, 2]
)


def test_challenge_hand_computed():
    assert vulnerable_foregrounds(MATRIX).tolist() == [True, True, False]
    assert challenge_accuracy([True, True, False]) == pytest.approx(1 / 3)
    # bg 1 (class 1) flips fg 0 into 1 out of the two non-class-1 foregrounds
    assert attack_success_rates(MATRIX).tolist() == [0.0, 0.5, 0.0]
    assert max_attack_success_rate_per_class(MATRIX) == {0: 0.0, 1: 0.5, 2: 0.0}
    assert foolable_into_rates(MATRIX) == {0: 0.0, 1: 0.5, 2: 0.0}
    # fg 1 is vulnerable (bg 2 makes it "0"), but not into the background's class
    assert fooled_into_background_class_rate(MATRIX) == pytest.approx(1 / 3)
    report = challenge_report(MATRIX)
    assert report["challenge_accuracy"] == pytest.approx(1 / 3)
    assert report["challenge_accuracy_per_class"] == {0: 0.0, 1: 0.0, 2: 1.0}


def test_challenge_foolable_needs_some_background_of_the_class():
    # Two class-1 backgrounds; each fools a different class-0 foreground into 1.
    m = FoolingMatrix.from_arrays(
        [[1, 0, 0], [0, 1, 0], [0, 0, 0], [1, 1, 1]], [0, 0, 0, 1], [1, 1, 0]
    )
    assert foolable_into_rates(m) == {0: 0.0, 1: pytest.approx(2 / 3)}
    assert attack_success_rates(m).tolist() == pytest.approx([1 / 3, 1 / 3, 0.0])
    assert max_attack_success_rate_per_class(m) == {0: 0.0, 1: pytest.approx(1 / 3)}


def test_constant_model_scores_its_class_share():
    labels = np.repeat(np.arange(9), 5)
    m = FoolingMatrix.from_arrays(np.zeros((45, 45), dtype=int), labels, labels)
    assert challenge_accuracy(vulnerable_foregrounds(m)) == pytest.approx(1 / 9)
    # the dog (0) backgrounds "fool" every non-dog foreground into dog
    assert foolable_into_rates(m)[0] == 1.0
    assert fooled_into_background_class_rate(m) == pytest.approx(8 / 9)


def test_unmapped_prediction_is_vulnerable_but_never_fooled_into():
    m = FoolingMatrix.from_arrays([[-1, -1]], [0], [1, 2])
    assert vulnerable_foregrounds(m).tolist() == [True]
    assert fooled_into_background_class_rate(m) == 0.0
    assert attack_success_rates(m).tolist() == [0.0, 0.0]


def test_asr_undefined_when_all_foregrounds_share_the_class():
    m = FoolingMatrix.from_arrays([[1, 1]], [1], [1, 0])
    asr = attack_success_rates(m)
    assert math.isnan(asr[0]) and asr[1] == 0.0
    assert max_attack_success_rate_per_class(m) == {0: 0.0}
    assert foolable_into_rates(m) == {0: 0.0}


def test_fooling_matrix_from_rows_and_errors():
    m = FoolingMatrix.from_rows([0, 1, 2], [[0, 1, 0], [1, 1, 0], [2, 2, 2]], [0, 1, 2])
    assert challenge_report(m) == challenge_report(MATRIX)
    with pytest.raises(ValueError, match="`predictions` row 1 has 2"):
        FoolingMatrix.from_rows([0, 1], [[0, 1, 0], [1, 1]], [0, 1, 2])
    with pytest.raises(ValueError, match="`background_labels` has 2"):
        FoolingMatrix.from_arrays([[0, 1, 0]], [0], [0, 1])
    with pytest.raises(ValueError, match="`foreground_labels` has 2"):
        FoolingMatrix.from_arrays([[0, 1, 0]], [0, 1], [0, 1, 2])
    with pytest.raises(ValueError, match="`background_labels`.*out of range"):
        FoolingMatrix.from_arrays([[0, 1, 0]], [0], [0, 1, 9], num_classes=9)
    with pytest.raises(ValueError, match="`predictions`.*out of range"):
        FoolingMatrix.from_arrays([[0, 1, -2]], [0], [0, 1, 2])
    with pytest.raises(ValueError, match="`predictions` must be a 2-D"):
        FoolingMatrix.from_arrays([0, 1], [0], [0, 1])
    with pytest.raises(ValueError, match="`vulnerable` is empty"):
        challenge_accuracy([])
    with pytest.raises(ValueError, match="`vulnerable` must hold booleans"):
        challenge_accuracy([0, 2])
    with pytest.raises(ValueError, match="same length"):
        challenge_accuracy_per_class([True], [0, 1])


# ----------------------------------------------------------------------------- RFS


@pytest.mark.parametrize(
    "a_fg, a_bg, expected",
    [
        (0.0, 1.0, 1.0),
        (1.0, 0.0, -1.0),
        (0.5, 1.0, 1.0),  # ā = .75, max possible gap .5
        (0.8, 0.9, 1 / 3),  # ā = .85: .1 / (2 * .15)
        (0.2, 0.4, 1 / 3),  # ā = .3: .2 / (2 * .3)
        (0.6, 0.6, 0.0),
        (1.0, 1.0, 0.0),  # min(ā, 1 - ā) = 0: defined as 0
        (0.0, 0.0, 0.0),
    ],
)
def test_rfs_hand_computed(a_fg, a_bg, expected):
    assert relative_foreground_sensitivity(a_fg, a_bg) == pytest.approx(expected)


def test_rfs_rejects_accuracies_outside_unit_interval():
    with pytest.raises(ValueError, match="`accuracy_bg_noise`"):
        relative_foreground_sensitivity(0.5, 1.2)
    with pytest.raises(ValueError, match="`accuracy_fg_noise`"):
        relative_foreground_sensitivity(float("nan"), 0.5)


@SETTINGS
@given(unit, unit)
def test_rfs_bounded_and_antisymmetric(a_fg, a_bg):
    value = relative_foreground_sensitivity(a_fg, a_bg)
    assert -1.0 <= value <= 1.0
    assert relative_foreground_sensitivity(a_bg, a_fg) == pytest.approx(-value, abs=1e-12)


@SETTINGS
@given(st.lists(st.tuples(unit, unit), min_size=1, max_size=40))
def test_irfs_bounded_and_antisymmetric(pairs):
    p_fg, p_bg = map(list, zip(*pairs, strict=True))
    values = instance_rfs(p_fg, p_bg)
    assert np.all((values >= -1.0) & (values <= 1.0))
    np.testing.assert_allclose(instance_rfs(p_bg, p_fg), -values, atol=1e-12)


def test_irfs_averages_trials_per_instance():
    # image a: trials (0.2, 0.6) and (0.4, 0.8) -> means (0.3, 0.7): ā = .5, RFS = .4
    # image b: one trial (1.0, 1.0) -> 0 by definition
    values = instance_rfs([0.2, 1.0, 0.4], [0.6, 1.0, 0.8], instance_ids=["a", "b", "a"])
    np.testing.assert_allclose(values, [0.4, 0.0])
    with pytest.raises(ValueError, match="`instance_ids` has 2"):
        instance_rfs([0.2, 0.3, 0.4], [0.6, 0.6, 0.8], instance_ids=["a", "b"])
    with pytest.raises(ValueError, match="`probabilities_bg_noise`"):
        instance_rfs([0.2], [1.5])


NOISE_ROWS = dict(
    predictions_fg_noise=[0, 1, 2, 2, 0, 0],
    predictions_bg_noise=[0, 1, 1, 3, 0, 3],
    references=[0, 1, 1, 3, 0, 3],
)


def test_rfs_report_hand_computed():
    out = rfs_report(**NOISE_ROWS, noise_levels=[0.1, 0.1, 0.1, 0.1, 0.2, 0.2])
    # a_fg = 3/6, a_bg = 6/6: ā = .75 -> (1 - .5) / (2 * .25) = 1
    assert out["accuracy_fg_noise"] == 0.5
    assert out["accuracy_bg_noise"] == 1.0
    assert out["rfs"] == pytest.approx(1.0)
    assert out["rfs_per_class"] == pytest.approx({0: 0.0, 1: 1.0, 3: 1.0})
    # level .1: a_fg 2/4, a_bg 1 -> 1; level .2: a_fg 1/2, a_bg 1 -> 1
    assert out["rfs_per_noise_level"] == pytest.approx({0.1: 1.0, 0.2: 1.0})
    assert out["rfs_mean_over_noise_levels"] == pytest.approx(1.0)
    assert rfs_per_class(**NOISE_ROWS) == out["rfs_per_class"]
    assert "irfs_mean" not in out


def test_rfs_report_irfs_per_class_and_level():
    out = rfs_report(
        [0, 0, 0, 0],
        [0, 0, 0, 0],
        [0, 0, 1, 1],
        probabilities_fg_noise=[0.3, 0.2, 0.5, 1.0],
        probabilities_bg_noise=[0.7, 0.2, 0.5, 1.0],
        noise_levels=[1.0, 2.0, 1.0, 2.0],
    )
    # per-image iRFS: .4/(2*.5) = .4, 0, 0, 0 (the last at ā = 1)
    assert out["irfs_mean"] == pytest.approx(0.1)
    assert out["irfs_per_class"] == pytest.approx({0: 0.2, 1: 0.0})
    assert out["irfs_mean_per_noise_level"] == pytest.approx({1.0: 0.2, 2.0: 0.0})


def test_rfs_report_groups_trials_within_a_noise_level():
    out = rfs_report(
        [0] * 4,
        [0] * 4,
        [0] * 4,
        probabilities_fg_noise=[0.2, 0.4, 0.1, 0.1],
        probabilities_bg_noise=[0.6, 0.8, 0.1, 0.1],
        noise_levels=[1, 1, 2, 2],
        instance_ids=["a", "a", "a", "a"],
    )
    # (a, 1): means (.3, .7) -> .4; (a, 2): (.1, .1) -> 0
    assert out["irfs_mean"] == pytest.approx(0.2)
    assert out["irfs_mean_per_noise_level"] == pytest.approx({1.0: 0.4, 2.0: 0.0})


def test_rfs_report_errors_name_the_argument():
    with pytest.raises(ValueError, match="`probabilities_bg_noise` is missing"):
        rfs_report(**NOISE_ROWS, probabilities_fg_noise=[0.5] * 6)
    with pytest.raises(ValueError, match="`instance_ids` only apply"):
        rfs_report(**NOISE_ROWS, instance_ids=list("abcdef"))
    with pytest.raises(ValueError, match="same length.*`references` has 5"):
        rfs_report([0] * 6, [0] * 6, [0] * 5)
    with pytest.raises(ValueError, match="`noise_levels`"):
        rfs_per_noise_level(**NOISE_ROWS, noise_levels=[0.1] * 5)
    with pytest.raises(ValueError, match="`references` differ"):
        rfs_report(
            [0, 0], [0, 0], [0, 1], probabilities_fg_noise=[0.1, 0.1],
            probabilities_bg_noise=[0.1, 0.1], instance_ids=["a", "a"],
        )  # fmt: skip


@SETTINGS
@given(
    st.lists(
        st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 3), unit, unit),
        min_size=1,
        max_size=40,
    ),
    st.randoms(use_true_random=False),
)
def test_rfs_report_row_order_free_and_swap_negates(rows, rnd):
    def report(rs):
        pf, pb, ref, qf, qb = map(list, zip(*rs, strict=True))
        return rfs_report(pf, pb, ref, probabilities_fg_noise=qf, probabilities_bg_noise=qb)

    out = report(rows)
    shuffled = rows[:]
    rnd.shuffle(shuffled)
    assert_close(report(shuffled), out)
    swapped = report([(b, a, r, qb, qa) for a, b, r, qa, qb in rows])
    assert swapped["rfs"] == pytest.approx(-out["rfs"], abs=1e-12)
    assert swapped["irfs_mean"] == pytest.approx(-out["irfs_mean"], abs=1e-12)
    assert -1.0 <= out["rfs"] <= 1.0


# ----------------------------------------------------------------------------- saliency


def _example():
    saliency = np.zeros((4, 4))
    saliency[0, 0], saliency[0, 1], saliency[3, 3] = 4.0, 2.0, 1.0
    mask = np.zeros((4, 4), dtype=np.uint8)
    mask[:2, :2] = 255
    return saliency, mask


def test_saliency_scores_hand_computed():
    saliency, mask = _example()
    # normalised: 1, .5 inside, .25 outside; >= .5 -> 2 hot pixels, both inside a 4-pixel mask
    assert saliency_iou(saliency, mask) == pytest.approx(2 / 4)
    assert saliency_fraction_inside(saliency, mask) == pytest.approx(6 / 7)
    # mean inside (1 + .5) / 4, mean outside .25 / 12
    assert delta_density(saliency, mask) == pytest.approx(1.5 / 4 - 0.25 / 12)
    assert saliency_iou(saliency, mask, threshold=0.25) == pytest.approx(2 / 5)


def test_saliency_undefined_cases_are_nan():
    saliency, mask = _example()
    empty = np.zeros_like(mask)
    full = np.ones_like(mask)
    assert saliency_iou(np.zeros((4, 4)), mask) == 0.0
    assert math.isnan(saliency_iou(np.zeros((4, 4)), empty))
    assert math.isnan(saliency_fraction_inside(np.zeros((4, 4)), mask))
    assert math.isnan(delta_density(saliency, empty))
    assert math.isnan(delta_density(saliency, full))


def test_saliency_batch_matches_single_and_mean_skips_nan():
    saliency, mask = _example()
    batch_s = np.stack([saliency, saliency.T, np.zeros((4, 4))])
    batch_m = np.stack([mask, mask, mask])
    ious = saliency_iou(batch_s, batch_m)
    singles = [saliency_iou(s, m) for s, m in zip(batch_s, batch_m, strict=True)]
    assert ious.tolist() == pytest.approx(singles)
    summary = saliency_alignment(batch_s, batch_m)
    assert summary["saliency_iou"] == pytest.approx(np.mean(ious))
    frac = saliency_fraction_inside(batch_s, batch_m)
    assert summary["saliency_fraction_inside"] == pytest.approx(np.nanmean(frac))
    assert summary["num_undefined_saliency_fraction_inside"] == 1
    assert summary["num_undefined_saliency_iou"] == 0


def test_saliency_errors_name_the_argument():
    saliency, mask = _example()
    with pytest.raises(ValueError, match="`masks` has shape"):
        saliency_iou(saliency, mask[:2])
    with pytest.raises(ValueError, match="`saliency` has negative"):
        delta_density(-saliency, mask)
    with pytest.raises(ValueError, match="`threshold`"):
        saliency_iou(saliency, mask, threshold=0.0)
    with pytest.raises(ValueError, match="`saliency` must be"):
        saliency_fraction_inside(np.ones(3), np.ones(3))


@SETTINGS
@given(st.integers(0, 2**32 - 1))
def test_saliency_scores_in_range(seed):
    rng = np.random.default_rng(seed)
    s = rng.random((3, 6, 6)) * rng.integers(0, 2, (3, 6, 6))
    m = rng.integers(0, 2, (3, 6, 6))
    for values, low in ((saliency_iou(s, m), 0), (saliency_fraction_inside(s, m), 0)):
        v = values[~np.isnan(values)]
        assert np.all((v >= low) & (v <= 1))
    d = delta_density(s, m)
    d = d[~np.isnan(d)]
    assert np.all((d >= -1) & (d <= 1))


def test_saliency_average_precision_hand_computed():
    saliency, mask = _example()
    # ranked: 4 (object), 2 (object), 1 (background), then 13 tied zeros holding the other 2
    # object pixels: P = 1 at R = 1/4 and 2/4; 2/3 at R = 2/4; 4/16 at R = 1
    assert saliency_average_precision(saliency, mask) == pytest.approx(
        0.25 * 1 + 0.25 * 1 + 0.5 * 4 / 16
    )
    # ties enter together: 0.9 (object), then {0.5 background, 0.5 object}, then 0.1:
    # P = 1 at R = 1/2, P = 2/3 at R = 1 (not 1, as an object-first order of the tie would give)
    tied = np.array([[0.9, 0.5], [0.5, 0.1]])
    assert saliency_average_precision(tied, np.array([[1, 0], [1, 0]])) == pytest.approx(5 / 6)
    assert saliency_average_precision(tied, np.array([[1, 1], [0, 0]])) == pytest.approx(5 / 6)
    assert saliency_average_precision(tied, np.array([[1, 0], [0, 0]])) == 1.0
    assert saliency_average_precision(tied, np.array([[0, 0], [0, 1]])) == pytest.approx(1 / 4)
    # a map that ranks nothing: precision is the mask's area at the only threshold
    assert saliency_average_precision(np.zeros((4, 4)), mask) == pytest.approx(4 / 16)
    assert math.isnan(saliency_average_precision(saliency, np.zeros_like(mask)))
    assert saliency_average_precision(saliency, np.ones_like(mask)) == 1.0


def test_saliency_mask_coverage_hand_computed():
    saliency, mask = _example()
    # ascending 0 (x13), 1, 2, 4; total 7; running sum first exceeds 1.75 at 2, 3.5 and
    # 5.25 at 4: cuts 2, 4, 4 -> {4, 2} covers 2 of the 4 mask pixels, {4} covers 1
    assert saliency_mask_coverage(saliency, mask).tolist() == pytest.approx([0.5, 0.25, 0.25])
    # "exceeds", not "reaches": 0, 1, 1, 2 (total 4); at t = 0.5 the running sum is 2 after
    # the second 1 -- not above 2 -- so the cut is 2 and the 1 on the mask is left out
    steps = np.array([[0.0, 1.0], [1.0, 2.0]])
    on_a_one = np.array([[0, 1], [0, 0]])
    assert saliency_mask_coverage(steps, on_a_one).tolist() == [1.0, 0.0, 0.0]
    assert saliency_mask_coverage(steps, on_a_one, thresholds=[0.2]).tolist() == [1.0]
    # an all-zero map selects nothing (the authors' cut of 1); an empty mask is undefined
    assert saliency_mask_coverage(np.zeros((4, 4)), mask).tolist() == [0.0, 0.0, 0.0]
    assert np.isnan(saliency_mask_coverage(saliency, np.zeros_like(mask))).all()
    # a mask over the whole image: coverage is the share of pixels selected ({4, 2}: 2/16)
    assert saliency_mask_coverage(saliency, np.ones_like(mask))[0] == pytest.approx(2 / 16)


def test_saliency_ap_and_coverage_batches_match_single_images():
    saliency, mask = _example()
    batch_s = np.stack([saliency, saliency.T, np.zeros((4, 4))])
    batch_m = np.stack([mask, mask, np.zeros_like(mask)])
    ap = saliency_average_precision(batch_s, batch_m)
    cov = saliency_mask_coverage(batch_s, batch_m)
    assert ap.shape == (3,) and cov.shape == (3, 3)
    for i in range(2):
        assert ap[i] == pytest.approx(saliency_average_precision(batch_s[i], batch_m[i]))
        assert cov[i].tolist() == pytest.approx(saliency_mask_coverage(batch_s[i], batch_m[i]))
    assert np.isnan(ap[2]) and np.isnan(cov[2]).all()


def _reference_ap(sal: np.ndarray, mask: np.ndarray) -> float:
    """AP written out: over the distinct values, highest first, (R - R_prev) * P."""
    sal, mask = sal.ravel(), mask.ravel() > 0
    total, ap, prev_recall = mask.sum(), 0.0, 0.0
    for value in sorted(set(sal.tolist()), reverse=True):
        chosen = sal >= value
        hits = (chosen & mask).sum()
        recall = hits / total
        ap += (recall - prev_recall) * hits / chosen.sum()
        prev_recall = recall
    return ap


def _reference_coverage(sal: np.ndarray, mask: np.ndarray, t: float) -> float:
    """Mask coverage written out: walk the ascending values until the sum passes t * total."""
    values = sorted(sal.ravel().tolist())
    total, running, cut = sum(values), 0.0, 1.0
    if total > 0:
        for value in values:
            running += value
            if running > t * total:
                cut = value
                break
    chosen = (sal >= cut) & (sal > 0)
    return (chosen & (mask > 0)).sum() / (mask > 0).sum()


@SETTINGS
@given(st.integers(0, 2**32 - 1))
def test_saliency_ap_and_coverage_match_their_definitions(seed):
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 4, (3, 5, 6)) * rng.random() if seed % 2 else rng.random((3, 5, 6))
    s = s * rng.integers(0, 2, s.shape)  # zeros and (for odd seeds) ties
    m = rng.integers(0, 2, s.shape)
    m[:, 0, 0] = 1
    ap = saliency_average_precision(s, m)
    cov = saliency_mask_coverage(s, m, thresholds=(0.1, 0.25, 0.5, 0.75, 0.9))
    for i in range(3):
        assert ap[i] == pytest.approx(_reference_ap(s[i], m[i]), abs=1e-12)
        expected = [_reference_coverage(s[i], m[i], t) for t in (0.1, 0.25, 0.5, 0.75, 0.9)]
        assert cov[i].tolist() == pytest.approx(expected, abs=1e-12)
    assert np.all((ap >= 0) & (ap <= 1)) and np.all((cov >= 0) & (cov <= 1))
    assert np.all(np.diff(cov, axis=1) <= 0)  # more saliency, a higher cut: less coverage


def test_saliency_ap_and_coverage_errors_name_the_argument():
    saliency, mask = _example()
    with pytest.raises(ValueError, match="`masks` has shape"):
        saliency_average_precision(saliency, mask[:2])
    with pytest.raises(ValueError, match="`saliency` has negative"):
        saliency_mask_coverage(-saliency, mask)
    with pytest.raises(ValueError, match="`saliency` holds NaN"):
        saliency_average_precision(np.full((2, 2), np.nan), np.ones((2, 2)))
    for bad in ((0.0, 0.5), (0.5, 1.0), (), ("a",), ((0.5,),)):
        with pytest.raises(ValueError, match="`thresholds`"):
            saliency_mask_coverage(saliency, mask, thresholds=bad)


def _authors_class_mean(values, groups, num_classes):
    """The RIVAL10 authors' aggregation written out: np.nanmean per class, then the mean
    over the classes that have a value."""
    means = []
    for c in range(num_classes):
        mine = [v for v, g in zip(values, groups, strict=True) if g == c]
        if any(not math.isnan(v) for v in mine):
            means.append(float(np.nanmean(mine)))
    return sum(means) / len(means) if means else math.nan


def test_class_mean_hand_computed():
    values = [1.0, 0.0, 0.5, math.nan, 0.2, math.nan, 0.9, 0.3]
    groups = [0, 0, 0, 1, 1, 2, -1, 0]
    per_class, overall = class_mean(values, groups, 4)
    # class 0: (1 + 0 + .5 + .3) / 4; class 1: .2 (its NaN skipped); class 2 only NaN and
    # class 3 never seen: left out; the -1 image is in no class
    assert per_class[:2].tolist() == pytest.approx([0.45, 0.2])
    assert np.isnan(per_class[2:]).all()
    assert overall == pytest.approx((0.45 + 0.2) / 2)
    assert overall == pytest.approx(_authors_class_mean(values, groups, 4))
    image_mean = np.nanmean([v for v, g in zip(values, groups, strict=True) if g >= 0])
    assert overall != pytest.approx(image_mean)  # class-imbalanced: not the image mean
    nothing, undefined = class_mean([math.nan, 1.0], [0, -1], 3)
    assert np.isnan(nothing).all() and math.isnan(undefined)


@SETTINGS
@given(st.integers(0, 2**32 - 1))
def test_class_mean_matches_the_authors_formula(seed):
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(1, 40)), int(rng.integers(1, 6))
    groups = rng.integers(-1, k, n)
    values = np.where(rng.random(n) < 0.2, np.nan, rng.normal(size=n))
    per_class, overall = class_mean(values, groups, k)
    expected = _authors_class_mean(values.tolist(), groups.tolist(), k)
    assert (math.isnan(overall) and math.isnan(expected)) or overall == pytest.approx(expected)
    assert len(per_class) == k


def test_class_mean_interval_resamples_images_within_classes():
    # class 0: five images of 0.5 (no spread); class 1: 0 and 1, whose resampled mean is
    # 0, 0.5 or 1 with chances 1/4, 1/2, 1/4; the statistic (0.5 + m1) / 2 has 2.5 % and
    # 97.5 % quantiles 0.25 and 0.75. (A bootstrap of the mean over images would spread
    # differently: it is (2.5 + k) / 7 for k ones drawn.) The NaN and the -1 image are left
    # out; class 2 is never seen.
    values = [0.5] * 5 + [0.0, 1.0, np.nan, 0.9]
    groups = [0] * 5 + [1, 1, 0, -1]
    assert class_mean(values, groups, 3)[1] == pytest.approx(0.5)
    # the stratified bootstrap itself, over the images that enter it
    kept = [0.5] * 5 + [0.0, 1.0]
    (samples,) = class_bootstrap_means(
        np.array(kept), groups=np.array([0] * 5 + [1, 1]), n_resamples=500, seed=7
    )
    lo, hi = percentile_interval(samples)
    assert (lo, hi) == pytest.approx((0.25, 0.75))
    narrow = percentile_interval(samples, confidence=0.2)
    assert narrow == pytest.approx((0.5, 0.5))
    # ... but class 0 has no spread in the sample, so its uncertainty would be left out:
    # class_mean_interval withholds the interval and class_mean_gap says why
    assert class_mean_interval(values, groups, 3, n_resamples=500, seed=7) is None
    assert "every image of class 0 has the same value" in class_mean_gap(values, groups, 3)
    # with spread in both classes the interval is the bootstrap's, seeded
    spread = [0.25, 0.75] * 2 + [0.5] + [0.0, 1.0, np.nan, 0.9]
    lo, hi = class_mean_interval(spread, groups, 3, n_resamples=500, seed=7)
    assert lo < class_mean(spread, groups, 3)[1] < hi
    assert class_mean_interval(spread, groups, 3, n_resamples=500, seed=7) == (lo, hi)
    # class 0 has one image and class 1 two equal ones: resampling within a class cannot
    # vary them, so no interval (it was a zero-width (0.6, 0.6))
    assert class_mean_interval([0.3, 0.3, 0.9], [1, 1, 0], 2) is None
    assert class_mean_interval([np.nan, 0.3], [0, -1], 2) is None


def test_class_mean_errors_name_the_argument():
    with pytest.raises(ValueError, match="`groups` has 1 value"):
        class_mean([0.1, 0.2], [0, 3], 3)
    with pytest.raises(ValueError, match="`groups` must hold integer"):
        class_mean([0.1, 0.2], [0, 0.5], 3)
    with pytest.raises(ValueError, match="same length"):
        class_mean([0.1, 0.2], [0], 3)
    with pytest.raises(ValueError, match="`num_classes`"):
        class_mean([0.1], [0], 0)
    with pytest.raises(ValueError, match="`num_classes`"):
        class_mean([0.1], [0], None)
    with pytest.raises(ValueError, match="`values` holds infinite"):
        class_mean([np.inf], [0], 2)
    with pytest.raises(ValueError, match="`values` must be one-dimensional"):
        class_mean([[0.1]], [0], 2)
    with pytest.raises(ValueError, match="`values` must hold numbers"):
        class_mean(["a"], [0], 2)
    with pytest.raises(ValueError, match="`groups` is empty"):
        class_mean([], [], 2)
    with pytest.raises(ValueError, match="`n_resamples`"):
        class_mean_interval([0.1], [0], 2, n_resamples=0)
    with pytest.raises(ValueError, match="`confidence`"):
        class_mean_interval([np.nan], [0], 2, confidence=1.0)


# ----------------------------------------------------------------------------- ImageNet-E

# The core knows no benchmark: the caller passes ImageNet-E's reference and edit names.
IMAGENET_E_EDITS = get_benchmark("imagenet-e").variants
EDIT_NAMES = dict(reference_edit="original", known_edits=IMAGENET_E_EDITS)

EDIT_ROWS = dict(
    predictions=[1, 2, 3, 4, 1, 0, 0, 0, 1, 2, 0, 0],
    references=[1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4],
    edits=["original"] * 4 + ["bg_complex"] * 4 + ["size_0.05"] * 4,
    **EDIT_NAMES,
)


def test_dropped_accuracy_hand_computed():
    da = dropped_accuracy(**EDIT_ROWS)
    assert da == pytest.approx({"bg_complex": 0.75, "size_0.05": 0.5})
    assert mean_dropped_accuracy(da) == pytest.approx(0.625)
    report = dropped_accuracy_report(**EDIT_ROWS)
    assert report["accuracy"] == pytest.approx(
        {"original": 1.0, "bg_complex": 0.25, "size_0.05": 0.5}
    )
    assert report["dropped_accuracy"] == da
    assert report["mean_dropped_accuracy"] == pytest.approx(0.625)


def test_dropped_accuracy_names_and_errors():
    # original + the paper's 11 edits + bg_texture (OOD texture backgrounds, CPU toolkit)
    assert len(IMAGENET_E_EDITS) == 13 and IMAGENET_E_EDITS[0] == "original"
    with pytest.raises(ValueError, match="`edits` has unknown edit name.*leopard"):
        dropped_accuracy([0, 0], [0, 0], ["original", "leopard"], **EDIT_NAMES)
    custom = dropped_accuracy(
        [0, 1], [0, 0], ["original", "leopard"], reference_edit="original", known_edits=None
    )
    assert custom == {"leopard": 1.0}
    assert dropped_accuracy(
        [0, 1], [0, 0], ["plain", "leopard"], reference_edit="plain", known_edits=None
    ) == {"leopard": 1.0}
    with pytest.raises(ValueError, match="`edits` has no 'original'"):
        dropped_accuracy([0, 0], [0, 0], ["bg_complex", "bg_simpler"], **EDIT_NAMES)
    with pytest.raises(ValueError, match="`edits` has only 'original'"):
        dropped_accuracy([0], [0], ["original"], **EDIT_NAMES)
    with pytest.raises(ValueError, match="`dropped` is empty"):
        mean_dropped_accuracy({})
    # fixed: 2 original rows and 1 edit row returned 0.0 (accuracies of different images)
    with pytest.raises(ValueError, match="2 'original' row.* and 1 'bg_random' row"):
        dropped_accuracy([0, 0, 1], [0, 0, 0], ["original", "original", "bg_random"], **EDIT_NAMES)


@pytest.mark.parametrize(
    "rows, message",
    [  # fixed: each returned a number (1.0, -0.333, -0.5) over unpaired rows
        (
            dict(variants=["mixed_same"] * 3 + ["mixed_rand"]),
            "there are 3 mixed_same rows and 1 mixed_rand row",
        ),
        (
            dict(variants=["mixed_same"] * 2 + ["mixed_rand"] * 2, ids=["a", "a", "a", "b"]),
            "`ids` repeats image id 'a' within variant 'mixed_same'",
        ),
        (
            dict(
                variants=["mixed_same"] * 2 + ["mixed_rand"] * 2,
                ids=["a", "b", "a", "b"],
                references=[0, 1, 0, 0],
            ),
            "`references` differ between the variants of image id 'b' (1 in mixed_same, 0 in",
        ),
        (
            dict(variants=["mixed_same"] * 2 + ["mixed_rand"] * 2, ids=["a", "b", "a", "c"]),
            "1 id(s) are only in mixed_same (e.g. 'b') and 1 only in mixed_rand (e.g. 'c')",
        ),
    ],
)
def test_bg_gap_refuses_rows_that_do_not_pair(rows, message):
    args = {"predictions": [0, 1, 0, 1], "references": [0, 1, 0, 1], **rows}
    roles = IN9_ROLES if "ids" in rows else None
    with pytest.raises(ValueError) as err:
        bg_gap_report(**args, gaps=IN9_GAPS, category_roles=roles)
    assert message in str(err.value)


@SETTINGS
@given(
    st.lists(
        st.tuples(st.integers(0, 3), st.integers(0, 3), st.sampled_from(IMAGENET_E_EDITS[1:5])),
        min_size=1,
        max_size=30,
    ),
    st.randoms(use_true_random=False),
)
def test_dropped_accuracy_row_order_free(rows, rnd):
    rows = _one_row_per_image(rows + [(0, 0, "original")], ("original", *IMAGENET_E_EDITS[1:5]))
    pred, ref, ed = map(list, zip(*rows, strict=True))
    out = dropped_accuracy_report(pred, ref, ed, **EDIT_NAMES)
    rnd.shuffle(rows)
    pred, ref, ed = map(list, zip(*rows, strict=True))
    assert_close(dropped_accuracy_report(pred, ref, ed, **EDIT_NAMES), out)
    for edit, value in out["dropped_accuracy"].items():
        assert value == pytest.approx(out["accuracy"]["original"] - out["accuracy"][edit])


# ----------------------------------------------------------------------------- shared checks


@pytest.mark.parametrize(
    "call, argument",
    [
        (lambda: accuracy([0, 1], [0]), "`references` has 1"),
        (lambda: accuracy([], []), "`predictions` is empty"),
        (lambda: bg_gap_report([0], [0], [], gaps=IN9_GAPS), "`variants` is empty"),
        (
            lambda: bg_gap_report([0, 1], [0, -1], ["mixed_same"] * 2, gaps=IN9_GAPS),
            "`references`.*range",
        ),
        (
            lambda: dropped_accuracy([0], [0, 1], ["original", "size_0.1"], **EDIT_NAMES),
            "`predictions` has 1",
        ),
        (
            lambda: dropped_accuracy([0, 0], [0, 0], [1, 2], **EDIT_NAMES),
            "`edits` must hold strings",
        ),
        (lambda: rfs_report([0.5], [0], [0]), "`predictions_fg_noise` must hold integer"),
        (lambda: rfs_report([0], [0], [-3]), "`references`.*range"),
    ],
)
def test_bad_input_names_the_argument(call, argument):
    with pytest.raises(ValueError, match=argument):
        call()
