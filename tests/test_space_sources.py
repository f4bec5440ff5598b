"""What the Space needs from the data layer: a Hub id is never read as a local folder
(``resolve_source(..., hub_only=True)``), and every results document names the data it
scored by ``data.fingerprint``, which the leaderboard row uses."""

from __future__ import annotations

import pytest

from hf_bgbench.benchmarks import get_benchmark
from hf_bgbench.data.sources import DataSourceError, resolve_source


def test_hub_only_never_reads_a_folder_named_like_the_hub_id(in9_release, tmp_path, monkeypatch):
    spec = get_benchmark("in9")
    (tmp_path / "acme").mkdir()
    (tmp_path / "acme" / "in9").symlink_to(in9_release, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    # the default resolution reads the relative folder first: what the Space must avoid
    assert resolve_source("acme/in9", spec).kind != "hub"
    reader = resolve_source("acme/in9", spec, hub_only=True)
    assert reader.kind == "hub" and reader.location == "acme/in9"
    # offline, the Hub dataset is not in the cache: it fails instead of reading the folder
    with pytest.raises(DataSourceError, match="not in the local Hugging Face cache"):
        reader.load("original")


@pytest.mark.parametrize("bad", ["/etc", "../x", "acme/in9/sub", "local-dir:acme", "acme"])
def test_hub_only_refuses_anything_but_an_owner_name_id(bad):
    with pytest.raises(DataSourceError, match="not a Hub dataset id"):
        resolve_source(bad, get_benchmark("in9"), hub_only=True)


def _evaluate(in9_release, variants, **options):
    from hf_bgbench.tasks.evaluate import evaluate_model
    from tests.in9_fixture import ColourRuleClassifier

    return evaluate_model(
        ColourRuleClassifier(), data=str(in9_release), variants=variants, **options
    )


def test_results_carry_a_data_fingerprint_the_leaderboard_uses(in9_release, tmp_path):
    from hf_bgbench.space.views.leaderboard import row_from_results

    first = _evaluate(in9_release, ["mixed_same", "mixed_rand"], cache_dir=tmp_path / "c1")
    again = _evaluate(in9_release, ["mixed_same", "mixed_rand"], cache_dir=tmp_path / "c2")
    other = _evaluate(in9_release, ["original"], cache_dir=tmp_path / "c3")
    uncached = _evaluate(in9_release, ["original"], use_cache=False)
    fingerprint = first["data"]["fingerprint"]
    assert isinstance(fingerprint, str) and len(fingerprint) == 20
    assert again["data"]["fingerprint"] == fingerprint  # same data, same identity
    assert other["data"]["fingerprint"] != fingerprint  # other variants scored
    # without the prediction cache the reference variant (original) identifies the data
    assert uncached["data"]["fingerprint"] == other["data"]["fingerprint"]
    assert row_from_results(first, "in9-local")["data_fingerprint"] == fingerprint
