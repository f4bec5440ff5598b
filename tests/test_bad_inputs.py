"""Bad inputs to the CLI: each gets one clear message (no traceback) or a counted, recorded
result -- never a silently wrong number. Table-driven: add a row for every fix.

Each case builds its input in a temporary folder, runs ``bgbench`` and checks the exit code
and what the user reads. The metric modules' bad inputs are in test_metric_modules.py.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import datasets
import numpy as np
import pyarrow.parquet as pq
import pytest
import yaml

from hf_bgbench.cli import main
from tests.in9_fixture import VARIANTS, write_release

TESTED = ["original", "mixed_same", "mixed_rand"]


def _hub_folder(tmp: Path) -> Path:
    from tests.test_evaluate_in9 import _hub_layout_from_release

    return _hub_layout_from_release(write_release(tmp / "release"), tmp / "hub")


def _drop_a_mixed_rand_row(tmp: Path) -> Path:
    hub = _hub_folder(tmp)
    shard = next((hub / "data" / "mixed_rand").glob("*.parquet"))
    table = pq.read_table(shard)
    pq.write_table(table.slice(1), shard)  # one image fewer than the other variants
    return hub


def _missing_variant_files(tmp: Path) -> Path:
    hub = _hub_folder(tmp)
    shutil.rmtree(hub / "data" / "mixed_rand")
    return hub


def _card_split_sizes_disagree(tmp: Path) -> Path:
    hub = _drop_a_mixed_rand_row(tmp)
    readme = hub / "README.md"
    _, front, body = readme.read_text().split("---", 2)
    meta = yaml.safe_load(front)
    features = datasets.load_dataset(str(hub), "original", split="test").features
    meta["dataset_info"] = [
        {
            "config_name": v,
            "features": features._to_yaml_list(),
            "splits": [{"name": "test", "num_examples": 18}],
        }
        for v in VARIANTS
    ]
    readme.write_text("---\n" + yaml.safe_dump(meta, sort_keys=False) + "---" + body)
    return hub


def _small_mask(tmp: Path) -> Path:
    root = write_release(tmp / "release", variants=("original", "only_bg_t"))
    mask = next((root / "bg_challenge" / "fg_mask" / "val").rglob("*.npy"))
    np.save(mask, np.ones((100, 100), np.uint8))
    return root


def _release(tmp: Path) -> Path:
    return write_release(tmp / "release", variants=("original", "only_bg_t"))


def _unwritable_output(tmp: Path) -> Path:
    blocker = tmp / "a_file"
    blocker.write_text("not a folder")
    return blocker / "out"


def _output_in_use(tmp: Path) -> Path:
    """A release, and the output folder held by a live run (this test process)."""
    import json
    import os
    import socket

    from hf_bgbench.files import LOCK_NAME

    (tmp / "out").mkdir()
    holder = {"pid": os.getpid(), "host": socket.gethostname(), "started": "now"}
    (tmp / "out" / LOCK_NAME).write_text(json.dumps(holder))
    return _release(tmp)


CASES = [
    # (id, input builder -> data folder, argv with {data}/{out}, exit code, expected text)
    (
        "two-runs-into-one-output",
        _output_in_use,
        ["evaluate", "tf_efficientnet_lite0", "--data", "{data}", "--variants", "original"],
        2,
        "is writing to --output",
    ),
    (
        "mismatched-ids",
        _drop_a_mixed_rand_row,
        ["evaluate", "tf_efficientnet_lite0", "--data", "{data}", "--variants", *TESTED],
        2,
        "--allow-mismatched-ids",
    ),
    (
        "variant-files-missing",
        _missing_variant_files,
        ["evaluate", "tf_efficientnet_lite0", "--data", "{data}", "--variants", *TESTED],
        2,
        "mixed_rand",
    ),
    (
        "split-sizes-disagree-with-card",
        _card_split_sizes_disagree,
        ["evaluate", "tf_efficientnet_lite0", "--data", "{data}", "--variants", *TESTED],
        2,
        "split sizes its README.md declares",
    ),
    (
        "mask-of-another-size",
        _small_mask,
        ["challenge", "tf_efficientnet_lite0", "--data", "{data}", "--max-backgrounds", "2"],
        2,
        "but its mask is 100x100",
    ),
    (
        "no-data-offline",
        None,
        ["evaluate", "tf_efficientnet_lite0"],
        2,
        "No --data given, so the Hub dataset bgbench/in9 was tried",
    ),
    (
        "unwritable-output",
        _release,
        ["evaluate", "tf_efficientnet_lite0", "--data", "{data}", "--output", "{unwritable}"],
        2,
        "--output",
    ),
    (
        "task-not-in-benchmark",
        _release,
        ["challenge", "tf_efficientnet_lite0", "--benchmark", "rival10", "--data", "{data}"],
        2,
        "does not apply to benchmark 'rival10'",
    ),
]


def _imagenet_e_release(tmp: Path) -> Path:
    from tests.test_imagenet_e import _write_flat_release

    return _write_flat_release(tmp / "release")


def _imagenet_e_bad_labels_line(tmp: Path) -> Path:
    src = _imagenet_e_release(tmp)
    (src / "ImageNet-E" / "labels.txt").write_text("n0_0.JPEG\t0\nn0_1.JPEG 1200\n")
    return src


def _imagenet_e_without_labels(tmp: Path) -> Path:
    src = _imagenet_e_release(tmp)
    (src / "ImageNet-E" / "labels.txt").unlink()
    return src


def _photo_and_mask(tmp: Path) -> Path:
    from PIL import Image

    Image.new("RGB", (64, 64), (200, 30, 30)).save(tmp / "a.png")
    mask = np.zeros((64, 64), np.uint8)
    mask[16:48, 16:48] = 255
    Image.fromarray(mask).save(tmp / "a_mask.png")
    return tmp


# Commands whose arguments are given whole ({data}: the built input, {out}: a fresh folder).
WHOLE_ARGV_CASES = [
    (
        "imagenet-e-labels-line-malformed",
        _imagenet_e_bad_labels_line,
        ["convert", "imagenet-e", "{data}", "{out}", "--quiet"],
        2,
        "labels.txt, line 2",
    ),
    (
        "imagenet-e-flat-without-labels",
        _imagenet_e_without_labels,
        ["convert", "imagenet-e", "{data}", "{out}", "--quiet"],
        2,
        "no labels.txt next to it",
    ),
    (
        "diffusion-edit-without-a-model",
        _photo_and_mask,
        ["edit", "guided", "--image", "{data}/a.png", "--mask", "{data}/a_mask.png"]
        + ["--output", "{out}/o.png"],
        2,
        "--diffusion-model",
    ),
    (  # --batch-size has a device-dependent default now; 0 is still refused up front
        "challenge-batch-size-zero",
        _photo_and_mask,
        ["challenge", "--data", "{data}", "--output", "{out}", "--batch-size", "0"],
        2,
        "--batch-size: must be 1 or more, got 0",
    ),
    (
        "evaluate-batch-size-zero",
        _photo_and_mask,
        ["evaluate", "--data", "{data}", "--output", "{out}", "--batch-size", "0"],
        2,
        "--batch-size: must be 1 or more, got 0",
    ),
    *(
        (
            f"{task}-batch-size-zero",
            _photo_and_mask,
            [task, "--data", "{data}", "--output", "{out}", "--batch-size", "0"],
            2,
            "--batch-size: must be 1 or more, got 0",
        )
        for task in ("noise", "saliency")
    ),
    (
        "graying-grey-level-out-of-range",
        _photo_and_mask,
        ["graying", "--data", "{data}", "--output", "{out}", "--gray", "1.5"],
        2,
        "the grey level is a pixel value in [0, 1]",
    ),
    (
        "unknown-protocol-name",
        _photo_and_mask,
        ["noise", "--data", "{data}", "--output", "{out}", "--protocol", "rival10-papr"],
        2,
        "--protocol 'rival10-papr'",
    ),
]


def _exit_code(argv: list[str]) -> int:
    """``main``'s return code, or the code of the ``SystemExit`` argparse raises on a bad flag."""
    try:
        return main(argv)
    except SystemExit as stop:
        return int(stop.code)


