"""The Backgrounds Challenge resumes and streams: on the synthetic IN-9 of in9_fixture.py
(hand computation in test_challenge.py: 9 robust k=0 foregrounds, 9 vulnerable grey k=1).

* An interrupted run (Ctrl-C injected into the model) keeps every decided foreground in the
  cache; the rerun computes only the others -- clean forwards and composites of the
  foregrounds not cached, nothing else -- and ends with the verdicts of an uninterrupted run.
  Two resumes from the same cached state agree on everything (pass counts, recorded fooling
  backgrounds); a third run computes nothing.
* Backgrounds streamed in chunks (--max-device-backgrounds) give the same verdicts, and the
  same full matrix, as all of them on the device.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pytest

from hf_bgbench.cli import main
from hf_bgbench.inference.engine import Interrupted
from hf_bgbench.tasks.challenge import run_challenge
from tests.in9_fixture import ColourRuleClassifier

VERDICT_KEYS = (
    "challenge_accuracy",
    "challenge_accuracy_ci95",
    "clean_accuracy",
    "n_foregrounds",
    "n_backgrounds",
    "n_vulnerable",
    "challenge_accuracy_per_class",
    "composites_minimal",
    "attack_success",
)


class InterruptingClassifier(ColourRuleClassifier):
    """Presses Ctrl-C at its ``after``-th forward call."""

    def __init__(self, after: int):
        super().__init__()
        self.after, self.calls = after, 0

    def logits(self, x):
        self.calls += 1
        if self.calls == self.after:
            raise KeyboardInterrupt
        return super().logits(x)


def _run(release, clf, **kw):
    kw.setdefault("progress", False)
    kw.setdefault("num_workers", 0)
    kw.setdefault("batch_size", 4)
    return run_challenge(clf, release, **kw)


def _verdicts(out_dir) -> dict[str, bool]:
    frame = pd.read_parquet(out_dir / "vulnerable.parquet")
    return dict(zip(frame["id"], frame["vulnerable"], strict=True))


def _cached_rows(cache_dir) -> int:
    return sum(len(pd.read_parquet(p)) for p in cache_dir.rglob("part-*.parquet"))


@pytest.mark.parametrize("chunk", [None, 7])
def test_interrupted_run_resumes_to_identical_results(in9_release, tmp_path, chunk):
    kw = {"max_device_backgrounds": chunk}
    reference = _run(
        in9_release, ColourRuleClassifier(), use_cache=False, output_dir=tmp_path / "ref", **kw
    )

    cache = tmp_path / "cache"
    with pytest.raises(Interrupted) as stop:
        _run(in9_release, InterruptingClassifier(after=12), cache_dir=cache, **kw)
    cached = stop.value.cached
    assert 0 < cached == _cached_rows(cache)
    frozen = tmp_path / "frozen"
    shutil.copytree(cache, frozen)  # the same cached state, for a second resume

    clf = ColourRuleClassifier()
    resumed = _run(in9_release, clf, cache_dir=cache, output_dir=tmp_path / "a", **kw)
    for key in VERDICT_KEYS:
        assert resumed.get(key) == reference.get(key), key
    assert _verdicts(tmp_path / "a") == _verdicts(tmp_path / "ref")
    assert resumed["reused_rows"] == cached
    # only the rest: every forward of the resumed run is a composite or a clean forward of a
    # foreground that was not cached
    assert clf.forward_images == resumed["composites_computed"] + resumed["clean_forwards"]
    if chunk is None:
        assert resumed["computed_rows"] == 18 - cached
        assert resumed["clean_forwards"] == 18 - cached
    cached_composites = resumed["composites_evaluated"] - resumed["composites_computed"]
    assert 0 < cached_composites < reference["composites_evaluated"]

    # same cached state -> same schedule, to the composite and the recorded fooling background
    again = _run(
        in9_release, ColourRuleClassifier(), cache_dir=frozen, output_dir=tmp_path / "b", **kw
    )
    a = pd.read_parquet(tmp_path / "a" / "vulnerable.parquet")
    b = pd.read_parquet(tmp_path / "b" / "vulnerable.parquet")
    pd.testing.assert_frame_equal(a, b)
    assert again["composites_evaluated"] == resumed["composites_evaluated"]

    clf = ColourRuleClassifier()
    third = _run(in9_release, clf, cache_dir=cache, **kw)
    assert clf.forward_images == 0 and third["computed_rows"] == 0
    for key in (*VERDICT_KEYS, "composites_evaluated"):
        assert third.get(key) == resumed.get(key), key


@pytest.mark.slow  # the full foreground x background matrix, three runs
def test_full_matrix_resumes_and_streams_to_the_same_matrix(in9_release, tmp_path):
    _run(
        in9_release,
        ColourRuleClassifier(),
        full_matrix=True,
        use_cache=False,
        output_dir=tmp_path / "ref",
    )
    expected = np.load(tmp_path / "ref" / "fooling_matrix.npz")["predictions"]
    cache = tmp_path / "cache"
    with pytest.raises(Interrupted):
        _run(
            in9_release,
            InterruptingClassifier(after=40),
            full_matrix=True,
            cache_dir=cache,
            max_device_backgrounds=5,
        )
    r = _run(
        in9_release,
        ColourRuleClassifier(),
        full_matrix=True,
        cache_dir=cache,
        max_device_backgrounds=5,
        output_dir=tmp_path / "out",
    )
    assert r["settings"]["background_chunks"] == 4  # 5 + 5 + 5 + 3
    assert r["reused_rows"] > 0
    npz = np.load(tmp_path / "out" / "fooling_matrix.npz")
    assert np.array_equal(npz["predictions"], expected)
    assert r["composites_evaluated"] == 324 and r["attack_success"]["max_asr"] == 0.5


def test_chunked_backgrounds_same_verdicts(in9_release, tmp_path):
    whole = _run(in9_release, ColourRuleClassifier(), use_cache=False, output_dir=tmp_path / "a")
    one = _run(
        in9_release,
        ColourRuleClassifier(),
        use_cache=False,
        max_device_backgrounds=1,
        output_dir=tmp_path / "b",
    )
    assert whole["settings"]["background_chunks"] == 1
    assert whole["settings"]["background_chunk_size"] == 18  # they fit: all on the device
    assert one["settings"]["background_chunks"] == 18
    assert _verdicts(tmp_path / "a") == _verdicts(tmp_path / "b")
    for key in VERDICT_KEYS:
        assert one.get(key) == whole.get(key), key
    assert set(one["memory"]) == {
        "peak_rss_mb",
        "peak_rss_workers_mb",
        "cuda_max_allocated_mb",
        "processes",
    }
    assert one["memory"]["processes"] == one["settings"]["processes"] == 1


def test_cli_resumes_after_ctrl_c(in9_release, tmp_path, monkeypatch, capsys):
    import hf_bgbench.tasks.run_model as run_model

    clf = InterruptingClassifier(after=12)
    monkeypatch.setattr(run_model, "load_model", lambda *a, **k: clf)
    args = [
        "challenge",
        "stand-in",
        "--data",
        str(in9_release),
        "--batch-size",
        "4",
        "--workers",
        "0",
        "--quiet",
        "--cache-dir",
        str(tmp_path / "cache"),
        "--output",
        str(tmp_path / "out"),
    ]
    assert main(args) == 130
    err = capsys.readouterr().err
    assert "interrupted" in err and "cached, re-run the same command to resume" in err
    clf = ColourRuleClassifier()
    monkeypatch.setattr(run_model, "load_model", lambda *a, **k: clf)
    assert main(args) == 0
    saved = json.loads((tmp_path / "out" / "challenge.json").read_text())
    assert saved["challenge_accuracy"] == 0.5 and saved["reused_rows"] > 0
