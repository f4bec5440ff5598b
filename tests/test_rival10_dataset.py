"""RIVAL10 as a Hub dataset: `bgbench convert rival10`, the release reader, `bgbench validate`.

Everything runs on tests/rival10_fixture.py, a tiny tree in the official release format
whose expected rows are known exactly (fixture_items).
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
from pathlib import Path

import datasets
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hf_bgbench.benchmarks import get_benchmark
from hf_bgbench.benchmarks.rival10 import convert as converter
from hf_bgbench.benchmarks.rival10.convert import ConvertError, convert_rival10_release
from hf_bgbench.benchmarks.rival10.items import RIVAL10_COLUMNS, UnsafePickleError, load_attr_dict
from hf_bgbench.benchmarks.rival10.labels import rival10_attributes, rival10_classes
from hf_bgbench.benchmarks.rival10.release import Rival10LayoutError, Rival10Release
from hf_bgbench.cli import main
from hf_bgbench.cli.validate import validate
from hf_bgbench.data.hub import read_card_metadata
from hf_bgbench.data.sources import resolve_source
from tests.rival10_fixture import fixture_items, write_rival10_release

SPEC = get_benchmark("rival10")
EXTRA = [c for c in RIVAL10_COLUMNS if c not in ("image", "label", "id")]


@pytest.fixture(scope="module")
def converted(rival10_hub) -> Path:
    return rival10_hub  # shared, read only (tests/conftest.py)


@pytest.fixture(scope="module")
def release(converted) -> Path:
    return converted.parent / "release" / "RIVAL10"


def _copy(src: Path, tmp_path: Path) -> Path:
    dst = tmp_path / src.name
    shutil.copytree(src, dst)
    return dst


def _bits(image) -> np.ndarray:
    arr = np.asarray(image)
    assert image.mode == "L" and set(np.unique(arr).tolist()) <= {0, 255}
    return arr > 0


def _named(flags: np.ndarray) -> dict[str, bool]:
    return dict(zip(rival10_attributes(), flags.tolist(), strict=True))


def _files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def test_every_mask_and_attribute_kept_exactly(converted, release):
    for split in ("train", "test"):
        ds = datasets.load_dataset(str(converted), split=split)  # the default config
        assert ds.features["label"].names == rival10_classes()
        assert list(ds.features["attributes"]) == rival10_attributes()
        assert list(ds.features["changed_attributes"]) == rival10_attributes()
        expected = sorted(
            (it for it in fixture_items() if it.split == split), key=lambda it: (it.label, it.stem)
        )
        assert ds["id"] == [it.stem for it in expected]
        for row, it in zip(ds, expected, strict=True):
            image_file = release / split / "ordinary" / f"{it.stem}.JPEG"
            assert row["image"].size == it.size
            assert row["label"] == it.label and row["imagenet_wnid"] == it.wnid
            assert row["attributes"] == _named(it.present)
            assert row["changed_attributes"] == _named(it.changed)
            np.testing.assert_array_equal(_bits(row["object_mask"]), it.object_mask)
            np.testing.assert_array_equal(_bits(row["merged_mask"]), it.merged_mask)
            assert [m["attribute"] for m in row["attribute_masks"]] == list(it.attribute_masks)
            for entry in row["attribute_masks"]:
                np.testing.assert_array_equal(
                    _bits(entry["mask"]), it.attribute_masks[entry["attribute"]]
                )
        raw = pq.read_table(next((converted / "data" / "ordinary").glob(f"{split}-*")))
        sources = {it.stem: (release / split / "ordinary" / f"{it.stem}.JPEG") for it in expected}
        for image, image_id in zip(raw["image"].to_pylist(), raw["id"].to_pylist(), strict=True):
            assert image["bytes"] == sources[image_id].read_bytes()  # JPEG bytes unchanged
    assert image_file.is_file()


def test_card_report_and_layout(converted):
    meta = read_card_metadata(converted)
    (config,) = meta["configs"]
    assert config["config_name"] == "ordinary" and config["default"] is True
    assert {f["split"] for f in config["data_files"]} == {"train", "test"}
    (info,) = meta["dataset_info"]
    assert {s["name"]: s["num_examples"] for s in info["splits"]} == {"train": 20, "test": 20}
    assert [f["name"] for f in info["features"]] == list(RIVAL10_COLUMNS)
    assert meta["license"] == "other" and "non-commercial" in meta["extra_gated_prompt"]
    card = (converted / "README.md").read_text()
    for text in ("private or gated", "forbids redistribution", "any channel is non-zero"):
        assert text in card
    assert "| 0 | truck | 2 |" in card and "@inproceedings{moayeri2022" in card
    report = json.loads((converted / "build_report.json").read_text())
    test = report["splits"]["test"]
    assert test["kept"] == 20 and test["skipped"] == {}
    assert test["notes"]["masks_of_absent"] == 1 and test["notes"]["present_without_mask"] == 1
    assert report["splits"]["train"]["notes"]["resized"] == 1
    assert not (converted / ".bgbench-work").exists()
    assert validate(converted).ok


def test_unpickler_refuses_code(release, tmp_path):
    class Exploit:
        def __reduce__(self):
            return (os.system, (f"touch {tmp_path / 'pwned'}",))

    copy = _copy(release, tmp_path)
    pkl = next((copy / "test" / "ordinary").glob("*_attr_dict.pkl"))
    pkl.write_bytes(pickle.dumps({"entire-object": Exploit()}))
    with pytest.raises(UnsafePickleError, match=str(pkl)):
        load_attr_dict(pkl)
    code = main(["convert", "rival10", str(copy), str(tmp_path / "out"), "--quiet"])
    assert code == 2 and not (tmp_path / "pwned").exists()
    assert not list((tmp_path / "out").glob("README.md"))


def test_rerun_is_byte_identical_whatever_the_workers(converted, release, tmp_path):
    again = tmp_path / "again"
    assert main(["convert", "rival10", str(release.parent), str(again), "--workers", "2",
                 "--quiet"]) == 0  # fmt: skip
    assert _files(again) == _files(converted)


def test_resume_after_an_interruption(release, tmp_path, monkeypatch):
    reference = tmp_path / "reference"
    convert_rival10_release(release, reference, shard_size=7, progress=False, spec=SPEC)
    out = tmp_path / "out"
    real_write = converter.write_shard
    calls = []

    def interrupted(*args, **kwargs):
        if len(calls) == 2:
            raise KeyboardInterrupt
        calls.append(args[3])
        real_write(*args, **kwargs)

    monkeypatch.setattr(converter, "write_shard", interrupted)
    with pytest.raises(KeyboardInterrupt):
        convert_rival10_release(release, out, shard_size=7, progress=False, spec=SPEC)
    done = sorted((out / "data" / "ordinary").glob("*.parquet"))
    assert len(done) == 2 and not (out / "README.md").exists()
    stamps = {p: p.stat().st_mtime_ns for p in done}
    monkeypatch.setattr(converter, "write_shard", real_write)
    rewritten = []
    monkeypatch.setattr(
        converter,
        "write_shard",
        lambda *a, **k: (rewritten.append((a[2], a[3])), real_write(*a, **k)),
    )
    convert_rival10_release(release, out, shard_size=7, progress=False, spec=SPEC)
    assert all(p.stat().st_mtime_ns == t for p, t in stamps.items())
    assert len(rewritten) == 4  # 6 shards, 2 already there
    assert _files(out) == _files(reference)


def test_broken_items_are_skipped_and_reported(release, tmp_path):
    copy = _copy(release, tmp_path)
    folder = copy / "test" / "ordinary"
    stems = sorted(p.stem for p in folder.glob("n*_????.JPEG") if "_merged" not in p.stem)
    (folder / f"{stems[0]}_attr_labels.npy").unlink()
    (folder / f"{stems[1]}_attr_dict.pkl").write_bytes(b"not a pickle")
    for p in folder.glob(f"{stems[2]}*"):  # a wnid outside RIVAL10 (tench)
        p.rename(p.with_name(p.name.replace(stems[2], "n01440764_1")))
    out = tmp_path / "out"
    report = convert_rival10_release(copy, out, progress=False, spec=SPEC)
    test = report["splits"]["test"]
    assert test["kept"] == 17 and test["found"] == 20
    assert test["skipped"] == {"missing_files": 1, "outside_label_space": 1, "unreadable": 1}
    assert any(stems[1] in m and "not a readable pickle" in m
               for m in test["skipped_items"]["unreadable"])  # fmt: skip
    assert str(tmp_path) not in json.dumps(report)  # paths inside RIVAL10/, not the machine's
    card = (out / "README.md").read_text()
    assert "Skipped images" in card and f"{stems[0]}.JPEG" in card
    assert validate(out).ok


def test_wrong_layouts_fail_clearly(release, in9_release, tmp_path):
    for bad in (in9_release, tmp_path):
        with pytest.raises(Rival10LayoutError, match="not the RIVAL10 release"):
            convert_rival10_release(bad, tmp_path / "out", progress=False, spec=SPEC)
        assert Rival10Release.detect(str(bad), SPEC) is None
    copy = _copy(release, tmp_path)
    shutil.rmtree(copy / "test")
    with pytest.raises(Rival10LayoutError, match="incomplete: no test/ordinary/"):
        convert_rival10_release(copy, tmp_path / "out", progress=False, spec=SPEC)
    in9_out = tmp_path / "in9"
    assert main(["convert", "in9-release", str(in9_release), str(in9_out)]) == 0
    with pytest.raises(ConvertError, match="--overwrite"):
        convert_rival10_release(release, in9_out, progress=False, spec=SPEC)
    convert_rival10_release(release, in9_out, progress=False, overwrite=True, spec=SPEC)
    assert validate(in9_out).benchmark == "rival10"


def _tamper(folder: Path, tmp_path: Path, edit) -> Path:
    copy = _copy(folder, tmp_path)
    shard = next((copy / "data" / "ordinary").glob("test-*.parquet"))
    table = pq.read_table(shard)
    rows = table.to_pylist()
    schema = edit(rows, table.schema) or table.schema
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), shard)
    return copy


def test_validate_rejects_tampered_folders(converted, tmp_path):
    def absent_mask(rows, _):
        row = rows[0]
        absent = next(a for a, on in row["attributes"].items() if not on)
        row["attribute_masks"].append({"attribute": absent, "mask": row["object_mask"]})

    def small_mask(rows, _):
        rows[1]["object_mask"] = rows[1]["attribute_masks"][0]["mask"] = {
            "bytes": _png(np.ones((4, 4), bool)),
            "path": None,
        }

    def renamed(rows, schema):
        attrs = pa.struct([pa.field(a.upper(), pa.bool_()) for a in rival10_attributes()])
        i = schema.get_field_index("attributes")
        for row in rows:
            row["attributes"] = {a.upper(): v for a, v in row["attributes"].items()}
        return schema.set(i, pa.field("attributes", attrs)).remove_metadata()

    def duplicate_id(rows, _):
        rows[2]["id"] = rows[3]["id"]

    cases = {
        absent_mask: "attribute mask for an attribute marked absent",
        small_mask: "differ in size from their image",
        renamed: "not a struct of the 18 RIVAL10 attributes",
        duplicate_id: "occur twice",
    }
    for n, (edit, problem) in enumerate(cases.items()):
        result = validate(_tamper(converted, tmp_path / str(n), edit))
        assert not result.ok and any(problem in p for p in result.problems), result.problems
    no_test = _copy(converted, tmp_path / "split")
    for shard in (no_test / "data" / "ordinary").glob("test-*"):
        shard.unlink()
    card = no_test / "README.md"
    card.write_text(
        card.read_text().replace("  - split: test\n    path: data/ordinary/test-*.parquet\n", "")
    )
    result = validate(no_test)
    assert any("split(s) test missing" in p for p in result.problems), result.problems


def _png(mask: np.ndarray) -> bytes:
    from hf_bgbench.data.schema import encode_mask

    return encode_mask(mask)


def test_reader_on_the_release_gives_the_converted_rows(converted, release):
    reader = resolve_source(str(release.parent), SPEC)
    assert isinstance(reader, Rival10Release) and reader.variants == ("ordinary",)
    assert reader.precropped is False
    hub = resolve_source(str(converted), SPEC)
    for split in ("train", "test"):
        mine = reader.load("ordinary", columns=EXTRA, split=split)
        theirs = hub.load("ordinary", columns=EXTRA, split=split)
        assert mine.features == theirs.features and len(mine) == len(theirs)
        for a, b in zip(mine, theirs, strict=True):
            for column in RIVAL10_COLUMNS:
                if column == "attribute_masks":
                    assert [m["attribute"] for m in a[column]] == [
                        m["attribute"] for m in b[column]
                    ]
                    for ma, mb in zip(a[column], b[column], strict=True):
                        np.testing.assert_array_equal(
                            np.asarray(ma["mask"]), np.asarray(mb["mask"])
                        )
                elif column in ("image", "object_mask", "merged_mask"):
                    np.testing.assert_array_equal(np.asarray(a[column]), np.asarray(b[column]))
                else:
                    assert a[column] == b[column]
    basic = reader.load("ordinary", split="test")
    assert basic.column_names == ["image", "label", "id"]
    assert basic["id"] == hub.load("ordinary", split="test")["id"]


def test_reader_names_an_unreadable_file(release, tmp_path):
    copy = _copy(release, tmp_path)
    pkl = sorted((copy / "train" / "ordinary").glob("*_attr_dict.pkl"))[0]
    pkl.write_bytes(b"garbage")
    reader = resolve_source(str(copy), SPEC)
    assert len(reader.load("ordinary", split="train")) == 20  # no mask asked: not read
    with pytest.raises(Rival10LayoutError, match=str(pkl)):
        reader.load("ordinary", columns=["object_mask"], split="train")


def test_reader_fingerprint_follows_the_masks(release, tmp_path):
    copy = _copy(release, tmp_path)
    reader = resolve_source(str(copy), SPEC)
    ds = reader.load("ordinary", split="test")
    before = reader.fingerprint(ds, "ordinary")
    assert reader.fingerprint(ds, "ordinary") == before
    pkl = sorted((copy / "test" / "ordinary").glob("*_attr_dict.pkl"))[0]
    pkl.write_bytes(pkl.read_bytes() + b".")  # a different mask file, same images
    assert reader.fingerprint(ds, "ordinary") != before


def test_fixture_release_is_the_official_layout(tmp_path):
    root = write_rival10_release(tmp_path)
    assert root.name == "RIVAL10"
    names = {p.name for p in (root / "test" / "ordinary").iterdir()}
    assert len(names) == 80  # 20 images x (image, npy, merged mask, pickle)
    assert np.load(next((root / "test" / "ordinary").glob("*.npy"))).shape == (2, 18)


@pytest.mark.parametrize("mode", ["L", "RGB", "RGBA", "LA", "P", "1", "I;16"])
def test_mask_rule_any_colour_channel_whatever_the_mode(mode):
    import io

    from PIL import Image

    from hf_bgbench.benchmarks.rival10.items import binarise

    mask = np.zeros((8, 16), bool)
    mask[2:5, 3:9] = True
    img = Image.fromarray(mask.astype(np.uint8) * 255, "L").convert(mode)
    buf = io.BytesIO()
    img.save(buf, "PNG")
    got, resized = binarise(buf.getvalue(), (16, 8), "x")
    np.testing.assert_array_equal(got, mask)
    assert not resized
    got, resized = binarise(buf.getvalue(), (32, 16), "x")  # another size: nearest
    np.testing.assert_array_equal(got, mask.repeat(2, 0).repeat(2, 1))
    assert resized
