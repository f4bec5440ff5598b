"""Every cache bgbench reads back is checked against what was written: a prediction-cache or
challenge-cache part damaged on disk is said, removed and computed again, never read as data.
(The decoded-image, text-embedding and linear-probe caches: test_decoded_cache.py,
test_zero_shot.py, test_probe.py.)"""

from __future__ import annotations

import pandas as pd

from hf_bgbench.tasks.evaluate import evaluate_model
from tests.in9_fixture import ColourRuleClassifier


def _score(data, out):
    return evaluate_model(
        ColourRuleClassifier(),
        data=data,
        variants=["original"],
        output_dir=out,
        num_workers=0,
        progress=False,
    )


def _silently_changed(data: bytes, probe) -> bytes:
    """``data`` with 4 bytes zeroed where Parquet itself still reads it, to other values:
    damage only the page checksums written with the part can tell."""
    import pyarrow.parquet as pq

    probe.write_bytes(data)
    intact = pq.read_table(probe).to_pandas()
    for at in range(4, len(data) - 8, 4):
        changed = data[:at] + bytes(4) + data[at + 4 :]
        probe.write_bytes(changed)
        try:
            if not pq.read_table(probe).to_pandas().equals(intact):
                return changed
        except Exception:  # damage Parquet finds on its own
            continue
    raise AssertionError("no silent damage found")


def test_a_damaged_prediction_cache_part_is_scored_again(
    in9_release, tmp_path, monkeypatch, caplog
):
    monkeypatch.setenv("HF_BGBENCH_CACHE", str(tmp_path / "cache"))
    first = _score(in9_release, tmp_path / "first")
    (part,) = (tmp_path / "cache" / "predictions").rglob("part-*.parquet")
    part.write_bytes(_silently_changed(part.read_bytes(), tmp_path / "probe.parquet"))
    with caplog.at_level("WARNING"):
        again = _score(in9_release, tmp_path / "again")
    assert "prediction cache part " in caplog.text and "is damaged" in caplog.text
    assert again["computed_images"] == first["computed_images"] == 18  # scored again
    pd.testing.assert_frame_equal(
        pd.read_parquet(tmp_path / "again" / "predictions" / "original.parquet"),
        pd.read_parquet(tmp_path / "first" / "predictions" / "original.parquet"),
    )
    third = _score(in9_release, tmp_path / "third")
    assert third["reused_images"] == 18  # the cache rewritten whole


def test_a_damaged_challenge_cache_part_is_decided_again(in9_release, tmp_path, caplog):
    from hf_bgbench.tasks.challenge import run_challenge

    def run(out):
        return run_challenge(
            ColourRuleClassifier(),
            in9_release,
            cache_dir=tmp_path / "cache",
            output_dir=out,
            progress=False,
            num_workers=0,
        )

    first = run(tmp_path / "first")
    parts = sorted((tmp_path / "cache").rglob("part-*.parquet"))
    parts[0].write_bytes(_silently_changed(parts[0].read_bytes(), tmp_path / "probe.parquet"))
    with caplog.at_level("WARNING"):
        again = run(tmp_path / "again")
    assert "challenge cache part " in caplog.text and "is damaged" in caplog.text
    assert again["challenge_accuracy"] == first["challenge_accuracy"]
    assert again["reused_rows"] < first["n_foregrounds"]  # the damaged part's rows again
    pd.testing.assert_frame_equal(
        pd.read_parquet(tmp_path / "again" / "vulnerable.parquet"),
        pd.read_parquet(tmp_path / "first" / "vulnerable.parquet"),
    )
