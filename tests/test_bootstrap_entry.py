"""The one bootstrap entry point: every interval function -- and the
noise, graying and attribution summaries and ``bgbench compare`` -- is a call of
:func:`hf_bgbench.metrics.intervals.bootstrap_intervals`, and gives the intervals it gave
before it was -- the same draws. ``RECORDED`` holds what the hand-wired code returned on
the fixed inputs below (run once on the code before the change; a refactor that changes a
draw, a quantile or a withheld interval fails here)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pytest

from hf_bgbench import scoring
from hf_bgbench.metrics import intervals, noise, saliency
from hf_bgbench.report import compare
from hf_bgbench.tasks.attribution import summary as attribution_summary
from hf_bgbench.tasks.graying import summary as graying_summary
from hf_bgbench.tasks.noise import summary as noise_summary

RNG = np.random.default_rng(20261126)
N = 90
LABELS = np.arange(N) % 3
A = RNG.random(N) < 0.8
B = A.copy()
B[RNG.random(N) < 0.25] ^= True
FG = RNG.integers(0, 5, N) / 4  # per image, the share of its noisy copies classified right
BG = RNG.integers(1, 5, N) / 4
SCORES = RNG.random(N)
SCORES[::7] = np.nan  # undefined saliency scores
PRED = LABELS.copy()
PRED[::11] = -1  # a prediction outside the benchmark


def _frame(right: np.ndarray, runs: int = 1) -> pd.DataFrame:
    """A prediction frame that is right where ``right`` is; ``runs`` > 1: that many pooled
    runs of the same images (ids ``<run>/<image>``, a ``run`` column)."""
    frame = pd.DataFrame({"label": 0, "pred": np.where(right, 0, 1)})
    if runs == 1:
        return frame.assign(id=[f"i{k}" for k in range(len(right))])
    n = len(right) // runs
    run = np.repeat([f"r{r}" for r in range(runs)], n)
    image = np.tile([f"i{k}" for k in range(n)], runs)
    return frame.assign(id=[f"{r}/{i}" for r, i in zip(run, image, strict=True)], run=run)


def _image_interval(runs: int, quantiles: tuple[float, float] | None) -> Any:
    frame = _frame(A, runs)
    values = pd.Series(A.astype(float) - 0.5 * B, index=frame["id"].to_numpy())
    return scoring.image_interval(values, frame, 11, 300, quantiles=quantiles)


def _constant_image_interval() -> Any:
    frame = _frame(np.ones(4, bool))
    return scoring.image_interval(pd.Series(np.ones(4), index=frame["id"]), frame, 0, 100)


def _columns_and_their_difference(samples: list[np.ndarray]) -> list[Any]:
    """The tasks' hand-wired pattern (graying, attribution, the noise attributes): one draw
    for several columns, each column's interval and that of the first two's difference."""
    return [intervals.withheld_interval(s, None) for s in [*samples, samples[0] - samples[1]]]


# ------------------------------------------------ the tasks' summaries and the comparison


def _intervals_in(body: Mapping[str, Any]) -> dict[str, Any]:
    """The intervals (``*_ci95``) and withheld reasons of a results body, in its shape
    (nested mappings: per class, per attribute)."""
    kept = {}
    for key, value in body.items():
        if key.endswith("_ci95") or key == "intervals_withheld":
            kept[key] = value
        elif isinstance(value, Mapping) and (inner := _intervals_in(value)):
            kept[key] = inner
    return kept


def _noise_summary(aggregation: str, one_image_class: bool = False) -> Any:
    """A noise run of the N images (one level, 4 trials; FG and BG the share of each
    image's copies right), attributes on some, optionally a class of one image."""
    labels = np.where(np.arange(N) == 5, 3, LABELS) if one_image_class else LABELS
    trial = np.arange(4)
    right = np.stack([trial < 4 * FG[:, None], trial < 4 * BG[:, None]], axis=1)  # (N, 2, 4)
    pred = np.where(right, labels[:, None, None], -1)[:, None]  # (N, 1, 2, 4)
    out = {
        "ids": [f"i{k}" for k in range(N)],
        "labels": labels,
        "pred": pred,
        "prob": 0.25 + 0.5 * right[:, None],
        "clean_pred": np.where(A, labels, -1),
        "clean_prob": np.ones(N),
        "attributes": [
            ({"ear": right[k, 0, None].astype(float)} if B[k] else {})
            | ({"eye": right[k, 1, None].astype(float)} if k % 4 else {})
            | ({"as_clean": np.array([float(A[k])])} if k % 2 else {})  # no drop: withheld
            for k in range(N)
        ],
    }
    spec = SimpleNamespace(num_classes=4, classes=("a", "b", "c", "d"))
    body, _ = noise_summary.summarize(spec, out, [30.0], "linf", 4, 17, aggregation)
    # the intervals the summary draws itself (a_fg, a_bg, RFS: rfs_*_intervals, above)
    mine = ("clean_accuracy_ci95", "per_attribute", "intervals_withheld")
    return _intervals_in({key: body[key] for key in mine if key in body})


def _graying_summary(aggregation: str) -> Any:
    """A graying run of the N images: clean right where A is, grayed where B is, the
    re-fitted head where exactly one of them is; two attributes, one the same everywhere."""
    right = np.stack([A, B, A ^ B], axis=1)
    out = {
        "ids": [f"i{k}" for k in range(N)],
        "labels": LABELS,
        "pred": np.where(right, LABELS[:, None], -1),
        "prob": right * 0.5,
        "attributes": [
            ({"ear": np.array([y if B[k] ^ (k % 5 == 0) else -1])} if k % 3 else {})
            | ({"same": np.array([y])} if k < 6 else {})
            for k, y in enumerate(LABELS)
        ],
    }
    spec = SimpleNamespace(num_classes=3, classes=("a", "b", "c"))
    body, _, _ = graying_summary.summarize(spec, out, 23, aggregation, 0.5)
    return _intervals_in(body)


def _attribution_summary(constant: bool = False) -> Any:
    """Pairs with FG as train and BG as test IoU (every tenth untested); or all alike."""
    pairs = [
        {
            "train_iou": 0.5 if constant else float(FG[k]),
            "test_iou": None if k % 10 == 9 else 0.25 if constant else float(BG[k]),
        }
        for k in range(N)
    ]
    out = {"pairs": pairs, "feature_dim": 4, "examined": 4, "n_train": 1, "n_test": 1}
    return _intervals_in(attribution_summary.summarize(out, 5, 0.5, 29))


def _compare_rows(seed: int) -> Any:
    """``compare_results`` of two runs' per-image values (read by a stand-in for the
    results folders): a 0/1 score on partly shared images, a continuous one with a missing
    value, and one whose difference is the same on every image."""
    ids = [f"i{k}" for k in range(N)]
    values = {
        "a": {
            "acc": pd.Series(A.astype(float), index=ids),
            "score": pd.Series(FG, index=ids),
            "same": pd.Series(np.ones(N), index=ids),
        },
        "b": {
            "acc": pd.Series(B[7:].astype(float), index=ids[7:]),
            "score": pd.Series(np.where(np.arange(N) == 3, np.nan, BG), index=ids)[::-1],
            "same": pd.Series(np.zeros(N), index=ids),
        },
    }
    docs = [{"name": name, "benchmark": "in9", "task": "evaluate"} for name in values]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(compare, "per_image_values", lambda doc, folder: values[doc["name"]])
        patch.setattr(compare, "check_same", lambda a, b: [])
        rows = compare.compare_results(docs[0], None, docs[1], None, seed=seed)
    return [(row["key"], row["ci95"], row["ci95_withheld"]) for row in rows]


CASES: dict[str, Callable[[], Any]] = {
    "paired_bootstrap_difference": lambda: intervals.paired_bootstrap_difference(
        A, B, n_resamples=400, seed=3
    ),
    "paired_bootstrap_difference_90": lambda: intervals.paired_bootstrap_difference(
        A, B, n_resamples=257, seed=8, confidence=0.9
    ),
    "paired_bootstrap_difference_withheld": lambda: intervals.paired_bootstrap_difference(A, A),
    "image_interval": lambda: _image_interval(1, None),
    "image_interval_literal_levels": lambda: _image_interval(1, (0.025, 0.975)),
    "image_interval_runs": lambda: _image_interval(3, (0.025, 0.975)),
    "image_interval_withheld": _constant_image_interval,
    "paired_gap_interval_runs": lambda: scoring.paired_gap_interval(
        _frame(A, 3), _frame(B, 3), 5, 350
    ),
    "accuracy_interval_runs": lambda: scoring.accuracy_interval(_frame(A, 3), 2, 310),
    "rfs_bootstrap_intervals": lambda: noise.rfs_bootstrap_intervals(
        FG, BG, n_resamples=420, seed=4
    ),
    "rfs_bootstrap_intervals_80": lambda: noise.rfs_bootstrap_intervals(
        FG, BG, n_resamples=200, seed=9, confidence=0.8
    ),
    "rfs_bootstrap_intervals_fg_constant": lambda: noise.rfs_bootstrap_intervals(
        np.zeros(N), BG, n_resamples=150, seed=1
    ),
    "rfs_class_mean_intervals": lambda: noise.rfs_class_mean_intervals(
        FG, BG, LABELS, n_resamples=330, seed=6
    ),
    "rfs_class_mean_intervals_80": lambda: noise.rfs_class_mean_intervals(
        FG, BG, LABELS, n_resamples=100, seed=2, confidence=0.8
    ),
    "rfs_class_mean_intervals_a_class_constant": lambda: noise.rfs_class_mean_intervals(
        np.where(LABELS == 0, 0.0, FG), BG, LABELS, n_resamples=100, seed=2
    ),
    "bootstrap_mean_interval": lambda: saliency.bootstrap_mean_interval(
        SCORES, n_resamples=380, seed=12
    ),
    "bootstrap_mean_interval_90": lambda: saliency.bootstrap_mean_interval(
        SCORES, n_resamples=100, seed=0, confidence=0.9
    ),
    "class_mean_interval": lambda: saliency.class_mean_interval(
        SCORES, PRED, 3, n_resamples=360, seed=13
    ),
    "class_mean_interval_90": lambda: saliency.class_mean_interval(
        SCORES, PRED, 4, n_resamples=120, seed=1, confidence=0.9
    ),
    "class_mean_interval_a_class_of_one": lambda: saliency.class_mean_interval(
        SCORES, np.where(np.arange(N) == 5, 3, PRED), 4, n_resamples=120, seed=1
    ),
    "columns_one_draw": lambda: _columns_and_their_difference(
        intervals.bootstrap_means(FG, BG, BG[::-1], n_resamples=240, seed=21)
    ),
    "columns_one_draw_by_class": lambda: _columns_and_their_difference(
        intervals.class_bootstrap_means(FG, BG, BG[::-1], groups=LABELS, n_resamples=240, seed=21)
    ),
    "noise_summary_class_mean": lambda: _noise_summary("class-mean"),
    "noise_summary_image_pooled": lambda: _noise_summary("image-pooled"),
    "noise_summary_class_of_one_image": lambda: _noise_summary("class-mean", True),
    "graying_summary_class_mean": lambda: _graying_summary("class-mean"),
    "graying_summary_image_pooled": lambda: _graying_summary("image-pooled"),
    "attribution_summary": _attribution_summary,
    "attribution_summary_withheld": lambda: _attribution_summary(constant=True),
    "compare_results": lambda: _compare_rows(0),
    "compare_results_seed_4": lambda: _compare_rows(4),
}

# the reasons an interval is withheld
ALIKE = "every image has the same value, so resampling cannot vary them"
ONE_IMAGE_IN_D = "class 'd' has 1 image, so resampling within a class cannot vary them"

RECORDED: dict[str, Any] = {
    "accuracy_interval_runs": ([0.6888888888888889, 0.8697222222222221], None, 30),
    "bootstrap_mean_interval": (0.402163756849585, 0.5298583188262533),
    "bootstrap_mean_interval_90": (0.40303319912234964, 0.5009336756328456),
    "class_mean_interval": (0.39479217796770194, 0.5351388913915981),
    "class_mean_interval_90": (0.39357827103353854, 0.5107363004436393),
    "class_mean_interval_a_class_of_one": None,
    "columns_one_draw": [
        [0.43597222222222226, 0.5945833333333334],
        [0.5777777777777777, 0.6861111111111111],
        [0.5722222222222222, 0.68625],
        [-0.21673611111111116, -0.024861111111110994],
    ],
    "columns_one_draw_by_class": [
        [0.44437499999999996, 0.5916666666666667],
        [0.5804861111111111, 0.6834027777777777],
        [0.5803472222222223, 0.6890277777777779],
        [-0.20562500000000003, -0.022222222222222254],
    ],
    "image_interval": ([0.40555555555555556, 0.5611111111111111], None, 90),
    "image_interval_literal_levels": ([0.40555555555555556, 0.5611111111111111], None, 90),
    "image_interval_runs": ([0.39999999999999997, 0.5666666666666667], None, 30),
    "image_interval_withheld": (
        None,
        "every image has the same value, so resampling cannot vary them",
        4,
    ),
    "paired_bootstrap_difference": (0.1111111111111111, 0.3),
    "paired_bootstrap_difference_90": (0.1111111111111111, 0.2777777777777778),
    "paired_bootstrap_difference_withheld": None,
    "paired_gap_interval_runs": [0.1111111111111111, 0.3],
    "rfs_bootstrap_intervals": {
        "accuracy_fg_noise": (0.44722222222222224, 0.5959027777777777),
        "accuracy_bg_noise": (0.5790972222222223, 0.6919444444444441),
        "rfs": (0.026475237091675367, 0.2407256548439654),
    },
    "rfs_bootstrap_intervals_80": {
        "accuracy_fg_noise": (0.46944444444444444, 0.5641666666666666),
        "accuracy_bg_noise": (0.5944444444444444, 0.6752777777777778),
        "rfs": (0.059774568510038754, 0.21663833751068337),
    },
    "rfs_bootstrap_intervals_fg_constant": {
        "accuracy_fg_noise": None,
        "accuracy_bg_noise": (0.5830555555555555, 0.6916666666666667),
        "rfs": None,
    },
    "rfs_class_mean_intervals": {
        "accuracy_fg_noise": (0.4422916666666667, 0.5972222222222222),
        "accuracy_bg_noise": (0.5811805555555556, 0.6861111111111112),
        "rfs": (0.02387763538652331, 0.24318059792556437),
    },
    "rfs_class_mean_intervals_80": {
        "accuracy_fg_noise": (0.4772222222222222, 0.5777777777777778),
        "accuracy_bg_noise": (0.6, 0.6697222222222222),
        "rfs": (0.05190311418685118, 0.20013201320131996),
    },
    "rfs_class_mean_intervals_a_class_constant": {
        "accuracy_fg_noise": None,
        "accuracy_bg_noise": (0.5846527777777778, 0.6861111111111112),
        "rfs": None,
    },
    "attribution_summary": {
        "mean_train_iou_ci95": [0.4351851851851852, 0.6018518518518519],
        "mean_test_iou_ci95": [0.5802469135802469, 0.6975308641975309],
        "iou_gap_ci95": [-0.22839506172839508, -0.018441358024691403],
    },
    "attribution_summary_withheld": {
        "mean_train_iou_ci95": None,
        "mean_test_iou_ci95": None,
        "iou_gap_ci95": None,
        "intervals_withheld": {
            "mean_train_iou": ALIKE,
            "mean_test_iou": ALIKE,
            "iou_gap": ALIKE,
        },
    },
    "compare_results": [
        ("acc", [0.09608433734939813, 0.2891566265060241], None),
        ("score", [-0.21348314606741572, -0.011235955056179775], None),
        ("same", None, ALIKE),
    ],
    "compare_results_seed_4": [
        ("acc", [0.0963855421686747, 0.30120481927710846], None),
        ("score", [-0.21067415730337077, -0.019662921348314606], None),
        ("same", None, ALIKE),
    ],
    "graying_summary_class_mean": {
        "accuracy_clean_ci95": [0.6777777777777777, 0.8555555555555556],
        "accuracy_grayed_ci95": [0.4777777777777777, 0.6777777777777777],
        "drop_ci95": [0.10000000000000009, 0.30000000000000004],
        "accuracy_grayed_refit_ci95": [0.17777777777777778, 0.3555555555555556],
        "per_class": {
            "a": {
                "accuracy_clean_ci95": [0.6, 0.9008333333333326],
                "accuracy_grayed_ci95": [0.36666666666666664, 0.7333333333333333],
                "drop_ci95": [0.06666666666666665, 0.4000000000000001],
                "accuracy_grayed_refit_ci95": [0.13333333333333333, 0.4666666666666667],
            },
            "b": {
                "accuracy_clean_ci95": [0.6, 0.9],
                "accuracy_grayed_ci95": [0.4658333333333341, 0.8],
                "drop_ci95": [0.0, 0.30000000000000004],
                "accuracy_grayed_refit_ci95": [0.06666666666666667, 0.3333333333333333],
            },
            "c": {
                "accuracy_clean_ci95": [0.6666666666666666, 0.9333333333333333],
                "accuracy_grayed_ci95": [0.4, 0.7333333333333333],
                "drop_ci95": [0.06666666666666665, 0.43333333333333335],
                "accuracy_grayed_refit_ci95": [0.13333333333333333, 0.4666666666666667],
            },
        },
        "per_attribute": {
            "ear": {
                "accuracy_clean_ci95": [0.6666666666666666, 0.8833333333333333],
                "accuracy_grayed_ci95": [0.5, 0.75],
                "drop_ci95": [-0.01666666666666672, 0.30000000000000004],
            },
            "same": {
                "accuracy_clean_ci95": [0.5, 1.0],
                "accuracy_grayed_ci95": None,
                "drop_ci95": [-0.5, 0.0],
                "intervals_withheld": {"accuracy_grayed": ALIKE},
            },
        },
    },
    "graying_summary_image_pooled": {
        "accuracy_clean_ci95": [0.6888888888888889, 0.8555555555555555],
        "accuracy_grayed_ci95": [0.4777777777777778, 0.6777777777777778],
        "drop_ci95": [0.09999999999999998, 0.3],
        "accuracy_grayed_refit_ci95": [0.18888888888888888, 0.36666666666666664],
        "per_class": {
            "a": {
                "accuracy_clean_ci95": [0.6, 0.9008333333333326],
                "accuracy_grayed_ci95": [0.36666666666666664, 0.7333333333333333],
                "drop_ci95": [0.06666666666666665, 0.4000000000000001],
                "accuracy_grayed_refit_ci95": [0.13333333333333333, 0.4666666666666667],
            },
            "b": {
                "accuracy_clean_ci95": [0.6, 0.9],
                "accuracy_grayed_ci95": [0.4658333333333341, 0.8],
                "drop_ci95": [0.0, 0.30000000000000004],
                "accuracy_grayed_refit_ci95": [0.06666666666666667, 0.3333333333333333],
            },
            "c": {
                "accuracy_clean_ci95": [0.6666666666666666, 0.9333333333333333],
                "accuracy_grayed_ci95": [0.4, 0.7333333333333333],
                "drop_ci95": [0.06666666666666665, 0.43333333333333335],
                "accuracy_grayed_refit_ci95": [0.13333333333333333, 0.4666666666666667],
            },
        },
        "per_attribute": {
            "ear": {
                "accuracy_clean_ci95": [0.6666666666666666, 0.8833333333333333],
                "accuracy_grayed_ci95": [0.5, 0.75],
                "drop_ci95": [-0.01666666666666672, 0.30000000000000004],
            },
            "same": {
                "accuracy_clean_ci95": [0.5, 1.0],
                "accuracy_grayed_ci95": None,
                "drop_ci95": [-0.5, 0.0],
                "intervals_withheld": {"accuracy_grayed": ALIKE},
            },
        },
    },
    "noise_summary_class_mean": {
        "clean_accuracy_ci95": [0.6888888888888888, 0.8555555555555556],
        "per_attribute": {
            "as_clean": {"drop_ci95": None},
            "ear": {"drop_ci95": [0.3508413461538462, 0.5432692307692308]},
            "eye": {"drop_ci95": [0.04850746268656714, 0.29850746268656714]},
        },
    },
    "noise_summary_class_of_one_image": {
        "clean_accuracy_ci95": None,
        "per_attribute": {
            "as_clean": {"drop_ci95": None},
            "ear": {"drop_ci95": [0.3508413461538462, 0.5432692307692308]},
            "eye": {"drop_ci95": [0.04850746268656714, 0.29850746268656714]},
        },
        "intervals_withheld": {
            "a_fg": ONE_IMAGE_IN_D,
            "a_bg": ONE_IMAGE_IN_D,
            "rfs": ONE_IMAGE_IN_D,
            "clean_accuracy": ONE_IMAGE_IN_D,
        },
    },
    "noise_summary_image_pooled": {
        "clean_accuracy_ci95": [0.6815268960895451, 0.8512866452636068],
        "per_attribute": {
            "as_clean": {"drop_ci95": None},
            "ear": {"drop_ci95": [0.3508413461538462, 0.5432692307692308]},
            "eye": {"drop_ci95": [0.04850746268656714, 0.29850746268656714]},
        },
    },
}


def _assert_same(got: Any, want: Any, where: str) -> None:
    """``got`` has ``want``'s shape (None where it is None, the same keys, strings equal)
    and its numbers agree to rtol 1e-12."""
    if want is None or isinstance(want, str):
        assert got == want, where
    elif isinstance(want, dict):
        assert isinstance(got, dict) and got.keys() == want.keys(), where
        for key in want:
            _assert_same(got[key], want[key], f"{where}[{key!r}]")
    elif isinstance(want, list | tuple):
        assert type(got) is type(want) and len(got) == len(want), where
        for k, (g, w) in enumerate(zip(got, want, strict=True)):
            _assert_same(g, w, f"{where}[{k}]")
    else:
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0, err_msg=where)


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_interval_is_what_the_hand_wired_code_gave(name):
    _assert_same(CASES[name](), RECORDED[name], name)


