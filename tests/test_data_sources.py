"""Every IN-9 data source reads into one schema; bad data gets an error that says what to do."""

from __future__ import annotations

import shutil

import pytest

from hf_bgbench.benchmarks import get_benchmark
from hf_bgbench.benchmarks.in9.release import ReleaseLayoutError, load_release_variant
from hf_bgbench.data.sources import DataSourceError, load_variant, resolve_source
from hf_bgbench.tasks.evaluate import evaluate_model
from tests.in9_fixture import VARIANTS, ColourRuleClassifier

SPEC = get_benchmark("in9")


def test_release_is_detected_from_its_parent_or_itself(in9_release):
    for path in (in9_release, in9_release / "bg_challenge"):
        source = resolve_source(path, SPEC)
        assert source.kind == "release" and source.variants == VARIANTS


def test_release_rows_follow_the_schema(in9_release):
    ds = load_release_variant(in9_release, "mixed_rand", SPEC, with_mask=True)
    assert ds.column_names == ["image", "label", "id", "mask"]
    assert ds.features["label"].names == list(SPEC.classes)
    row = ds[3]
    assert row["id"] == "n00000001_1" and row["label"] == 1
    assert row["image"].size == (224, 224) and row["mask"].size == (224, 224)
    ids = load_release_variant(in9_release, "original", SPEC)["id"]
    assert list(ids) == list(ds["id"])  # ids align across variants


def test_photo_folder_with_metadata_gives_original_only(shared_data):
    source = resolve_source(shared_data / "in9_samples", SPEC)
    assert source.kind == "image-folder" and source.variants == ("original",)
    ds = load_variant(source, "original", SPEC)
    assert len(ds) == 186
    with pytest.raises(DataSourceError, match="only provides 'original'"):
        load_variant(source, "mixed_rand", SPEC)


def test_photo_folder_with_class_subfolders(tmp_path, in9_release):
    src = in9_release / "bg_challenge" / "original" / "val"
    for d in ("00_dog", "08_fish"):
        shutil.copytree(src / d, tmp_path / d.split("_", 1)[1])
    ds = load_variant(tmp_path, "original", SPEC)
    assert sorted(set(ds["label"])) == [0, 8] and len(ds) == 4


def test_wrong_path_is_a_clear_error(tmp_path):
    with pytest.raises(DataSourceError, match="no such folder"):
        resolve_source(tmp_path / "nope" / "deeper" / "x", SPEC)
    (tmp_path / "notes.txt").write_text("hi")
    with pytest.raises(DataSourceError, match="none of the layouts"):
        resolve_source(tmp_path, SPEC)


def test_unknown_and_missing_variants(in9_release, tmp_path):
    with pytest.raises(ValueError, match=r"mixed_random.*did you mean 'mixed_rand'"):
        evaluate_model(ColourRuleClassifier(), data=in9_release, variants=["mixed_random"])
    partial = tmp_path / "partial"
    shutil.copytree(
        in9_release / "bg_challenge" / "original", partial / "bg_challenge" / "original"
    )
    with pytest.raises(ValueError, match=r"does not provide variant\(s\) \['mixed_rand'\]"):
        evaluate_model(ColourRuleClassifier(), data=partial, variants=["mixed_rand"])


def test_release_with_wrong_class_folders(tmp_path, in9_release):
    broken = tmp_path / "broken"
    shutil.copytree(in9_release / "bg_challenge" / "original", broken / "bg_challenge" / "original")
    shutil.rmtree(broken / "bg_challenge" / "original" / "val" / "08_fish")
    with pytest.raises(ReleaseLayoutError, match="has 8 class folder"):
        load_variant(broken, "original", SPEC)


def test_missing_masks_are_named(tmp_path, in9_release):
    broken = tmp_path / "nomask"
    shutil.copytree(in9_release / "bg_challenge" / "only_fg", broken / "bg_challenge" / "only_fg")
    with pytest.raises(ReleaseLayoutError, match="no foreground mask"):
        load_variant(broken, "only_fg", SPEC, with_mask=True)


def test_corrupt_image_is_skipped_counted_and_not_scored(tmp_path, in9_release):
    data = tmp_path / "corrupt"
    shutil.copytree(in9_release / "bg_challenge" / "original", data / "bg_challenge" / "original")
    (data / "bg_challenge" / "original" / "val" / "07_primate" / "n00000007_1.JPEG").write_bytes(
        b"not a jpeg"
    )
    results = evaluate_model(
        ColourRuleClassifier(), data=data, use_cache=False, num_workers=0, progress=False
    )
    r = results["variants"]["original"]
    assert r["skipped"] == 1 and r["skipped_ids"] == ["n00000007_1"]
    # the unreadable image was a wrong one; 16 right out of the 17 scored
    assert r["n"] == 17 and r["accuracy"] == pytest.approx(16 / 17)
    assert r["per_class"]["primate"] == 1.0


def test_unknown_config_in_hub_folder(in9_hub):
    source = resolve_source(in9_hub, SPEC)
    assert source.kind == "hub-folder"
    assert load_variant(source, "only_fg", SPEC, with_mask=True)["mask"][0].size == (224, 224)
    with pytest.raises(ValueError, match="Unknown in9 variant"):
        load_variant(source, "mixed-rand", SPEC)


def test_hub_id_offline_is_a_clear_error():
    with pytest.raises(DataSourceError, match="HF_HUB_OFFLINE"):
        load_variant("bgbench/in9", "original", SPEC)
