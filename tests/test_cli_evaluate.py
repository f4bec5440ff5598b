"""`bgbench evaluate` end to end: the bundled model on real photos, any model kind on a release."""

from __future__ import annotations

import json

import pytest

from hf_bgbench.cli import main
from tests.model_fixtures import write_transformers_classifier


@pytest.mark.slow  # every real sample photo through the CLI
def test_bundled_lite0_on_real_photos(shared_data, tmp_path, capsys):
    out = tmp_path / "out"
    code = main(
        [
            "evaluate",
            "tf_efficientnet_lite0",
            "--benchmark",
            "in9",
            "--data",
            str(shared_data / "in9_samples"),
            "--output",
            str(out),
            "--quiet",
        ]
    )
    assert code == 0
    results = json.loads((out / "results.json").read_text())
    original = results["variants"]["original"]
    assert original["n"] == 186 and original["skipped"] == 0
    assert original["accuracy"] >= 0.9
    assert results["model_resolved"].startswith("bundled:tf_efficientnet_lite0")
    assert results["preprocessing"]["applied"] == "full"  # raw photos: resize + centre crop
    assert "original" in capsys.readouterr().out


def test_transformers_folder_scored_on_release(in9_release, tmp_path):
    from hf_bgbench.benchmarks.in9.labels import in9_classes

    names = list(reversed(in9_classes()[0]))
    folder = write_transformers_classifier(tmp_path / "hf_in9", names)
    out = tmp_path / "out"
    code = main(
        [
            "evaluate",
            str(folder),
            "--data",
            str(in9_release),
            "--variants",
            "original",
            "mixed_rand",
            "only_bg_t",
            "--output",
            str(out),
            "--quiet",
            "--workers",
            "0",
        ]
    )
    assert code == 0
    results = json.loads((out / "results.json").read_text())
    assert set(results["variants"]) == {"original", "mixed_rand", "only_bg_t"}
    assert results["model_label_space"] == "in9"
    assert results["preprocessing"]["applied"] == "precropped"
    cats = results["categories"]
    assert sum(
        cats[k] for k in ("bg_required", "bg_fg_required", "bg_irrelevant", "bg_fools", "other")
    ) == pytest.approx(1.0)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["evaluate", "resnet-50"], "resnet50"),
        (["evaluate", "tf_efficientnet_lite0", "--benchmark", "in10"], "Unknown benchmark"),
        (
            ["evaluate", "tf_efficientnet_lite0", "--data", "/no/such/folder/at/all"],
            "no such folder",
        ),
    ],
)
def test_errors_are_printed_without_traceback(argv, message, capsys, in9_release):
    assert main(argv + ["--quiet"]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