# ------------------------------------------------------------------ the entry point itself

STATS_OF_THREE = {
    "fg": intervals.mean_of("fg"),
    "bg": intervals.mean_of("bg"),
    "bg_reversed": intervals.mean_of("bg_reversed"),
    "drop": intervals.difference_of_means("fg", "bg"),
}


@pytest.mark.parametrize(
    "recorded, groups", [("columns_one_draw", None), ("columns_one_draw_by_class", LABELS)]
)
def test_the_tasks_hand_wired_pattern_is_one_call(recorded, groups):
    """What graying, attribution and the noise attributes wire by hand (one draw of several
    columns, a difference of the resampled means) is one call, with the same draws."""
    got = intervals.bootstrap_intervals(
        {"fg": FG, "bg": BG, "bg_reversed": BG[::-1]},
        STATS_OF_THREE,
        groups=groups,
        n_resamples=240,
        seed=21,
    )
    assert list(got) == list(STATS_OF_THREE)
    assert all(interval.withheld is None for interval in got.values())
    _assert_same([list(interval.bounds) for interval in got.values()], RECORDED[recorded], recorded)


def test_one_draw_whatever_the_statistics_asked_for():
    """The draws depend on the seed and the units only: leaving a column or a statistic
    out (or withholding one) changes no other interval."""
    both = intervals.bootstrap_intervals({"fg": FG, "bg": BG}, seed=5, n_resamples=200)
    alone = intervals.bootstrap_intervals({"bg": BG}, seed=5, n_resamples=200)
    assert both["bg"] == alone["bg"]
    constant = intervals.bootstrap_intervals({"fg": np.zeros(N), "bg": BG}, seed=5, n_resamples=200)
    assert constant["bg"] == alone["bg"]
    assert constant["fg"] == (
        None,
        "every image has the same value, so resampling cannot vary them",
    )


