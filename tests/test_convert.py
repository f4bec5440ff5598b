"""`bgbench convert in9-release`: the official release layout -> the Hub layout."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from datasets import load_dataset
from PIL import Image

from hf_bgbench.benchmarks import get_benchmark
from hf_bgbench.benchmarks.in9.convert import convert_in9_release
from hf_bgbench.benchmarks.in9.labels import in9_classes
from hf_bgbench.benchmarks.in9.release import ReleaseLayoutError
from hf_bgbench.benchmarks.in9.spec import IN9_VARIANTS
from hf_bgbench.cli import main
from hf_bgbench.cli.validate import validate
from hf_bgbench.data.hub import card_configs

IN9 = get_benchmark("in9")


@pytest.fixture(scope="module")
def converted(in9_release, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("converted") / "in9"
    assert main(["convert", "in9-release", str(in9_release), str(out)]) == 0
    return out


def test_every_variant_loads_with_names_and_identical_ids(converted):
    assert card_configs(converted) == list(IN9_VARIANTS)
    ids = None
    for variant in IN9_VARIANTS:
        ds = load_dataset(str(converted), variant, split="test")
        assert ds.features["label"].names == in9_classes()[0]
        assert len(ds) == 18
        ids = ids or ds["id"]
        assert ds["id"] == ids
        assert ds[0]["mask"].mode == "L" and ds[0]["mask"].size == ds[0]["image"].size
    assert validate(converted).ok


def test_image_bytes_unchanged_and_masks_carried(in9_release, converted):
    root = in9_release / "bg_challenge" if (in9_release / "bg_challenge").is_dir() else in9_release
    for variant in ("original", "mixed_rand"):
        (shard,) = (converted / "data" / variant).glob("test-*.parquet")
        table = pq.read_table(shard).to_pydict()
        for image, label, image_id, mask in zip(
            table["image"], table["label"], table["id"], table["mask"], strict=True
        ):
            class_dir = sorted(p.name for p in (root / variant / "val").iterdir())[label]
            source = root / variant / "val" / class_dir / f"{image_id}.JPEG"
            assert image["bytes"] == source.read_bytes()
            npy = np.load(root / "fg_mask" / "val" / class_dir / f"{image_id}.npy")
            png = np.asarray(Image.open(io.BytesIO(mask["bytes"])))
            np.testing.assert_array_equal(png, (npy > 0).astype(np.uint8) * 255)


def test_card_says_where_the_data_came_from(converted):
    card = (converted / "README.md").read_text()
    assert "official Backgrounds Challenge release" in card and "xiao2021noise" in card


def test_the_release_names_no_background_and_the_card_says_so(converted):
    """The release files each mixed image under its foreground's id and lists no background
    used: the converted variants carry no ``bg_id`` / ``bg_label``, and the card says why."""
    for variant in ("mixed_same", "mixed_rand", "mixed_next"):
        (shard,) = (converted / "data" / variant).glob("test-*.parquet")
        columns = pq.read_schema(shard).names
        assert "bg_id" not in columns and "bg_label" not in columns, variant
    card = " ".join((converted / "README.md").read_text().split())
    assert "does not say which photo's background each mixed image shows" in card
    assert "`bgbench build in9` records them" in card


def _copy(release: Path, tmp_path: Path) -> Path:
    target = tmp_path / "copy"
    shutil.copytree(release, target)
    return target / "bg_challenge" if (target / "bg_challenge").is_dir() else target


def test_not_a_release_is_a_clear_error(tmp_path, capsys):
    (tmp_path / "photos").mkdir()
    assert main(["convert", "in9-release", str(tmp_path / "photos"), str(tmp_path / "o")]) == 2
    assert "bg_challenge/<variant>/val/<class-dir>/<image>.JPEG" in capsys.readouterr().err


def test_missing_parts_are_named(in9_release, tmp_path):
    root = _copy(in9_release, tmp_path)
    shutil.rmtree(root / "fg_mask")
    shutil.rmtree(root / "mixed_next")
    with pytest.raises(ReleaseLayoutError, match=r"mixed_next/val/, fg_mask/val/"):
        convert_in9_release(root, tmp_path / "out", IN9)


def test_mismatched_variants_are_named(in9_release, tmp_path):
    root = _copy(in9_release, tmp_path)
    victim = sorted((root / "only_fg" / "val").rglob("*.JPEG"))[0]
    victim.rename(victim.with_name("renamed.JPEG"))
    with pytest.raises(ReleaseLayoutError, match="only_fg"):
        convert_in9_release(root, tmp_path / "out", IN9)


def test_existing_output_needs_overwrite(in9_release, converted, tmp_path):
    with pytest.raises(FileExistsError, match="--overwrite"):
        convert_in9_release(in9_release, converted, IN9)
