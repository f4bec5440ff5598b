"""The Backgrounds Challenge (hf_bgbench.tasks.challenge) on the synthetic IN-9 of in9_fixture.py.

Hand computation (tests/in9_fixture.py, ColourRuleClassifier):

* Foregrounds = ``original`` (18 images, (y, k) for y in 0..8, k in 0/1): a square object
  at BOX (72..152) -- class colour y for k=0, GREY for k=1 -- and fg_mask = that square.
* Backgrounds = ``only_bg_t`` (18 images, in dataset order (0,0), (0,1), (1,0), ...): the
  whole image filled with one colour: y for k=0 and for k=1 with y<=5; (6,1) -> colour 2,
  (7,1) -> colour 8, (8,1) -> colour 5. The *label* of a background is its image's class y
  (not its colour), so background colours in order are [0,0,1,1,2,2,3,3,4,4,5,5,6,2,7,8,8,5].
* The rule reads the centre (104..120, inside the square) first. k=0: centre = class colour,
  predicted y on every background -> never fooled. k=1: centre grey (not a class colour),
  so the border decides, and the border of a composite is entirely background -> predicted
  class = the background's colour. Every colour 0..8 occurs, so each k=1 foreground meets a
  background of another colour -> all 9 are vulnerable. Challenge accuracy = 9/18 = 0.5, and
  0.5 in every class (one robust k=0, one vulnerable k=1 each).
* Clean accuracy (uncomposited originals) = EXPECTED_ACCURACY["original"] = 16/18.
* Minimal composites: 9 robust x 18 backgrounds + 9 vulnerable x 1 = 171.
* Early stop, batch 4 (tasks/challenge/schedule.py): 4 foregrounds active, one composite
  each per batch, each background's fooling rate so far deciding the order. A k=0
  foreground tries all 18 whatever the order. A grey k=1 foreground of class y is fooled by
  every background whose colour is not y, so it costs 1 composite + 1 per background of its
  own colour it meets first: at most 1 + 3 (colours 2 and 5 fill 3 backgrounds each), so any
  order costs between 171 and 162 + 9 + 18 = 189. This run (seed 0; tie-break order
  ``tiebreak_rank(18, 0)`` starts with background 0 = (0,0), colour 0): batch 1 gives all
  four active foregrounds background 0, so (0,1) meets its own colour (1 wasted composite)
  while (1,1) is fooled into 0. Batch 2 gives (0,1) background 8 = (4,0) (colour 4, fooled);
  (2,1) is fooled by 16 = (8,0) (colour 8) in batch 3, and from then on 16 leads (fooling
  rate plus harm, 1 - P(true class): ~1 on a fooled composite, ~0.04 on the others): every
  later grey foreground meets it first, and only (8,1) (its own colour) wastes one more. Per
  foreground: k=0 18; (0,1), (8,1) 2; the other seven grey ones 1. Total
  162 + 2 x 2 + 7 x 1 = 173 = minimal + 2 (+18 clean forwards); the reference order
  (dataset order, batches of 4, stop at the first fooling batch) took 9 x 18 + 9 x 4 = 198;
  the full matrix needs 18 x 18 = 324.
* ASR of background j (label L, colour C) = share of the 16 other-class foregrounds predicted
  L. k=0 foregrounds say their own class (never L); k=1 ones say C. If C == L, the 8 k=1
  foregrounds of other classes are flipped into L -> 8/16 = 0.5 (15 backgrounds). For (6,1),
  (7,1), (8,1), C != L -> 0.0. Foolable into c: some class-c background has colour c, so the
  8 other-class k=1 foregrounds -> 8/16 = 0.5 for every class. Fooled into the background's
  class by some background: the 9 k=1 foregrounds -> 9/18 = 0.5.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pytest
import torch
from PIL import Image

from hf_bgbench.cli import main
from hf_bgbench.models.devices import default_batch_size
from hf_bgbench.tasks.challenge import ChallengeError, run_challenge
from hf_bgbench.tasks.challenge.schedule import tiebreak_rank
from tests.in9_fixture import EXPECTED_ACCURACY, ColourRuleClassifier, image_id, write_release

BG_COLOURS = [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 2, 7, 8, 8, 5]
BG_IDS = [image_id(y, k) for y in range(9) for k in (0, 1)]


def _run(release, clf=None, **kw):
    kw.setdefault("progress", False)
    kw.setdefault("num_workers", 0)
    kw.setdefault("use_cache", False)  # the session's cache would serve later tests
    clf = clf or ColourRuleClassifier()
    return clf, run_challenge(clf, release, **kw)


def test_early_stop_matches_hand_computation(in9_release, tmp_path):
    assert np.argsort(tiebreak_rank(18, 0))[0] == 0  # the docstring's first background
    clf, r = _run(in9_release, batch_size=4, output_dir=tmp_path)
    assert r["mode"] == "early_stop"
    assert r["challenge_accuracy"] == 0.5
    assert set(r["challenge_accuracy_per_class"].values()) == {0.5}
    assert r["clean_accuracy"] == pytest.approx(EXPECTED_ACCURACY["original"])
    assert (r["n_foregrounds"], r["n_backgrounds"], r["n_vulnerable"]) == (18, 18, 9)
    assert r["composites_minimal"] == 9 * 18 + 9 == 171
    assert r["composites_evaluated"] == r["composites_computed"] == 162 + 2 * 2 + 7 == 173
    assert 171 <= r["composites_evaluated"] <= 189  # any order
    assert r["composites_total"] == 324
    assert clf.forward_images == 173 + 18  # composites + the clean foregrounds
    assert r["settings"]["schedule"]["tiebreak_seed"] == 0
    assert "attack_success" not in r

    frame = pd.read_parquet(tmp_path / "vulnerable.parquet").set_index("id")
    assert frame["vulnerable"].to_dict() == {
        image_id(y, k): k == 1 for y in range(9) for k in (0, 1)
    }
    grey = frame[frame["vulnerable"]]
    colour = dict(zip(BG_IDS, BG_COLOURS, strict=True))
    for y in range(9):  # a fooling background has another colour; the prediction is it
        fooling = grey.loc[image_id(y, 1), "fooling_bg_id"]
        assert colour[fooling] != y and grey.loc[image_id(y, 1), "pred"] == colour[fooling]
        wasted = 1 if y in (0, 8) else 0
        assert grey.loc[image_id(y, 1), "composites"] == 1 + wasted
    assert grey.loc[image_id(1, 1), "fooling_bg_id"] == image_id(0, 0)  # batch 1
    assert frame["fooling_bg_id"][~frame["vulnerable"]].isna().all()
    assert set(frame.loc[~frame["vulnerable"], "composites"]) == {18}

    saved = json.loads((tmp_path / "challenge.json").read_text())
    assert saved["challenge_accuracy"] == 0.5
    assert saved["memory"]["peak_rss_mb"] > 0
    report = (tmp_path / "challenge.md").read_text()
    assert "| colour-rule-imagenet-1k | 50.0 |" in report
    # the verdicts are order-independent; which fooling background is listed is not
    assert "first found in the schedule, not in dataset order" in " ".join(report.split())
    assert Image.open(tmp_path / "challenge.png").size[0] > 100
    assert not (tmp_path / "fooling_matrix.npz").exists()


def test_default_batch_is_small_on_a_cpu_and_verdicts_do_not_change(in9_release):
    """No --batch-size: 8 on a CPU (one composite per undecided foreground per batch, so the
    order learns after every 8), 64 on a GPU; recorded, and the verdicts are the batch-4 ones."""
    assert default_batch_size("cpu", 64) == 8
    assert default_batch_size("cuda", 64) == 64  # no GPU needed to name one
    clf, r = _run(in9_release, device="cpu")
    assert r["settings"]["batch_size"] == 8
    assert r["challenge_accuracy"] == 0.5 and r["n_vulnerable"] == 9
    assert 171 <= r["composites_evaluated"] <= 189  # any order (hand computation above)
    with pytest.raises(ValueError, match="--batch-size must be >= 1, got 0"):
        _run(in9_release, batch_size=0)


def test_full_matrix_attack_success_rates(in9_release, tmp_path):
    clf, r = _run(in9_release, full_matrix=True, batch_size=5, output_dir=tmp_path)
    assert r["mode"] == "full_matrix"
    assert r["challenge_accuracy"] == 0.5
    assert r["composites_evaluated"] == r["composites_minimal"] == 324 > 173
    assert clf.forward_images == 324 + 18

    npz = np.load(tmp_path / "fooling_matrix.npz")
    assert npz["predictions"].shape == (18, 18)
    assert list(npz["background_ids"]) == BG_IDS
    for i, (y, k) in enumerate((y, k) for y in range(9) for k in (0, 1)):
        expected = [y] * 18 if k == 0 else BG_COLOURS
        assert npz["predictions"][i].tolist() == expected
    asr = dict(zip(npz["background_ids"], npz["attack_success_rate"], strict=True))
    misleading = {image_id(6, 1), image_id(7, 1), image_id(8, 1)}  # colour != class
    assert {b: float(v) for b, v in asr.items()} == {
        b: 0.0 if b in misleading else 0.5 for b in BG_IDS
    }

    summary = r["attack_success"]
    assert summary["fooled_into_background_class"] == 0.5
    assert summary["max_asr"] == 0.5
    assert summary["mean_asr"] == pytest.approx(15 * 0.5 / 18)
    for name, row in summary["per_class"].items():
        assert row["foolable_into"] == 0.5 and row["max_asr"] == 0.5, name
        assert row["n_backgrounds"] == 2
    assert summary["per_class"]["dog"]["top_backgrounds"][0] == {"id": image_id(0, 0), "asr": 0.5}
    # the misleading primate background (colour of fish) comes last in its class
    assert [t["id"] for t in summary["per_class"]["primate"]["top_backgrounds"]] == [
        image_id(7, 0),
        image_id(7, 1),
    ]
    frame = pd.read_parquet(tmp_path / "vulnerable.parquet").set_index("id")
    # grey class 0 survives on its 2 colour-0 backgrounds -> 16 fooling backgrounds
    assert frame.loc[image_id(0, 1), "n_fooling_backgrounds"] == 16
    assert frame.loc[image_id(6, 1), "n_fooling_backgrounds"] == 17  # only colour 6 is safe


def test_subsets_are_seeded_and_recorded(in9_release):
    _, a = _run(in9_release, max_foregrounds=5, max_backgrounds=6, seed=3)
    _, b = _run(in9_release, max_foregrounds=5, max_backgrounds=6, seed=3)
    _, c = _run(in9_release, max_foregrounds=5, max_backgrounds=6, seed=4)
    assert (a["n_foregrounds"], a["n_backgrounds"], a["composites_total"]) == (5, 6, 30)
    sub = a["subset"]
    assert sub["seed"] == 3 and len(sub["foreground_ids"]) == 5 and len(sub["background_ids"]) == 6
    assert sub["foreground_ids"] == b["subset"]["foreground_ids"]
    assert sub["background_ids"] == b["subset"]["background_ids"]
    assert (sub["foreground_ids"], sub["background_ids"]) != (
        c["subset"]["foreground_ids"],
        c["subset"]["background_ids"],
    )
    assert set(sub["background_ids"]) <= set(BG_IDS)
    _, full = _run(in9_release)
    assert full["subset"]["foreground_ids"] is None and full["subset"]["background_ids"] is None


def test_missing_masks_is_a_clear_error(tmp_path):
    root = write_release(tmp_path, variants=("original", "only_bg_t"))
    shutil.rmtree(root / "bg_challenge" / "fg_mask")
    with pytest.raises(ValueError, match="fg_mask"):
        _run(root)


def test_background_of_another_size_is_a_clear_error(tmp_path):
    root = write_release(tmp_path, variants=("original", "only_bg_t"))
    for path in (root / "bg_challenge" / "only_bg_t").rglob("*.JPEG"):
        Image.open(path).resize((200, 200)).save(path)
    with pytest.raises(ChallengeError, match="one size"):
        _run(root)


def test_unit_normalisation_is_the_uint8_one():
    from hf_bgbench.models.preprocessing import Preprocessing

    pre = Preprocessing((224, 224), 256, (224, 224), "bicubic", (0.5, 0.4, 0.3), (0.2, 0.3, 0.4))
    u8 = torch.randint(0, 256, (2, 3, 8, 8), dtype=torch.uint8)
    assert torch.equal(pre.normalize_batch(u8), pre.normalize_unit_batch(u8.float().div(255)))


def test_cli_end_to_end_with_the_bundled_model(in9_release, tmp_path, capsys):
    out = tmp_path / "out"
    code = main(
        [
            "challenge",
            "tf_efficientnet_lite0",
            "--data",
            str(in9_release),
            "--max-foregrounds",
            "3",
            "--max-backgrounds",
            "4",
            "--full-matrix",
            "--batch-size",
            "4",
            "--workers",
            "0",
            "--device",
            "cpu",
            "--output",
            str(out),
            "--quiet",
        ]
    )
    assert code == 0
    names = {
        "challenge.json",
        "challenge.md",
        "challenge_model_index.yaml",
        "challenge.png",
        "vulnerable.parquet",
    }
    assert names | {"fooling_matrix.npz"} == {p.name for p in out.iterdir()}
    results = json.loads((out / "challenge.json").read_text())
    assert results["model_resolved"].startswith("bundled:tf_efficientnet_lite0")
    assert (results["n_foregrounds"], results["n_backgrounds"]) == (3, 4)
    assert results["composites_evaluated"] == 12
    assert 0.0 <= results["challenge_accuracy"] <= 1.0
    assert np.load(out / "fooling_matrix.npz")["predictions"].shape == (3, 4)
    assert "challenge accuracy" in capsys.readouterr().out.lower()


def test_cli_reports_bad_data_without_traceback(tmp_path, capsys):
    root = write_release(tmp_path / "release", variants=("original", "only_bg_t"))
    shutil.rmtree(root / "bg_challenge" / "fg_mask")
    out = tmp_path / "out"  # (without --output it wrote bgbench_challenge/ in the checkout)
    argv = ["challenge", "tf_efficientnet_lite0", "--data", str(root), "--output", str(out)]
    code = main([*argv, "--quiet"])
    assert code == 2
    assert "fg_mask" in capsys.readouterr().err
    assert not out.exists()  # a failed run leaves no empty --output folder


def test_decode_workers_start_once_for_backgrounds_and_foregrounds_same_verdicts(
    in9_release, tmp_path
):
    _run(in9_release, batch_size=4, output_dir=tmp_path / "serial")
    _, r = _run(in9_release, batch_size=4, num_workers=2, output_dir=tmp_path / "workers")
    assert r["settings"]["decode_pipeline"] == {
        "workers": 2,
        "chosen_by": "--workers",
        "worker_starts": 1,  # one start serves the background pass and the foreground pass
    }
    assert r["settings"]["num_workers"] == 2
    assert r["settings"]["precision"] == "fp32"  # the default, recorded
    serial, workers = (
        pd.read_parquet(tmp_path / name / "vulnerable.parquet").set_index("id")
        for name in ("serial", "workers")
    )
    pd.testing.assert_series_equal(serial["vulnerable"], workers["vulnerable"])
    pd.testing.assert_series_equal(serial["fooling_bg_id"], workers["fooling_bg_id"])
