"""Several processes through ``accelerate launch`` (hf_bgbench.inference.distributed): `evaluate`
and
`challenge` with two CPU processes give the results of one process, and their caches serve a
later one-process run.

The launched tests run the real command a user runs (``accelerate launch --multi_gpu
--num_processes 2 -m hf_bgbench ...``; on a machine without GPUs the processes talk over
gloo) on the synthetic IN-9 of tests/in9_fixture.py with the bundled model.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from hf_bgbench.cli import main
from hf_bgbench.inference.distributed import Processes, ProcessFailed, launched_processes, processes
from hf_bgbench.inference.engine import PredictionRun, merge_runs
from hf_bgbench.tasks.challenge.shards import merge_memory, merge_shards

VARIANTS = ["original", "mixed_same", "mixed_rand", "only_bg_t"]
# 18 images per variant: shares of 9 per process; batches of 9 make the two-process batches
# the very batches of one process.
BATCH = "9"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _launch(args: list[str], tmp_path: Path, ok: bool = True) -> subprocess.CompletedProcess:
    """``accelerate launch --multi_gpu --num_processes 2 -m hf_bgbench ARGS`` on the CPU."""
    argv = [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu"]
    argv += ["--num_processes", "2", "--num_machines", "1", "--mixed_precision", "no"]
    argv += ["--dynamo_backend", "no", "--main_process_port", str(_free_port())]
    scratch = tmp_path / "tmp"  # torchelastic leaves its folders in TMPDIR
    scratch.mkdir(exist_ok=True)
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "OMP_NUM_THREADS": "1", "TMPDIR": str(scratch)}
    proc = subprocess.run(
        [*argv, "-m", "hf_bgbench", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert (proc.returncode == 0) == ok, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


def _without(doc: dict, *keys: str) -> dict:
    return {k: v for k, v in doc.items() if k not in keys}


# ---------------------------------------------------------------- launched: two processes


@pytest.mark.slow  # two processes launched
def test_two_process_evaluate_equals_one_process(in9_release, tmp_path):
    common = ["evaluate", "tf_efficientnet_lite0", "--data", str(in9_release), "--quiet"]
    common += ["--variants", *VARIANTS, "--batch-size", BATCH, "--workers", "0"]
    common += ["--restrict-to-benchmark-classes"]  # varied predictions on flat colours
    assert main([*common, "--output", str(tmp_path / "one"), "--no-cache"]) == 0
    cache = ["--cache-dir", str(tmp_path / "cache")]
    proc = _launch([*common, "--output", str(tmp_path / "two"), *cache], tmp_path)
    assert proc.stdout.count("wrote ") == 1  # only the main process reports

    one = json.loads((tmp_path / "one" / "results.json").read_text())
    two = json.loads((tmp_path / "two" / "results.json").read_text())
    assert two["computed_images"] == one["computed_images"] == 4 * 18
    assert _without(two, "created", "report") == _without(one, "created", "report")
    assert two["report"]["scores"] == one["report"]["scores"]
    predicted = set()
    for variant in VARIANTS:
        a = pd.read_parquet(tmp_path / "one" / "predictions" / f"{variant}.parquet")
        predicted |= set(a["pred"])
        b = pd.read_parquet(tmp_path / "two" / "predictions" / f"{variant}.parquet")
        assert list(b["id"]) == list(a["id"])  # dataset order, shares gathered in order
        for column in ("label", "pred", "pred_model"):
            assert b[column].tolist() == a[column].tolist(), (variant, column)
        np.testing.assert_allclose(b["prob_true"], a["prob_true"], rtol=1e-5, atol=1e-7)
    assert len(predicted) > 2  # varied predictions: a shuffled merge would show

    # both processes wrote their own cache parts; one process later reuses every image
    parts = list((tmp_path / "cache").rglob("part-*.parquet"))
    assert len(parts) == 2 * len(VARIANTS)
    assert main([*common, "--output", str(tmp_path / "again"), *cache]) == 0
    again = json.loads((tmp_path / "again" / "results.json").read_text())
    assert (again["computed_images"], again["reused_images"]) == (0, 4 * 18)
    assert again["variants"] == one["variants"] and again["bg_gap"] == one["bg_gap"]


def _photo_release(photos: Path, root: Path, n: int = 12) -> Path:
    """A Backgrounds Challenge release from ``n`` real photos (every 15th of the samples):
    centre 224 crops as ``original``, their mirror images as ``only_bg_t``, a centre
    ellipse as ``fg_mask`` -- with the bundled model, some foregrounds robust, some not."""
    from hf_bgbench.benchmarks.in9.labels import in9_classes

    names = in9_classes()[0]
    base = root / "bg_challenge"
    for variant in ("original", "only_bg_t", "fg_mask"):
        for y, name in enumerate(names):
            (base / variant / "val" / f"{y:02d}_{name}").mkdir(parents=True)
    yy, xx = np.mgrid[:224, :224]
    ellipse = (((xx - 112) / 70.0) ** 2 + ((yy - 112) / 85.0) ** 2 <= 1).astype(np.uint8)
    rows = pd.read_csv(photos / "metadata.csv").iloc[::15].head(n)
    for row in rows.itertuples():
        image = Image.open(photos / "images" / row.file).convert("RGB")
        scale = 256 / min(image.size)
        image = image.resize((round(image.width * scale), round(image.height * scale)))
        left, top = (image.width - 224) // 2, (image.height - 224) // 2
        image = image.crop((left, top, left + 224, top + 224))
        folder = f"{row.in9_index:02d}_{names[row.in9_index]}"
        stem = Path(row.file).stem
        image.save(base / "original" / "val" / folder / f"{stem}.JPEG", quality=90)
        mirrored = image.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
        mirrored.save(base / "only_bg_t" / "val" / folder / f"{stem}.JPEG", quality=90)
        np.save(base / "fg_mask" / "val" / folder / f"{stem}.npy", ellipse)
    return root


@pytest.mark.slow  # two processes launched
def test_two_process_challenge_equals_one_process(shared_data, tmp_path):
    release = _photo_release(shared_data / "in9_samples", tmp_path / "release")
    common = ["challenge", "tf_efficientnet_lite0", "--data", str(release), "--quiet"]
    common += ["--batch-size", "8", "--workers", "0", "--device", "cpu"]
    assert main([*common, "--output", str(tmp_path / "one"), "--no-cache"]) == 0
    cache = ["--cache-dir", str(tmp_path / "cache")]
    _launch([*common, "--output", str(tmp_path / "two"), *cache], tmp_path)

    one = json.loads((tmp_path / "one" / "challenge.json").read_text())
    two = json.loads((tmp_path / "two" / "challenge.json").read_text())
    same = [
        "challenge_accuracy",
        "challenge_accuracy_ci95",
        "clean_accuracy",
        "n_foregrounds",
        "n_backgrounds",
        "n_vulnerable",
        "challenge_accuracy_per_class",
        "composites_minimal",
    ]
    assert {k: two[k] for k in same} == {k: one[k] for k in same}
    assert (two["settings"]["processes"], two["memory"]["processes"]) == (2, 2)
    assert 0 < one["n_vulnerable"] < one["n_foregrounds"] == 12  # verdicts of both kinds
    assert two["clean_forwards"] == 12  # each foreground scored clean by one process only
    assert two["composites_evaluated"] >= two["composites_minimal"]

    verdict = ["id", "label", "vulnerable", "clean_pred"]
    a = pd.read_parquet(tmp_path / "one" / "vulnerable.parquet")
    b = pd.read_parquet(tmp_path / "two" / "vulnerable.parquet")
    assert b[verdict].equals(a[verdict])
    fooled = b[b["vulnerable"]]  # a recorded fooling background (the schedule's) does fool
    assert (fooled["pred"] != fooled["label"]).all() and fooled["fooling_bg_id"].notna().all()

    assert main([*common, "--output", str(tmp_path / "again"), *cache]) == 0
    again = json.loads((tmp_path / "again" / "challenge.json").read_text())
    reuse = (again["reused_rows"], again["computed_rows"], again["composites_computed"])
    assert reuse == (12, 0, 0)
    c = pd.read_parquet(tmp_path / "again" / "vulnerable.parquet")
    assert c[verdict].equals(a[verdict])


@pytest.mark.slow  # two processes launched
def test_bad_data_is_the_same_plain_error_on_both_processes(tmp_path):
    import shutil

    from tests.in9_fixture import write_release

    root = write_release(tmp_path / "release", variants=("original", "only_bg_t"))
    shutil.rmtree(root / "bg_challenge" / "fg_mask")
    proc = _launch(
        ["challenge", "tf_efficientnet_lite0", "--data", str(root), "--quiet"], tmp_path, ok=False
    )
    # the main process fails while reading the data first; the other one then reads it too
    # and stops with the same message (not a lost connection to the main process)
    assert proc.stderr.count("bgbench challenge: error: 18 image(s) of 'original' have no") == 2
    assert "Connection closed" not in proc.stderr


# ---------------------------------------------------------------- one process, no launch


def test_one_process_without_a_launcher():
    assert launched_processes() == 1
    procs = processes()
    assert (procs.num, procs.index, procs.is_main) == (1, 0, True)
    assert procs.shard(range(5)) == [0, 1, 2, 3, 4]
    assert procs.together(lambda: "done") == ["done"]
    assert procs.device("cuda:1") == "cuda:1" and procs.device(None) is None


class _TwoProcessState:
    """What Processes reads of accelerate's PartialState, for process ``index`` of 2."""

    num_processes = 2

    def __init__(self, index: int):
        self.process_index = index