def test_a_function_of_means_is_computed_from_the_resampled_means():
    """A ratio of means (any vectorised function of the means) over the same draws as the
    means themselves; class-stratified with groups."""
    ratio = {"ratio": intervals.function_of_means(("fg", "bg"), np.divide)}
    for groups in (None, LABELS):
        got = intervals.bootstrap_intervals(
            {"fg": FG, "bg": BG}, ratio, groups=groups, n_resamples=300, seed=7, confidence=0.9
        )["ratio"]
        if groups is None:
            fg, bg = intervals.bootstrap_means(FG, BG, n_resamples=300, seed=7)
        else:
            fg, bg = intervals.class_bootstrap_means(FG, BG, groups=groups, n_resamples=300, seed=7)
        assert got == (intervals.percentile_interval(fg / bg, 0.9), None)
        assert got.bounds[0] < FG.mean() / BG.mean() < got.bounds[1]


def test_withheld_intervals_say_why():
    right = np.array([1.0, 1.0, 1.0, 0.0, 1.0, 0.0])
    other = np.array([1.0, 0.0, 1.0, 0.0, 1.0, 1.0])
    got = intervals.bootstrap_intervals(
        {"right": right, "other": other},
        {
            "right": intervals.mean_of("right"),
            "same": intervals.difference_of_means("right", "right"),
        },
        groups=np.array([0, 0, 0, 1, 1, 2]),
        names=["dog", "bird", "fish"],
    )
    assert got["right"] == (
        None,
        "class 'fish' has 1 image; every image of class 'dog' has the same value, so "
        "resampling within a class cannot vary them",
    )
    assert got["same"].bounds is None and "class 'fish' has 1 image" in got["same"].withheld
    # a difference of paired columns varies where the per-image difference does
    paired = intervals.bootstrap_intervals(
        {"a": right, "b": right + 1}, {"gap": intervals.difference_of_means("a", "b")}
    )
    assert paired["gap"] == (None, "every image has the same value, so resampling cannot vary them")
    # no units at all: said so, with or without classes
    for groups in (None, np.array([], int)):
        nothing = intervals.bootstrap_intervals({"x": np.array([])}, groups=groups)
        assert nothing["x"] == (None, "only 0 image(s), so resampling cannot vary them")


def test_the_entry_point_refuses_bad_settings():
    with pytest.raises(ValueError, match="`n_resamples` must be at least 1"):
        intervals.bootstrap_intervals({"x": FG}, n_resamples=0)
    with pytest.raises(ValueError, match="`n_resamples` must be an int"):
        intervals.bootstrap_intervals({"x": FG}, n_resamples=10.0)
    with pytest.raises(ValueError, match="`confidence` must be in"):
        intervals.bootstrap_intervals({"x": np.ones(3)}, confidence=1.0)  # even when withheld
    with pytest.raises(ValueError, match="same length"):
        intervals.bootstrap_intervals({"x": FG, "y": BG[1:]})
    with pytest.raises(ValueError, match="same length"):
        intervals.bootstrap_intervals({"x": FG}, groups=LABELS[1:])
    with pytest.raises(ValueError, match="none given"):
        intervals.function_of_means((), np.mean)