@pytest.mark.parametrize(
    "builder, argv, code, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_bad_input_gets_a_clear_message(builder, argv, code, expected, tmp_path, capsys):
    data = builder(tmp_path) if builder else None
    fill = {
        "{data}": str(data),
        "{out}": str(tmp_path / "out"),
        "{unwritable}": str(_unwritable_output(tmp_path)),
    }
    argv = [fill.get(a, a) for a in argv]
    if "--output" not in argv:
        argv += ["--output", str(tmp_path / "out")]
    assert main([*argv, "--quiet", "--workers", "0"]) == code
    err = capsys.readouterr().err
    assert expected in err
    assert "Traceback" not in err and "DataLoader worker" not in err


@pytest.mark.parametrize(
    "builder, argv, code, expected",
    [c[1:] for c in WHOLE_ARGV_CASES],
    ids=[c[0] for c in WHOLE_ARGV_CASES],
)
def test_bad_input_to_other_commands_gets_a_clear_message(
    builder, argv, code, expected, tmp_path, capsys
):
    data = builder(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    argv = [a.replace("{data}", str(data)).replace("{out}", str(out)) for a in argv]
    assert _exit_code(argv) == code
    err = capsys.readouterr().err
    assert expected in err
    assert "Traceback" not in err


def test_mismatched_ids_allowed_are_scored_on_shared_ids_and_recorded(tmp_path):
    hub = _drop_a_mixed_rand_row(tmp_path)
    out = tmp_path / "out"
    argv = ["evaluate", "tf_efficientnet_lite0", "--data", str(hub), "--variants", *TESTED]
    assert main([*argv, "--allow-mismatched-ids", "--output", str(out), "--quiet"]) == 0
    results = json.loads((out / "results.json").read_text())
    assert results["mismatched_ids"] == {
        "shared": 17,
        "dropped": {"original": 1, "mixed_same": 1},
    }
    assert {r["n"] for r in results["variants"].values()} == {17}


def test_reused_output_folder_keeps_no_stale_files(tmp_path):
    release = write_release(tmp_path / "release")
    out = tmp_path / "out"
    base = ["evaluate", "tf_efficientnet_lite0", "--data", str(release), "--output", str(out)]
    assert main([*base, "--variants", "original", "only_fg", "--quiet"]) == 0
    assert (out / "predictions" / "only_fg.parquet").is_file()
    assert main([*base, "--variants", "original", "--quiet"]) == 0
    assert sorted(p.name for p in (out / "predictions").iterdir()) == ["original.parquet"]
    assert not [p for p in out.iterdir() if p.name.startswith(".bgbench-")]


def test_ctrl_c_says_what_is_cached_and_exits_130(tmp_path, monkeypatch, capsys):
    from hf_bgbench.inference import engine

    release = write_release(tmp_path / "release", variants=("original", "only_bg_t"))
    real = engine.prediction_rows
    calls = {"n": 0}

    def interrupt_on_second_batch(step, batch):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real(step, batch)

    monkeypatch.setattr(engine, "prediction_rows", interrupt_on_second_batch)
    argv = ["evaluate", "tf_efficientnet_lite0", "--data", str(release), "--batch-size", "4"]
    code = main([*argv, "--output", str(tmp_path / "out"), "--quiet", "--workers", "0"])
    err = capsys.readouterr().err
    assert code == 130
    assert "interrupted; 4 image(s) cached, re-run the same command to resume" in err
    assert "Traceback" not in err


def test_two_folders_with_the_same_name_never_share_rows(tmp_path):
    """datasets 5.2 caches a local folder by its name: the second "hub" folder would load the
    first one's 17 rows. Each folder must give its own."""
    from hf_bgbench.benchmarks import get_benchmark
    from hf_bgbench.data.sources import load_variant

    spec = get_benchmark("in9")
    short = _drop_a_mixed_rand_row(tmp_path / "a")
    full = _hub_folder(tmp_path / "b")
    assert short.name == full.name == "hub"
    assert len(load_variant(short, "mixed_rand", spec)) == 17
    assert len(load_variant(full, "mixed_rand", spec)) == 18


def test_rival10_is_never_published_publicly(tmp_path, capsys):
    from tests.rival10_fixture import write_rival10_hub

    hub = write_rival10_hub(tmp_path / "rival10")
    argv = ["publish", str(hub), "--repo-id", "someone/rival10", "--dry-run"]
    assert main(argv) == 2
    assert "licence forbids redistribution" in capsys.readouterr().err
    assert main([*argv, "--private"]) == 0


def test_a_dead_runs_output_lock_is_taken_over_and_released(tmp_path):
    """A lock left by a run that died (its pid gone) does not block the folder; a run
    releases its lock when it ends, even on an error."""
    import json
    import socket

    from hf_bgbench.files import LOCK_NAME, OutputFolderBusy, output_lock

    # above Linux's largest pid (2**22), so no process has it
    dead = {"pid": 2**22 + 12345, "host": socket.gethostname(), "started": "then"}
    (tmp_path / LOCK_NAME).write_text(json.dumps(dead))
    with output_lock(tmp_path) as lock:
        assert json.loads(lock.read_text())["pid"] != dead["pid"]
        with pytest.raises(OutputFolderBusy, match="Wait for it to finish"):
            with output_lock(tmp_path):
                pass
    assert not (tmp_path / LOCK_NAME).exists()
    with pytest.raises(RuntimeError), output_lock(tmp_path):
        raise RuntimeError("the run failed")
    assert not (tmp_path / LOCK_NAME).exists()