@pytest.mark.parametrize("index", [0, 1])
def test_a_failure_on_one_process_is_raised_on_every_process(monkeypatch, index):
    import accelerate.utils

    other = 1 - index
    from_other = (other, "image 7 cannot be read", None)  # what the other process sends
    monkeypatch.setattr(accelerate.utils, "gather_object", lambda mine: sorted([*mine, from_other]))
    procs = Processes(_TwoProcessState(index))
    with pytest.raises(ProcessFailed, match=f"process {other} of 2 failed: image 7 cannot"):
        procs.together(lambda: "my share")

    def fail():
        raise ValueError("bad mask")

    with pytest.raises(ValueError, match="bad mask"):  # the failing process: its own error
        procs.together(fail)


def test_launch_environment_is_read(monkeypatch):
    monkeypatch.setenv("WORLD_SIZE", "3")
    assert launched_processes() == 3
    monkeypatch.setenv("WORLD_SIZE", "1")
    assert launched_processes() == 1


def test_shares_merge_in_process_order():
    def run(ids, computed):
        frame = pd.DataFrame({"id": ids, "label": 0, "pred": 0, "pred_model": 0, "prob_true": 1.0})
        return PredictionRun(frame, [{"id": f"bad{ids[0]}"}], computed=computed, reused=1)

    merged = merge_runs([run(["a", "b"], 2), run(["c"], 1)])
    assert list(merged.predictions["id"]) == ["a", "b", "c"]
    assert (merged.computed, merged.reused, len(merged.skipped)) == (3, 2, 2)

    def out(ids, vulnerable, bg_ids=("x", "y")):
        n = len(ids)
        return {
            "ids": ids,
            "labels": [0] * n,
            "clean_pred": [0] * n,
            "vulnerable": vulnerable,
            "first_bg": [1 if v else -1 for v in vulnerable],
            "first_pred": [3 if v else None for v in vulnerable],
            "composites_per_fg": [1 if v else 2 for v in vulnerable],
            "rows": [],
            "skipped": [],
            "composites": sum(1 if v else 2 for v in vulnerable),
            "composites_computed": n,
            "clean_forwards": n,
            "rows_computed": n,
            "rows_reused": 0,
            "bg_ids": list(bg_ids),
            "bg_labels": np.array([0, 1]),
            "bg_skipped": [],
            "decode_seconds": 0.5,
            "chunks": 1,
        }

    merged = merge_shards([out(["a", "b"], [True, False]), out(["c"], [False])])
    assert merged["ids"] == ["a", "b", "c"] and merged["vulnerable"] == [True, False, False]
    assert (merged["composites"], merged["clean_forwards"]) == (5, 3)
    assert merged["bg_ids"] == ["x", "y"]
    with pytest.raises(RuntimeError, match="different backgrounds"):
        merge_shards([out(["a"], [True]), out(["b"], [True], bg_ids=("x", "z"))])
    memory = merge_memory(
        [{"peak_rss_mb": 10.0, "cuda": None}, {"peak_rss_mb": 12.0, "cuda": None}]
    )
    assert memory == {"peak_rss_mb": 12.0, "cuda": None, "processes": 2}
