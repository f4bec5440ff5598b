"""The IN-9 builder's pieces: boxes, geometry, GrabCut, compositing, choices, discovery."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from hf_bgbench.benchmarks.in9 import compose
from hf_bgbench.benchmarks.in9.choices import (
    assign_backgrounds,
    balance,
    next_class,
)
from hf_bgbench.benchmarks.in9.geometry import (
    CROP,
    box_to_rect,
    crop_filter,
    resize_to_working,
    working_geometry,
)
from hf_bgbench.benchmarks.in9.labels import imagenet_to_in9
from hf_bgbench.builders.boxes import (
    BoxFormatError,
    BoxSource,
    estimate_box,
    parse_voc_xml,
    read_box_csv,
    rescale_boxes,
)
from hf_bgbench.builders.inputs import InputLayoutError, discover_photos
from hf_bgbench.builders.segmentation import grabcut_foreground, image_seed
from hf_bgbench.labels import identity_imagenet_map
from tests.synthetic_scenes import class_wnids, scene, voc_xml

# --------------------------------------------------------------------------- boxes


def test_voc_xml_boxes_and_declared_size(tmp_path):
    path = tmp_path / "a.xml"
    path.write_text(voc_xml("a.JPEG", (300, 200), [(10, 20, 110, 120), (5, 5, 50, 50)]))
    boxes, size = parse_voc_xml(path)
    assert boxes == [(10.0, 20.0, 110.0, 120.0), (5.0, 5.0, 50.0, 50.0)]
    assert size == (300, 200)
    # annotated on a 300x200 copy, the photo is 600x400: boxes scale with it
    assert rescale_boxes(boxes[:1], size, (600, 400)) == [(20.0, 40.0, 220.0, 240.0)]
    bad = tmp_path / "bad.xml"
    bad.write_text("<annotation><object><bndbox><xmin>x</xmin></bndbox></object></annotation>")
    with pytest.raises(BoxFormatError):
        parse_voc_xml(bad)


def test_box_csv_groups_rows_by_stem_and_names_missing_columns(tmp_path):
    csv = tmp_path / "boxes.csv"
    csv.write_text(
        "file,xmin,ymin,xmax,ymax\nn01_1.JPEG,1,2,3,4\nsub/n01_1.JPEG,5,6,7,8\nn01_2,0,0,9,9\n"
    )
    boxes = read_box_csv(csv)
    assert boxes == {"n01_1": [(1, 2, 3, 4), (5, 6, 7, 8)], "n01_2": [(0, 0, 9, 9)]}
    assert BoxSource(csv).lookup("n01", "n01_2") == ([(0.0, 0.0, 9.0, 9.0)], None)
    assert BoxSource(csv).lookup("n01", "absent") is None
    (tmp_path / "wrong.csv").write_text("name,x0\n")
    with pytest.raises(BoxFormatError, match="xmin"):
        read_box_csv(tmp_path / "wrong.csv")


def test_box_folder_lookup_train_and_val_layouts(tmp_path):
    (tmp_path / "n01").mkdir()
    (tmp_path / "n01" / "n01_1.xml").write_text(voc_xml("x", (10, 10), [(1, 1, 5, 5)]))
    (tmp_path / "ILSVRC2012_val_1.xml").write_text(voc_xml("x", (10, 10), [(2, 2, 6, 6)]))
    source = BoxSource(tmp_path)
    assert source.lookup("n01", "n01_1")[0] == [(1.0, 1.0, 5.0, 5.0)]
    assert source.lookup("n01", "ILSVRC2012_val_1")[0] == [(2.0, 2.0, 6.0, 6.0)]
    assert source.lookup("n01", "n01_9") is None


def test_estimated_box_is_deterministic_and_finds_the_object():
    rgb, truth, _ = scene(3, 0)
    box = estimate_box(rgb)
    assert box == estimate_box(rgb)
    x0, y0, x1, y1 = box
    assert 0 <= x0 < x1 <= rgb.shape[1] and 0 <= y0 < y1 <= rgb.shape[0]
    ys, xs = np.nonzero(truth)
    # the estimate overlaps the object's centre
    assert x0 <= xs.mean() <= x1 and y0 <= ys.mean() <= y1


# --------------------------------------------------------------------------- geometry


def test_geometry_is_torchvision_resize_256_centre_crop_224():
    from torchvision import transforms

    photo = Image.fromarray(scene(1, 0, size=(301, 207))[0])
    geometry = working_geometry(*photo.size)
    ours = geometry.crop(resize_to_working(photo, geometry))
    tv = np.asarray(transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224)])(photo))
    assert ours.shape == (CROP, CROP, 3)
    np.testing.assert_array_equal(ours, tv)


def test_crop_filters():
    g = working_geometry(400, 300)  # working 341x256, crop from x=58, y=16
    assert (g.width, g.height, g.left, g.top) == (341, 256, 58, 16)
    assert crop_filter((100, 60, 200, 180), g) is None
    assert crop_filter((40, 0, 300, 256), g) == "box_covers_crop"  # > 90% of the crop
    assert crop_filter((0, 0, 70, 256), g) == "box_outside_crop"  # < 50% survives
    assert crop_filter((5, 5, 5, 9), g) == "empty_box"
    assert box_to_rect((1.2, 2.7, 10.1, 20.0), 15, 15) == (1, 2, 11, 15)


# --------------------------------------------------------------------------- GrabCut


@pytest.mark.parametrize("label", [0, 4, 8])
def test_grabcut_recovers_the_known_object(label):
    rgb, truth, box = scene(label, 1)
    g = working_geometry(rgb.shape[1], rgb.shape[0])
    work = resize_to_working(Image.fromarray(rgb), g)
    truth_w = np.asarray(Image.fromarray(truth).resize((g.width, g.height), Image.NEAREST))
    rect = box_to_rect(g.to_working(box), g.width, g.height)
    mask, attempts = grabcut_foreground(work, rect, seed=0, image_id=f"x{label}")
    assert mask is not None and attempts == 1
    iou = (mask & truth_w).sum() / (mask | truth_w).sum()
    assert iou >= 0.9
    again, _ = grabcut_foreground(work, rect, seed=0, image_id=f"x{label}")
    np.testing.assert_array_equal(mask, again)


def test_grabcut_failure_is_reported_after_retries():
    flat = np.full((64, 64, 3), 120, np.uint8)  # nothing to separate
    mask, attempts = grabcut_foreground(flat, (10, 10, 50, 50), seed=0, image_id="flat")
    assert mask is None and attempts == 3


def test_image_seed_depends_on_seed_id_and_attempt():
    seeds = {image_seed(s, i, a) for s in (0, 1) for i in ("a", "b") for a in (0, 1)}
    assert len(seeds) == 8 and all(0 <= s < 2**31 for s in seeds)


# --------------------------------------------------------------------------- compositing


def test_tiled_background_holds_no_pixel_from_inside_the_box():
    rng = np.random.default_rng(0)
    img = rng.integers(0, 200, (60, 80, 3), dtype=np.uint8)
    rect = (30, 10, 60, 50)
    img[10:50, 30:60] = (255, 0, 255)  # a colour found nowhere else
    out = compose.tiled_background(img, rect)
    assert not np.all(out == (255, 0, 255), axis=-1).any()
    outside = np.ones((60, 80), bool)
    outside[10:50, 30:60] = False
    np.testing.assert_array_equal(out[outside], img[outside])
    # the largest strip is the left margin (30 x 60): the box repeats its columns
    assert compose.background_strip(80, 60, rect) == ("x", 0, 30)
    np.testing.assert_array_equal(out[10:50, 30:60], img[10:50, 0:30])


def test_strip_choice_and_whole_image_box():
    assert compose.background_strip(100, 100, (10, 0, 100, 60)) == ("y", 60, 100)
    with pytest.raises(ValueError, match="no background"):
        compose.background_strip(10, 10, (0, 0, 10, 10))


def test_foreground_compositions():
    img = np.full((4, 4, 3), 9, np.uint8)
    bg = np.full((4, 4, 3), 1, np.uint8)
    mask = np.zeros((4, 4), bool)
    mask[1:3, 1:3] = True
    assert (compose.only_foreground(img, mask)[mask] == 9).all()
    assert (compose.only_foreground(img, mask)[~mask] == 0).all()
    assert (compose.no_foreground(img, mask)[mask] == 0).all()
    pasted = compose.paste_foreground(img, mask, bg)
    assert (pasted[mask] == 9).all() and (pasted[~mask] == 1).all()
    assert (compose.black_box(img, (0, 0, 2, 2))[:2, :2] == 0).all()


# --------------------------------------------------------------------------- choices


def test_balance_is_seeded_and_equalises():
    ids = {0: [f"a{i}" for i in range(7)], 1: ["b0", "b1", "b2"], 2: []}
    out = balance(ids, seed=0)
    assert {k: len(v) for k, v in out.items()} == {0: 3, 1: 3}
    assert out == balance(ids, seed=0)
    assert any(balance(ids, seed=s)[0] != out[0] for s in range(1, 10))


def test_backgrounds_follow_the_rules():
    rows = sorted((y, f"{y}_{k}") for y in range(9) for k in range(4))
    chosen = assign_backgrounds(
        rows, 9, seed=3, variants=("mixed_same", "mixed_rand", "mixed_next")
    )
    for (y, _), (bg, bg_y) in zip(rows, chosen["mixed_next"], strict=True):
        assert bg_y == (y + 1) % 9 and bg.startswith(f"{bg_y}_")
    for (y, image_id), (bg, bg_y) in zip(rows, chosen["mixed_same"], strict=True):
        assert bg_y == y and bg != image_id
    assert all(bg != i for (_, i), (bg, _) in zip(rows, chosen["mixed_rand"], strict=True))
    assert len({bg_y for bg, bg_y in chosen["mixed_rand"]}) > 3
    assert chosen == assign_backgrounds(rows, 9, 3, ("mixed_same", "mixed_rand", "mixed_next"))
    # classes with no image are skipped by mixed_next
    assert next_class(8, [0, 3, 8], 9) == 0 and next_class(0, [0, 3, 8], 9) == 3


# --------------------------------------------------------------------------- discovery


def _touch(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (8, 8)).save(path)


def test_discovery_layouts(tmp_path):
    dog, bird = class_wnids()[:2]
    _touch(tmp_path / "tree" / dog / f"{dog}_1.JPEG")
    _touch(tmp_path / "tree" / bird / f"{bird}_1.JPEG")
    _touch(tmp_path / "tree" / "n04592741" / "n04592741_1.JPEG")  # wing: outside IN-9
    photos, skipped = discover_photos(tmp_path / "tree", imagenet_to_in9())
    assert [(p.id, p.label) for p in photos] == [(f"{bird}_1", 1), (f"{dog}_1", 0)]
    assert skipped == {"outside_label_space": 1}
    photos, _ = discover_photos(tmp_path / "tree", identity_imagenet_map())
    assert len(photos) == 3 and {p.label for p in photos} >= {908}

    _touch(tmp_path / "flat" / f"{dog}_golden.JPEG")
    assert discover_photos(tmp_path / "flat", imagenet_to_in9())[0][0].wnid == dog
    _touch(tmp_path / "flat" / "holiday.jpg")
    with pytest.raises(InputLayoutError, match="--metadata"):
        discover_photos(tmp_path / "flat", imagenet_to_in9())
    meta = tmp_path / "meta.csv"
    meta.write_text(f"file,wnid\nholiday.jpg,{bird}\n")
    photos, _ = discover_photos(tmp_path / "flat", imagenet_to_in9(), metadata=meta)
    assert [(p.id, p.label) for p in photos] == [("holiday", 1)]


def test_imagenet_val_layout_takes_the_class_from_the_annotation(tmp_path):
    """ImageNet val: flat ILSVRC2012_val_*.JPEG, the wnid only in <object><name>."""
    dog, bird = class_wnids()[:2]
    for i, wnid in ((1, dog), (2, bird)):
        _touch(tmp_path / "val" / f"ILSVRC2012_val_{i:08d}.JPEG")
        xml = tmp_path / "ann" / f"ILSVRC2012_val_{i:08d}.xml"
        xml.parent.mkdir(exist_ok=True)
        xml.write_text(
            f"<annotation><size><width>8</width><height>8</height></size><object>"
            f"<name>{wnid}</name><bndbox><xmin>1</xmin><ymin>1</ymin><xmax>6</xmax>"
            f"<ymax>6</ymax></bndbox></object></annotation>"
        )
    photos, _ = discover_photos(tmp_path / "val", imagenet_to_in9(), boxes=tmp_path / "ann")
    assert [(p.id, p.wnid, p.label) for p in photos] == [
        ("ILSVRC2012_val_00000001", dog, 0),
        ("ILSVRC2012_val_00000002", bird, 1),
    ]
    with pytest.raises(InputLayoutError, match="object><name>"):
        discover_photos(tmp_path / "val", imagenet_to_in9())  # without the annotations: no class
