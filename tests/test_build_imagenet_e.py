"""`bgbench build imagenet-e`: the CPU edit set of masked images, as a Hub folder."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
from datasets import load_dataset
from PIL import Image

from hf_bgbench.benchmarks import get_benchmark
from hf_bgbench.benchmarks.imagenet_e.edit_set import CPU_EDITS
from hf_bgbench.benchmarks.imagenet_e.fidelity import data_deviations
from hf_bgbench.benchmarks.in9.labels import in9_classes
from hf_bgbench.cli import main
from hf_bgbench.data.hub import card_configs, read_card_metadata
from hf_bgbench.data.sources import resolve_source

COLUMNS = ["image", "label", "id", "mask", "object_pixel_rate", "edit_params"]


@pytest.fixture(scope="module")
def in9_build(in9_release, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("in9_src") / "in9"
    args = ["convert", "in9-release", str(in9_release), str(out)]
    assert main(args) == 0
    return out


@pytest.fixture(scope="module")
def built(in9_build, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("imagenet_e") / "e"
    args = ["build", "imagenet-e", "--from", "in9", str(in9_build), "--output", str(out)]
    assert main([*args, "--workers", "1", "--quiet", "--shard-size", "10"]) == 0
    return out


def _shard_bytes(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*.parquet"))}


def test_every_cpu_edit_loads_with_the_schema(built):
    assert card_configs(built) == list(CPU_EDITS)
    assert read_card_metadata(built)["label_space"] == "in9"
    ids = None
    for edit in CPU_EDITS:
        ds = load_dataset(str(built), edit, split="test")
        assert ds.column_names == COLUMNS and len(ds) == 18
        assert ds.features["label"].names == in9_classes()[0]
        assert ds.features["object_pixel_rate"].dtype == "float32"
        ids = ids or ds["id"]
        assert ds["id"] == ids
        row = ds[0]
        mask = np.asarray(row["mask"]) > 0
        assert row["mask"].mode == "L" and row["image"].size == (256, 256)  # authors' canvas
        assert row["object_pixel_rate"] == pytest.approx(mask.mean(), abs=1e-6)
        params = json.loads(row["edit_params"])
        assert params["edit"] == edit and params["seed"] == 0
        method = "unedited" if edit == "original" else "cpu-inpaint-paste"
        assert {json.loads(p)["edit_method"] for p in ds["edit_params"]} == {method}
        if edit.startswith("size_0"):
            rate = float(edit.split("_")[1])
            assert all(abs(r - rate) <= 0.015 for r in ds["object_pixel_rate"])
            assert all(json.loads(p)["within_tolerance"] for p in ds["edit_params"])
        if edit == "size_full":
            for m in ds["mask"]:
                m = np.asarray(m) > 0
                assert (m[0].any() and m[-1].any()) or (m[:, 0].any() and m[:, -1].any())
        if edit in ("bg_random", "bg_simpler", "bg_complex"):
            assert all(
                json.loads(p)["background_id"] not in ("", i)
                for p, i in zip(ds["edit_params"], ds["id"], strict=True)
            )
            assert {"L_c", "glcm_contrast", "glcm_dissimilarity", "complexity_bin"} <= params.keys()
        if edit == "bg_simpler":
            assert {json.loads(p)["complexity_bin"] for p in ds["edit_params"]} == {0}
        if edit == "bg_texture":
            assert params["texture"] in ("checker", "stripes", "noise")
        if edit == "position":
            assert all(abs(r - 0.05) <= 0.015 for r in ds["object_pixel_rate"])
            assert {json.loads(p)["from"]["edit"] for p in ds["edit_params"]} == {"size_0.05"}
        if edit == "rotation":
            angles = [json.loads(p)["angle"] for p in ds["edit_params"]]
            assert all(a == int(a) and -45 <= a <= 45 for a in angles)
    report = json.loads((built / "build_report.json").read_text())
    assert report["kept"] == 18 and not any(report["dropped"].values())


def test_the_card_records_the_edit_method_and_says_not_comparable(built):
    meta = read_card_metadata(built)["bgbench_build"]
    assert meta["kind"] == "cpu" and meta["comparable_to_published"] is False
    assert meta["canvas"] == [256, 256] and meta["fit"] == "resize"
    assert meta["edit_method"]["original"] == "unedited"
    assert {meta["edit_method"][e] for e in CPU_EDITS if e != "original"} == {"cpu-inpaint-paste"}
    text = (built / "README.md").read_text()
    assert "Not comparable to the published ImageNet-E table" in text
    assert "| `size_0.05` | 18 | `cpu-inpaint-paste` |" in text


def test_data_deviations_of_a_cpu_build(built):
    spec = get_benchmark("imagenet-e")
    found = data_deviations(spec, resolve_source(built, spec))
    first = found[0]
    assert first.startswith("the edits of this build were made on a CPU by inpainting and pasting")
    assert "size_0.05=cpu-inpaint-paste" in first and "original=unedited" in first
    assert first.endswith("not comparable to the published ImageNet-E table")
    text = " | ".join(found)
    assert "bg_simpler of this build uses another image's inpainted background" in text
    assert "bg_texture is not a paper edit" in text
    assert "size_full of this build zooms the object with one factor" in text
    assert "bg_complex_adv" in text and "no bg_inversion (λ = 0 inversion) control" in text
    assert "seed(s) 0" in text and "means over 5 runs" in text
    assert "not the authors' 256 x 256" not in text  # built on the authors' canvas


def test_byte_identical_whatever_the_workers_and_resumable(in9_build, built, tmp_path):
    out = tmp_path / "e2"
    args = ["build", "imagenet-e", "--from", "in9", str(in9_build), "--output", str(out)]
    assert main([*args, "--workers", "2", "--quiet", "--shard-size", "10"]) == 0
    assert _shard_bytes(out) == _shard_bytes(built)
    shard = next((out / "data" / "rotation").glob("*.parquet"))
    shard.unlink()
    assert main([*args, "--workers", "1", "--quiet", "--shard-size", "10"]) == 0
    assert _shard_bytes(out) == _shard_bytes(built)
    assert main([*args, "--quiet", "--shard-size", "10", "--seed", "1"]) == 2  # other options


def test_photo_folders_with_masks_use_imagenet_labels(tmp_path):
    images, masks = tmp_path / "images" / "n01440764", tmp_path / "masks"
    images.mkdir(parents=True)
    masks.mkdir()
    for k in range(3):
        photo = np.full((200, 300, 3), 30 + 60 * k, np.uint8)
        photo[60:140, 100:200] = (200, 30, 30)
        mask = np.zeros((200, 300), np.uint8)
        mask[60:140, 100:200] = 255
        Image.fromarray(photo).save(images / f"n01440764_{k}.JPEG")
        Image.fromarray(mask).save(masks / f"n01440764_{k}.png")
    Image.fromarray(np.zeros((8, 8, 3), np.uint8)).save(images / "n01440764_9.JPEG")  # no mask
    out = tmp_path / "out"
    args = ["build", "imagenet-e", "--images", str(images.parent), "--masks", str(masks)]
    assert main([*args, "--output", str(out), "--workers", "1", "--quiet"]) == 0
    ds = load_dataset(str(out), "size_0.05", split="test")
    assert len(ds) == 3 and set(ds["label"]) == {0} and len(ds.features["label"].names) == 1000
    report = json.loads((out / "build_report.json").read_text())
    assert report["skipped"] == {"no_mask": 1} and report["label_space"] == "imagenet-1k"
    image = Image.open(io.BytesIO(ds.data.column("image")[0].as_py()["bytes"]))
    assert image.size == (256, 256)  # the whole 300 x 200 photo resized to the authors' canvas
    mask = np.asarray(load_dataset(str(out), "original", split="test")[0]["mask"]) > 0
    ys, xs = np.nonzero(mask)  # the box 100..200 x 60..140 of 300 x 200, scaled by 256/300
    # and 256/200 (a centre crop would put it at x 64..192)
    assert abs(xs.min() - 85.3) <= 1 and abs(xs.max() + 1 - 170.7) <= 1
    assert abs(ys.min() - 76.8) <= 1 and abs(ys.max() + 1 - 179.2) <= 1
    # read from the rows' edit_params (ImageNet-1k labels: the reader serves them)
    spec = get_benchmark("imagenet-e")
    found = data_deviations(spec, resolve_source(out, spec))
    assert found[0].startswith("the edits of this build were made on a CPU by inpainting")
    assert "rotation=cpu-inpaint-paste" in found[0]


def test_clear_errors(tmp_path, capsys):
    assert (
        main(
            ["build", "imagenet-e", "--from", "in9", str(tmp_path), "--output", str(tmp_path / "o")]
        )
        == 2
    )
    assert "data/original/test-*.parquet" in capsys.readouterr().err
    assert main(["build", "imagenet-e", "--output", str(tmp_path / "o")]) == 2
    assert "--images DIR and --masks DIR" in capsys.readouterr().err


def test_size_edits_scale_the_whole_photo_by_default(built):
    """The default --size-method whole (the authors' resize_obj.py) is recorded in every
    size and position row, and in the build's parameters; the card still says the build is
    not the published ImageNet-E."""
    for edit in ("size_full", "size_0.1", "size_0.05"):
        for text in load_dataset(str(built), edit, split="test")["edit_params"]:
            params = json.loads(text)
            assert params["size_method"] == "whole" and params["frame"] == "background"
            assert params["edit_method"] == "cpu-inpaint-paste"
    for text in load_dataset(str(built), "position", split="test")["edit_params"]:
        params = json.loads(text)
        assert params["from"]["size_method"] == "whole" and params["inpaint"] == "telea"
    for text in load_dataset(str(built), "bg_simpler", split="test")["edit_params"]:
        assert json.loads(text)["blend"] == "alpha"  # the authors' hard composite
    report = json.loads((built / "build_report.json").read_text())
    assert report["parameters"]["size_method"] == "whole"
    assert report["parameters"]["blend"] == "alpha"
    assert read_card_metadata(built)["bgbench_build"]["comparable_to_published"] is False


def test_size_method_object_keeps_the_earlier_recipe(in9_build, tmp_path, capsys):
    out = tmp_path / "e"
    args = ["build", "imagenet-e", "--from", "in9", str(in9_build), "--output", str(out)]
    extra = ["--workers", "1", "--quiet", "--edits", "original,size_0.05", "--blend", "poisson"]
    extra.append("--size-method")
    assert main([*args, *extra, "object"]) == 0
    for text in load_dataset(str(out), "size_0.05", split="test")["edit_params"]:
        params = json.loads(text)
        assert params["size_method"] == "object" and params["blend"] == "poisson"
    with pytest.raises(SystemExit):
        main([*args, *extra, "magic"])
    assert "--size-method" in capsys.readouterr().err
