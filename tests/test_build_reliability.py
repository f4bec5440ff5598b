"""A build never claims what it did not do: it fails when it keeps nothing, never uses a
photo as its own background, and checks its output folder before any work."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hf_bgbench.benchmarks import get_benchmark
from hf_bgbench.benchmarks.in9.build import BuildError, BuildOptions, build_in9
from hf_bgbench.benchmarks.in9.choices import assign_backgrounds, lacking_background
from hf_bgbench.cli import main
from hf_bgbench.cli.validate import validate
from hf_bgbench.files import OutputFolderError, ensure_writable_dir
from tests.synthetic_scenes import class_wnids, write_photos

IN9 = get_benchmark("in9")

ALL = ("mixed_same", "mixed_rand", "mixed_next")


@pytest.fixture(scope="module")
def single_photos(tmp_path_factory) -> tuple[Path, Path]:
    """One photo per class (nine classes)."""
    return write_photos(tmp_path_factory.mktemp("single"), per_class=1, extras=False)


def test_unreadable_photos_fail_the_build_and_write_nothing(tmp_path, capsys):
    images = tmp_path / "images"
    images.mkdir()
    for wnid in class_wnids():
        (images / f"{wnid}_0.JPEG").write_bytes(b"not a JPEG at all")
    out = tmp_path / "out"
    argv = ["build", "in9", "--images", str(images), "--no-boxes", "--output", str(out)]
    assert main([*argv, "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "No photo survived" in err and "9 dropped (photo could not be decoded)" in err
    assert "Traceback" not in err
    assert not out.exists()  # no 0-image dataset, no empty folder


def test_an_existing_output_folder_is_kept_when_nothing_survives(tmp_path):
    images = tmp_path / "images"
    images.mkdir()
    (images / f"{class_wnids()[0]}_0.JPEG").write_bytes(b"broken")
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(BuildError, match="nothing was written"):
        build_in9(BuildOptions(images=images, no_boxes=True, output=out, progress=False), IN9)
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]


def test_lacking_background_rules():
    one_dog = {0: ["dog"], 1: ["bird_a", "bird_b"]}
    assert lacking_background(one_dog, 9, ["mixed_same"]) == {"dog"}
    assert lacking_background(one_dog, 9, ["mixed_rand", "mixed_next"]) == set()
    assert lacking_background({0: ["dog"]}, 9, ["mixed_rand"]) == {"dog"}
    assert lacking_background({0: ["dog"]}, 9, ["mixed_next"]) == {"dog"}
    assert lacking_background({0: ["a", "b"]}, 9, ALL) == set()
    assert lacking_background({0: ["dog"]}, 9, ["original", "only_fg"]) == set()
    with pytest.raises(ValueError, match="other than itself"):
        assign_backgrounds([(0, "dog"), (1, "bird_a"), (1, "bird_b")], 9, 0, ["mixed_same"])


def test_single_photo_classes_never_get_their_own_background(single_photos, tmp_path, capsys):
    images, boxes = single_photos
    for label_space in ("imagenet", "in9"):
        out = tmp_path / label_space
        argv = ["build", "in9", "--images", str(images), "--boxes", str(boxes)]
        argv += ["--output", str(out), "--label-space", label_space, "--no-progress"]
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "9 dropped (no other photo to take a mixed background from" in err
        assert not out.exists()

    # Without mixed_same, one photo per class is enough: mixed_rand takes another class.
    out = tmp_path / "no_same"
    variants = ("original", "only_fg", "mixed_rand", "mixed_next")
    build_in9(
        BuildOptions(images=images, boxes=boxes, output=out, variants=variants, progress=False), IN9
    )
    report = json.loads((out / "build_report.json").read_text())["splits"]["test"]
    assert report["kept"] == 9 and report["dropped"]["no_other_background"] == 0
    table = pq.read_table(next((out / "data" / "mixed_rand").glob("*.parquet")))
    ids, bg_ids = table.column("id").to_pylist(), table.column("bg_id").to_pylist()
    assert all(i != b for i, b in zip(ids, bg_ids, strict=True))
    assert validate(out, "in9").problems == [
        "configs missing from the card: only_bg_b, only_bg_t, no_fg, mixed_same"
    ]


def test_validate_rejects_a_row_that_is_its_own_background(single_photos, tmp_path):
    images, boxes = single_photos
    out = tmp_path / "in9"
    build_in9(
        BuildOptions(
            images=images,
            boxes=boxes,
            output=out,
            variants=("original", "mixed_rand"),
            progress=False,
        ),
        IN9,
    )
    shard = next((out / "data" / "mixed_rand").glob("*.parquet"))
    table = pq.read_table(shard)
    bg_ids = table.column("bg_id").to_pylist()
    bg_ids[0] = table.column("id")[0].as_py()
    column = pa.array(bg_ids, table.schema.field("bg_id").type)
    pq.write_table(table.set_column(table.schema.get_field_index("bg_id"), "bg_id", column), shard)
    problems = "\n".join(validate(out, "in9").problems)
    assert "mixed_rand/test: 1 row(s) use their own photo as background" in problems


def test_output_folder_is_checked_before_any_work(single_photos, tmp_path, capsys):
    images, boxes = single_photos
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    with pytest.raises(OutputFolderError, match="--output"):
        ensure_writable_dir(blocker, "--output")
    with pytest.raises(OutputFolderError, match="--output"):
        ensure_writable_dir(blocker / "sub", "--output")
    argv = ["build", "in9", "--images", str(images), "--boxes", str(boxes)]
    assert main([*argv, "--output", str(blocker / "out"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "Give --output a folder you can write to" in err
    assert ensure_writable_dir(tmp_path / "new" / "deep", "--output") is True
    assert ensure_writable_dir(tmp_path / "new" / "deep", "--output") is False
    assert not list((tmp_path / "new").rglob(".bgbench-write-check*"))


def test_convert_checks_its_output_folder(in9_release, tmp_path, capsys):
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    assert main(["convert", "in9-release", str(in9_release), str(blocker / "out")]) == 2
    assert "Give OUTPUT a folder you can write to" in capsys.readouterr().err
