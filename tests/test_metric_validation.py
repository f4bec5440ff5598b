"""Bad inputs, one table: every metric function and every ``evaluate`` module refuses them
with a ValueError that names the argument.

To cover a new case, add one ``Bad(callable, kwargs, expected)`` row to ``CORE`` or
``MODULES``: ``callable`` is called with ``kwargs`` and must raise a ValueError whose message
contains ``expected``. Module callables come from :func:`module` (a fresh module per call).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import pytest

from hf_bgbench import metrics
from hf_bgbench.metrics import (
    FoolingMatrix,
    accuracy,
    bg_gap,
    challenge_accuracy,
    challenge_accuracy_per_class,
    instance_rfs,
    mean_dropped_accuracy,
    paired_bootstrap_difference,
    per_class_accuracy,
    relative_foreground_sensitivity,
    rfs_report,
    wilson_interval,
)
from tests.metric_core_args import BG_GAP_ARGS, DROPPED_ACCURACY_ARGS
from tests.metric_env import evaluate_cache, load  # noqa: F401  (autouse fixture)

NAN = float("nan")
IN9 = ("original", "only_bg_b", "only_bg_t", "no_fg", "only_fg", "mixed_same", "mixed_rand")
IN9 += ("mixed_next",)


class Bad(NamedTuple):
    call: Callable[..., Any]
    kwargs: dict[str, Any]
    expected: str  # a substring of the error message


def module(name: str, config: str | None = None) -> Callable[..., Any]:
    """``compute`` of a freshly loaded generated module (from ``metrics/<name>``)."""

    def compute(**kwargs: Any) -> Any:
        return load(name, config).compute(**kwargs)

    compute.__name__ = f"{name}[{config or 'default'}]"
    return compute


def with_facts(core: Callable[..., Any], facts: dict[str, Any]) -> Callable[..., Any]:
    """``core`` called with what its module passes besides the rows (the benchmark facts),
    ``kwargs`` winning."""

    def call(**kwargs: Any) -> Any:
        return core(**facts | kwargs)

    call.__name__ = core.__name__
    return call


bg_gap_report = with_facts(metrics.bg_gap_report, BG_GAP_ARGS)
prediction_categories_by_id = with_facts(
    metrics.prediction_categories_by_id, {"category_roles": BG_GAP_ARGS["category_roles"]}
)
background_gaps = with_facts(metrics.background_gaps, {"gaps": BG_GAP_ARGS["gaps"]})
dropped_accuracy = with_facts(metrics.dropped_accuracy, DROPPED_ACCURACY_ARGS)


def rows(**override: Any) -> dict[str, Any]:
    """Two valid IN-9 rows (one mixed_same, one mixed_rand), with ``override`` applied."""
    return (
        {"predictions": [0, 1], "references": [0, 1]}
        | {"variants": ["mixed_same", "mixed_rand"]}
        | override
    )


def noise(**override: Any) -> dict[str, Any]:
    base = {"predictions_fg_noise": [0, 1], "predictions_bg_noise": [0, 1], "references": [0, 1]}
    return base | override


def edits(**override: Any) -> dict[str, Any]:
    base = {"predictions": [0, 1], "references": [0, 1], "edits": ["original", "bg_random"]}
    return base | override


def matrix(**override: Any) -> dict[str, Any]:
    base = {
        "foreground_labels": [0, 1],
        "predictions": [[0, 1], [1, 1]],
        "background_labels": [0, 1],
    }
    return base | override


WHOLE = "must hold integer class labels, got a value that is not a whole number"

CORE = [
    # class labels: dtype, finiteness, range, length, shape
    Bad(accuracy, dict(predictions=[1.7, 0], references=[1, 0]), f"`predictions` {WHOLE}"),
    Bad(
        accuracy,
        dict(predictions=[0, 1], references=[NAN, 0]),
        "`references` must hold integer class labels, got NaN or infinity (e.g. nan at position 0)",
    ),
    Bad(accuracy, dict(predictions=[True, False], references=[1, 0]), "got booleans"),
    Bad(accuracy, dict(predictions=["1", "0"], references=[1, 0]), "got e.g. '1'"),
    Bad(
        accuracy,
        dict(predictions=[0, 1], references=[0, -1]),
        "`references` has 1 value(s) out of range >= 0, e.g. -1 at position 1",
    ),
    Bad(
        accuracy,
        dict(predictions=[-2, 0], references=[0, 0]),
        "`predictions` has 1 value(s) out of range >= -1, e.g. -2",
    ),
    Bad(
        accuracy,
        dict(predictions=[0, 0], references=[0, 207], num_classes=9),
        "`references` has 1 value(s) out of range [0, 9), e.g. 207",
    ),
    Bad(
        accuracy,
        dict(predictions=[0, 1], references=[0]),
        "Inputs must have the same length: `predictions` has 2, `references` has 1",
    ),
    Bad(accuracy, dict(predictions=[], references=[]), "`predictions` is empty"),
    Bad(accuracy, dict(predictions=[[0]], references=[[0]]), "`predictions` must be one-dim"),
    Bad(accuracy, dict(predictions=[0], references=[0], num_classes=0), "`num_classes` must be"),
    Bad(
        per_class_accuracy,
        dict(predictions=[9], references=[0], num_classes=9),
        "`predictions` has 1 value(s) out of range [-1, 9)",
    ),
    # IN-9 rows: variant names and classes come from the caller
    Bad(
        bg_gap_report,
        rows(variants=["mixed_same", "mixed-rand"], valid_variants=IN9),
        "`variants` has unknown variant name(s) 'mixed-rand' (did you mean 'mixed_rand'?)",
    ),
    Bad(
        bg_gap_report,
        rows(references=[0, 207], num_classes=9),
        "`references` has 1 value(s) out of range [0, 9)",
    ),
    Bad(
        bg_gap_report, rows(predictions=[0, 1.7]), f"`predictions` {WHOLE} (e.g. 1.7 at position 1)"
    ),
    Bad(
        bg_gap_report, rows(variants=["mixed_same", 5]), "`variants` must hold strings, got e.g. 5"
    ),
    Bad(
        bg_gap_report,
        rows(variants=["mixed_same", "mixed_same"]),
        "`variants` has no row of ['mixed_rand']",
    ),
    Bad(prediction_categories_by_id, rows(ids=[1, 2]), "`ids` must hold strings"),
    Bad(
        bg_gap,
        dict(accuracy_mixed_same=0.5, accuracy_mixed_rand=1.5),
        "`accuracy_mixed_rand` has 1 value(s) outside [0.0, 1.0]",
    ),
    Bad(
        bg_gap,
        dict(accuracy_mixed_same="0.9", accuracy_mixed_rand=0.5),
        "`accuracy_mixed_same` must hold numbers, got e.g. '0.9'",
    ),
    Bad(
        bg_gap_report,
        rows(valid_variants="mixed_same"),
        "`valid_variants` must be a list of variant names",
    ),
    Bad(
        background_gaps,
        dict(accuracies={"mixed_same": "0.9", "mixed_rand": 0.5}),
        "`accuracies['mixed_same']` must hold numbers",
    ),
    Bad(
        background_gaps,
        dict(accuracies={"mixed_same": 0.9, "mixed_rand": 90.0}),
        "`accuracies['mixed_rand']` has 1 value(s) outside [0.0, 1.0]",
    ),
    Bad(
        per_class_accuracy,
        dict(predictions=[0], references=[0], num_classes=None),
        "`num_classes` is required",
    ),
    # challenge: flags are booleans or 0/1, never strings or NaN
    Bad(
        challenge_accuracy,
        dict(vulnerable=["yes", "no"]),
        "`vulnerable` must hold booleans (or 0/1), got e.g. 'yes'",
    ),
    Bad(challenge_accuracy, dict(vulnerable=[True, NAN]), "got e.g. nan at position 1"),
    Bad(challenge_accuracy, dict(vulnerable=[0, 2]), "got e.g. 2 at position 1"),
    Bad(challenge_accuracy, dict(vulnerable=[]), "`vulnerable` is empty"),
    Bad(
        challenge_accuracy_per_class,
        dict(vulnerable=[True], foreground_labels=[0.5]),
        f"`foreground_labels` {WHOLE}",
    ),
    Bad(
        challenge_accuracy_per_class,
        dict(vulnerable=[True], foreground_labels=[9], num_classes=9),
        "`foreground_labels` has 1 value(s) out of range [0, 9)",
    ),
    Bad(
        FoolingMatrix.from_arrays,
        dict(predictions=[[0, 1.5]], foreground_labels=[0], background_labels=[0, 1]),
        f"`predictions` {WHOLE} (e.g. 1.5 at position (0, 1))",
    ),
    Bad(
        FoolingMatrix.from_rows,
        dict(foreground_labels=[0], predictions=[[0, 1]], background_labels=[0, 1], num_classes=1),
        "`background_labels` has 1 value(s) out of range [0, 1)",
    ),
    Bad(
        FoolingMatrix,
        dict(predictions=[[0, 1]], foreground_labels=[0], background_labels=[0, 1]),
        "build it with FoolingMatrix.from_arrays",
    ),
    # RFS: probabilities and noise levels are finite numbers in range
    Bad(
        relative_foreground_sensitivity,
        dict(accuracy_fg_noise=NAN, accuracy_bg_noise=0.5),
        "`accuracy_fg_noise` holds NaN or infinite values",
    ),
    Bad(
        instance_rfs,
        dict(probabilities_fg_noise=[0.2], probabilities_bg_noise=[1.5]),
        "`probabilities_bg_noise` has 1 value(s) outside [0.0, 1.0], e.g. 1.5",
    ),
    Bad(
        rfs_report,
        noise(probabilities_fg_noise=["0.5", "0.5"], probabilities_bg_noise=[0, 1]),
        "`probabilities_fg_noise` must hold numbers, got e.g. '0.5'",
    ),
    Bad(
        rfs_report,
        noise(noise_levels=[0.1, -0.1]),
        "`noise_levels` has 1 value(s) outside [0.0, None]",
    ),
    Bad(
        rfs_report,
        noise(references=[0, 10], num_classes=10),
        "`references` has 1 value(s) out of range [0, 10)",
    ),
    Bad(
        rfs_report,
        noise(predictions_bg_noise=[0, True]),
        "`predictions_bg_noise` must hold integer class labels",
    ),
    # ImageNet-E: no -1 (the model's own ImageNet class is scored)
    Bad(
        dropped_accuracy,
        edits(predictions=[-1, 0]),
        "`predictions` has 1 value(s) out of range >= 0",
    ),
    Bad(
        dropped_accuracy,
        edits(references=[0, 1000], num_classes=1000),
        "`references` has 1 value(s) out of range [0, 1000)",
    ),
    Bad(dropped_accuracy, edits(known_edits="original"), "`known_edits` must be a list"),
    Bad(dropped_accuracy, edits(edits=["original", "bg-random"]), "did you mean 'bg_random'"),
    Bad(
        mean_dropped_accuracy,
        dict(dropped={"rotation": 15.7}),
        "`dropped` has 1 value(s) outside [-1.0, 1.0], e.g. 15.7",
    ),
    # intervals
    Bad(wilson_interval, dict(correct=1.5, n=10), "`correct` must be a whole count"),
    Bad(
        paired_bootstrap_difference,
        dict(correct_a=[0.5], correct_b=[1]),
        "`correct_a` must hold booleans",
    ),
]

MODULES = [
    # bg_gap: datasets would truncate 1.7 to 1 and accept ImageNet indices
    Bad(module("bg_gap"), rows(predictions=[1.7, 1]), f"`predictions` {WHOLE} (e.g. 1.7"),
    Bad(
        module("bg_gap"),
        rows(predictions=[NAN, 1]),
        "`predictions` must hold integer class labels, got NaN",
    ),
    Bad(
        module("bg_gap"),
        rows(predictions=["0", "1"]),
        "`predictions` must hold integer class labels, got e.g. '0'",
    ),
    Bad(
        module("bg_gap"),
        rows(references=[0, 207]),
        "`references` has 1 value(s) out of range [0, 9), e.g. 207",
    ),
    Bad(
        module("bg_gap"),
        rows(predictions=[0, 9]),
        "`predictions` has 1 value(s) out of range [-1, 9)",
    ),
    Bad(module("bg_gap"), rows(variants=["mixed_same", "mixed-rand"]), "did you mean 'mixed_rand'"),
    Bad(module("bg_gap"), rows(variants=["mixed_same", 5]), "`variants` must hold strings"),
    Bad(module("bg_gap"), rows(references=[0]), "`predictions` has 2, `references` has 1"),
    Bad(module("bg_gap", "with_ids"), rows(ids=[1, 2]), "`ids` must hold strings"),
    # bg_challenge: datasets would count "no" and NaN as True
    Bad(module("bg_challenge"), dict(vulnerable=["yes", "no"]), "`vulnerable` must hold booleans"),
    Bad(module("bg_challenge"), dict(vulnerable=[True, NAN]), "got e.g. nan at position 1"),
    Bad(module("bg_challenge"), dict(vulnerable=[1, 2]), "got e.g. 2 at position 1"),
    Bad(module("bg_challenge"), dict(vulnerable=[]), "`vulnerable` is empty"),
    Bad(
        module("bg_challenge", "per_class"),
        dict(vulnerable=[True], foreground_labels=[9]),
        "`foreground_labels` has 1 value(s) out of range [0, 9)",
    ),
    Bad(
        module("bg_challenge", "per_class"),
        dict(vulnerable=[True], foreground_labels=[0.5]),
        f"`foreground_labels` {WHOLE}",
    ),
    Bad(
        module("bg_challenge", "fooling_matrix"),
        matrix(predictions=[[0, 1.5], [1, 1]]),
        f"`predictions[0]` {WHOLE} (e.g. 1.5 at position 1)",
    ),
    Bad(
        module("bg_challenge", "fooling_matrix"),
        matrix(predictions=[[0, 9], [1, 1]]),
        "`predictions` has 1 value(s) out of range [-1, 9)",
    ),
    Bad(
        module("bg_challenge", "fooling_matrix"),
        matrix(background_labels=[0, 1.5]),
        f"`background_labels` {WHOLE}",
    ),
    Bad(
        module("bg_challenge", "fooling_matrix"),
        matrix(predictions=[[0, 1], [1]]),
        "`predictions` row 1 has 1 entries",
    ),
    Bad(
        module("bg_challenge", "fooling_matrix"),
        matrix(background_labels=None),
        "`background_labels` is missing",
    ),
    # rfs
    Bad(module("rfs"), noise(predictions_fg_noise=[1.7, 1]), f"`predictions_fg_noise` {WHOLE}"),
    Bad(
        module("rfs"), noise(references=[0, 10]), "`references` has 1 value(s) out of range [0, 10)"
    ),
    Bad(
        module("rfs", "irfs"),
        noise(probabilities_fg_noise=["0.5", "0.5"], probabilities_bg_noise=[0.5, 0.5]),
        "`probabilities_fg_noise` must hold numbers",
    ),
    Bad(
        module("rfs", "irfs"),
        noise(probabilities_fg_noise=[0.5, NAN], probabilities_bg_noise=[0.5, 0.5]),
        "`probabilities_fg_noise` holds NaN",
    ),
    Bad(
        module("rfs", "irfs"),
        noise(probabilities_fg_noise=[0.5, 0.5], probabilities_bg_noise=[0.5, 1.5]),
        "`probabilities_bg_noise` has 1 value(s) outside",
    ),
    Bad(
        module("rfs", "noise_levels"),
        noise(noise_levels=[0.1, -1.0]),
        "`noise_levels` has 1 value(s) outside [0.0, None]",
    ),
    # dropped_accuracy
    Bad(
        module("dropped_accuracy"),
        edits(predictions=[-1, 1]),
        "`predictions` has 1 value(s) out of range [0, 1000)",
    ),
    Bad(module("dropped_accuracy"), edits(references=[0, 1.5]), f"`references` {WHOLE}"),
    Bad(module("dropped_accuracy"), edits(edits=["original", 3]), "`edits` must hold strings"),
    Bad(
        module("dropped_accuracy"),
        edits(edits=["original", "leopard"]),
        "`edits` has unknown edit name(s) 'leopard'",
    ),
]


def _id(case: Bad) -> str:
    return f"{case.call.__name__}-{case.expected[:40]}"


@pytest.mark.parametrize("call, kwargs, expected", CORE + MODULES, ids=map(_id, CORE + MODULES))
def test_bad_input_is_refused_naming_the_argument(call, kwargs, expected):
    with pytest.raises(ValueError) as raised:
        call(**kwargs)
    assert expected in str(raised.value)


def test_whole_floats_and_zero_one_flags_are_accepted_like_ints_and_bools():
    """The other side of the rules: 2.0 is the class 2 and 1 / 0 are True / False, in the
    core and in the modules alike."""
    as_ints = rows(predictions=[0, 2], references=[0, 2])
    as_floats = rows(predictions=[0.0, 2.0], references=[0.0, 2.0])
    assert bg_gap_report(**as_floats) == bg_gap_report(**as_ints)
    assert module("bg_gap")(**as_floats) == module("bg_gap")(**as_ints)
    assert module("bg_challenge")(vulnerable=[1, 0, 0, 0]) == {"challenge_accuracy": 0.75}
    assert challenge_accuracy([1.0, 0.0]) == challenge_accuracy([True, False]) == 0.5
