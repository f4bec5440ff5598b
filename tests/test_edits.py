"""The CPU editing toolkit (hf_bgbench.edits) on synthetic scenes of known geometry."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from hf_bgbench.benchmarks.imagenet_e.edit_set import apply_edit
from hf_bgbench.edits import EditError, seeded_rng
from hf_bgbench.edits.backgrounds import TEXTURES, replace_background, texture, texture_background
from hf_bgbench.edits.complexity import complexity_bins, fourier_complexity, glcm_measures
from hf_bgbench.edits.geometry import (
    RATE_TOLERANCE,
    ROTATION_MAX_ANGLE,
    draw_angle,
    fit_size_scale,
    full_matrix,
    full_window,
    move_object,
    object_box,
    paste,
    resize_object,
    rotate_object,
    scale_photo,
    size_matrix,
)
from hf_bgbench.edits.inpaint import dilate_mask, remove_object
from tests import synthetic_scenes

RED, BLUE = (220, 20, 20), (20, 40, 200)


def scene(size: int = 128, box=(40, 50, 72, 94)) -> tuple[np.ndarray, np.ndarray]:
    """A red rectangle (x0, y0, x1, y1) on a blue background, and its mask."""
    image = np.empty((size, size, 3), np.uint8)
    image[:] = BLUE
    mask = np.zeros((size, size), bool)
    x0, y0, x1, y1 = box
    mask[y0:y1, x0:x1] = True
    image[mask] = RED
    return image, mask


def red_pixels(image: np.ndarray) -> np.ndarray:
    return (image[..., 0] > 150) & (image[..., 2] < 100)


def interior(mask: np.ndarray) -> np.ndarray:
    """The mask without its seam (the FEATHER band blended with the background)."""
    return cv2.erode(mask.astype(np.uint8), np.ones((7, 7), np.uint8)) > 0


def test_inpainting_leaves_no_object_pixels():
    for method in ("telea", "ns"):
        image, mask = scene()
        result = remove_object(image, mask, method=method)
        assert not red_pixels(result.image).any()
        assert not result.mask.any() and result.params["method"] == method


def test_inpainting_object_on_the_border():
    image, mask = scene(box=(0, 0, 30, 128))
    assert not red_pixels(remove_object(image, mask).image).any()


@pytest.mark.parametrize("rate", [0.1, 0.08, 0.05, 0.02])
def test_size_edit_reaches_the_object_pixel_rate(rate):
    image, mask = scene()
    background = remove_object(image, mask).image
    result = resize_object(image, mask, background, rate)
    assert abs(result.mask.mean() - rate) <= 0.05 * rate
    # scaled about the centre of the box (SPEC T_size)
    x, y, w, h = object_box(mask)
    nx, ny, nw, nh = object_box(result.mask)
    assert abs((nx + nw / 2) - (x + w / 2)) <= 1 and abs((ny + nh / 2) - (y + h / 2)) <= 1
    # the object keeps its colour, pasted exactly where the new mask is
    assert red_pixels(result.image)[interior(result.mask)].all()
    assert not red_pixels(result.image)[~result.mask].any()


def _photo(label: int, k: int, box_scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """A synthetic photo (textured background, elliptical object) on a 128 x 160 canvas."""
    rgb, truth, _ = synthetic_scenes.scene(label, k, size=(160, 128), box_scale=box_scale)
    return rgb, truth


@pytest.mark.parametrize("rate", [0.1, 0.08, 0.05])
@pytest.mark.parametrize(
    "label, k, box_scale", [(0, 0, 1.0), (3, 1, 0.4), (5, 2, 1.5), (7, 3, 0.7)]
)
def test_size_edits_land_within_the_authors_tolerance(rate, label, k, box_scale):
    image, mask = _photo(label, k, box_scale)
    result = resize_object(image, mask, remove_object(image, mask).image, rate)
    reached = result.mask.mean()
    assert abs(reached - rate) <= RATE_TOLERANCE  # resize_obj.py: |rate - scale| <= 0.015
    assert result.params["object_pixel_rate"] == pytest.approx(reached, abs=1e-6)
    assert result.params["within_tolerance"] is True
    assert result.params["rate_tolerance"] == RATE_TOLERANCE


def test_size_edit_iterates_when_the_frame_cuts_the_object():
    # a small object in the corner: one step s = sqrt(0.1 / rate) grows it about its centre,
    # mostly out of the frame (rate ~0.04); the scale has to be iterated
    image, mask = scene(box=(0, 0, 10, 10))
    result = resize_object(image, mask, remove_object(image, mask).image, 0.1)
    assert result.params["rate_steps"] > 1
    assert abs(result.mask.mean() - 0.1) <= RATE_TOLERANCE
    one_step = np.sqrt(0.1 / mask.mean())
    assert result.params["scale"] > one_step


@pytest.mark.parametrize(
    "box", [(40, 50, 72, 94), (0, 0, 30, 128), (100, 5, 127, 40), (10, 60, 110, 80)]
)
def test_size_full_fills_the_frame_with_the_whole_object(box):
    image, mask = scene(box=box)
    result = resize_object(image, mask, remove_object(image, mask).image, None)
    new = result.mask
    touches_rows = new[0].any() and new[-1].any()
    touches_cols = new[:, 0].any() and new[:, -1].any()
    assert touches_rows or touches_cols  # spans the frame along the axis that binds
    scale = result.params["scale"]
    x, y, w, h = object_box(mask)
    assert scale == pytest.approx(min(128 / h, 128 / w))  # as large as possible...
    # ... with its whole body inside: nothing cut, the area grows by exactly s^2
    assert new.sum() == pytest.approx(mask.sum() * scale**2, rel=0.03)
    # the object's colours, away from its edge (at the frame, the edge is the frame itself)
    away = np.zeros_like(new)
    away[4:-4, 4:-4] = True
    assert red_pixels(result.image)[interior(new) & away].all()


def test_size_full_on_photos_keeps_the_whole_ellipse():
    for label, k in [(0, 0), (2, 1), (6, 3)]:
        image, mask = _photo(label, k)
        result = resize_object(image, mask, remove_object(image, mask).image, None)
        scale, x0, y0 = full_window(mask)
        new = result.mask
        assert (new[0].any() and new[-1].any()) or (new[:, 0].any() and new[:, -1].any())
        assert new.sum() == pytest.approx(mask.sum() * scale**2, rel=0.03)
        # the crop window lies inside the photo and holds the object's whole box
        x, y, w, h = object_box(mask)
        assert 0 <= x0 <= x and x + w <= x0 + 160 / scale + 1e-6
        assert 0 <= y0 <= y and y + h <= y0 + 128 / scale + 1e-6


def test_position_edit_keeps_the_object_inside_the_frame():
    image, mask = scene(box=(10, 10, 60, 40))
    background = remove_object(image, mask).image
    seen = set()
    for seed in range(20):
        result = move_object(image, mask, background, seeded_rng(seed, "x"))
        assert result.mask.sum() == mask.sum()  # nothing cut at the frame
        x, y, w, h = object_box(result.mask)
        assert (w, h) == (50, 30) and (x, y) == (result.params["x"], result.params["y"])
        seen.add((x, y))
    assert len(seen) > 10


def test_position_object_touching_the_border():
    image, mask = scene(box=(0, 100, 40, 128))
    result = move_object(image, mask, remove_object(image, mask).image, seeded_rng(3))
    assert result.mask.sum() == mask.sum()


@pytest.mark.parametrize("angle, k", [(90, 1), (180, 2), (-90, 3)])
def test_rotation_maps_the_mask(angle, k):
    image, mask = scene(size=128, box=(44, 24, 84, 104))  # centred on the image centre
    background = remove_object(image, mask).image
    result = rotate_object(image, mask, background, angle=angle)
    expected = np.rot90(mask, k)  # counter-clockwise, as OpenCV's positive angles
    iou = (result.mask & expected).sum() / (result.mask | expected).sum()
    assert iou > 0.97


def test_rotation_turns_about_the_image_centre():
    # an object far from the centre: turned about the image centre (the authors' PIL
    # Image.rotate), a quarter turn is np.rot90 of the whole mask -- about its own box centre
    # it would stay in the same corner
    image, mask = scene(size=128, box=(8, 10, 40, 34))
    result = rotate_object(image, mask, remove_object(image, mask).image, angle=90)
    expected = np.rot90(mask, 1)
    iou = (result.mask & expected).sum() / (result.mask | expected).sum()
    assert iou > 0.95 and result.params["centre"] == "image"


def test_rotation_angle_is_the_authors_integer_in_plus_minus_45():
    assert ROTATION_MAX_ANGLE == 45
    angles = [draw_angle(seeded_rng(s, "id", "rotation")) for s in range(3000)]
    assert all(isinstance(a, int) for a in angles)
    assert min(angles) == -45 and max(angles) == 45  # both ends, as random.randint
    assert len(set(angles)) == 91
    image, mask = scene()
    bg = remove_object(image, mask).image
    for seed in range(10):
        angle = rotate_object(image, mask, bg, seeded_rng(seed, "r")).params["angle"]
        assert angle == int(angle) and -45 <= angle <= 45


def test_position_moves_the_size_005_object():
    image, mask = _photo(4, 0)
    clean = remove_object(image, mask).image
    small = apply_edit("size_0.05", image, mask, clean=clean, rng=seeded_rng(0, "s"))
    moved = apply_edit("position", image, mask, clean=clean, rng=seeded_rng(0, "p"))
    assert moved.params["from"]["edit"] == "size_0.05"
    assert abs(moved.mask.mean() - 0.05) <= RATE_TOLERANCE
    dx, dy = moved.params["dx"], moved.params["dy"]
    shifted = np.roll(np.roll(small.mask, dy, axis=0), dx, axis=1)
    assert np.array_equal(moved.mask, shifted)  # the 0.05 object, translated whole
    assert moved.params["edit_method"] == "cpu-inpaint-paste"


def test_rotation_draws_and_records_the_angle():
    image, mask = scene()
    bg = remove_object(image, mask).image
    result = rotate_object(image, mask, bg, seeded_rng(0, "a"), max_angle=30)
    assert -30 <= result.params["angle"] <= 30


def test_background_replacement_and_textures():
    image, mask = scene()
    other = np.full_like(image, 90)
    result = replace_background(image, mask, other[:64, :64], params={"background_id": "b"})
    assert np.array_equal(result.mask, mask) and result.params["background_id"] == "b"
    assert (result.image[~mask] == 90).all()
    for kind in TEXTURES:
        edited = texture_background(image, mask, seeded_rng(1), kind=kind)
        assert edited.params["texture"] == kind
        assert red_pixels(edited.image)[interior(mask)].all()


def test_complexity_ranks_flat_stripes_noise():
    rng = np.random.default_rng(0)
    flat = np.full((128, 128, 3), 120, np.uint8)
    stripes, _ = texture("stripes", 128, 128, seeded_rng(0))
    noise = rng.integers(0, 256, (128, 128, 3)).astype(np.uint8)
    lc = [fourier_complexity(x) for x in (flat, stripes, noise)]
    assert lc[0] == pytest.approx(0.0, abs=1e-9) and lc[0] < lc[1] < lc[2]
    for key in ("glcm_dissimilarity", "glcm_contrast"):
        g = [glcm_measures(x)[key] for x in (flat, stripes, noise)]
        assert g[0] == 0.0 and g[0] < g[1] < g[2]


def test_complexity_bins_by_rank():
    bins, edges = complexity_bins([5.0, 1.0, 3.0, 2.0, 6.0, 4.0])
    assert bins.tolist() == [2, 0, 1, 0, 2, 1] and edges == [2.0, 4.0]


def test_same_seed_same_bytes():
    image, mask = scene()
    bg = remove_object(image, mask).image
    runs = [
        (
            move_object(image, mask, bg, seeded_rng(7, "id", "position")).image.tobytes(),
            rotate_object(image, mask, bg, seeded_rng(7, "id", "rotation")).image.tobytes(),
            texture_background(image, mask, seeded_rng(7, "id", "bg_texture")).image.tobytes(),
        )
        for _ in range(2)
    ]
    assert runs[0] == runs[1]
    other = move_object(image, mask, bg, seeded_rng(8, "id", "position")).image.tobytes()
    assert other != runs[0][0]


def test_bad_inputs_name_the_problem():
    image, mask = scene()
    with pytest.raises(EditError, match="empty"):
        remove_object(image, np.zeros_like(mask))
    with pytest.raises(EditError, match="size"):
        remove_object(image, mask[:10])
    with pytest.raises(EditError, match="rate"):
        resize_object(image, mask, image, 1.5)
    with pytest.raises(EditError, match="blend"):
        paste(image, image, mask, blend="magic")


def _warp(image: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    h, w = image.shape[:2]
    return cv2.warpAffine(
        image, matrix, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )


def test_whole_size_edit_shrinks_the_photo_with_its_own_background():
    """size_method "whole" (the authors' resize_obj.py): the object keeps its own
    background around it; only the frame the shrunk photo leaves comes from the filler."""
    image, mask = _photo(2, 1, 1.4)
    filler = np.full_like(image, 128)
    result = resize_object(image, mask, filler, 0.05, method="whole")
    scale, _, _ = fit_size_scale(mask, 0.05)
    matrix = size_matrix(mask, scale)
    moved = _warp(image, matrix)
    h, w = mask.shape
    covered = cv2.warpAffine(np.full((h, w), 255, np.uint8), matrix, (w, h)) > 127
    deep = cv2.erode(covered.astype(np.uint8), np.ones((9, 9), np.uint8)) > 0
    assert deep.any() and (~covered).any()
    assert np.array_equal(result.image[deep], moved[deep])  # photo, background included
    assert (result.image[~covered & ~result.mask] == 128).all()  # the frame: the filler
    assert np.array_equal(result.image[result.mask], moved[result.mask])
    assert abs(result.mask.mean() - 0.05) <= RATE_TOLERANCE
    params = result.params
    assert params["size_method"] == "whole" and "blend" not in params
    assert params["filled"] == pytest.approx(1 - covered.mean(), abs=1e-6)
    # the earlier recipe pastes the object alone: the filler shows right next to it
    alone = resize_object(image, mask, filler, 0.05, method="object")
    ring = dilate_mask(alone.mask, 4) & ~dilate_mask(alone.mask, 1)
    assert (alone.image[ring] == 128).mean() > 0.9
    assert (result.image[ring] == 128).mean() < 0.1


def test_whole_size_full_zooms_the_photo_and_fills_nothing():
    image, mask = _photo(0, 0, 0.6)
    filler = np.zeros_like(image)
    result = resize_object(image, mask, filler, None, method="whole")
    assert result.params["filled"] == 0.0
    assert np.array_equal(result.image, _warp(image, full_matrix(mask)))
    assert (result.image.reshape(-1, 3).max(1) > 0).all()  # no filler pixel anywhere


def test_scale_photo_never_feathers_the_object_or_the_canvas_border():
    image, mask = scene(128, (0, 40, 30, 90))  # the object touches the left border
    filler = np.zeros_like(image)
    matrix = size_matrix(mask, 0.5)
    out, new_mask, filled = scale_photo(image, mask, filler, matrix)
    assert 0 < filled < 1
    assert red_pixels(out)[new_mask].all()  # object pixels are the photo's, not mixed
    grown = scale_photo(image, mask, filler, size_matrix(mask, 1.5))
    assert grown[2] == 0.0 and not (grown[0] == 0).all(axis=2).any()


def test_whole_position_inpaints_only_the_small_objects_hole():
    image, mask = _photo(4, 0)
    clean = remove_object(image, mask).image
    small = apply_edit("size_0.05", image, mask, clean=clean, rng=seeded_rng(0, "s"))
    moved = apply_edit("position", image, mask, clean=clean, rng=seeded_rng(0, "p"))
    assert small.params["size_method"] == moved.params["from"]["size_method"] == "whole"
    # everywhere but the small object's (grown) hole and the pasted object's seam, the
    # position image is the size-0.05 image: the original object's hole is never shown
    touched = dilate_mask(small.mask, 8) | dilate_mask(moved.mask, 2)
    assert np.array_equal(moved.image[~touched], small.image[~touched])
    earlier = apply_edit(
        "position", image, mask, clean=clean, rng=seeded_rng(0, "p"), size_method="object"
    )
    assert earlier.params["from"]["size_method"] == "object"
    assert not np.array_equal(earlier.image[~touched], small.image[~touched])


def test_unknown_size_method_is_refused():
    image, mask = scene()
    with pytest.raises(EditError, match="size method"):
        resize_object(image, mask, image, 0.05, method="magic")


def test_whole_frame_is_outpainted_without_the_original_object():
    """The frame a shrunk photo leaves is outpainted from the scaled background's own edge:
    even a background that still shows the object at full scale leaves no trace of it there
    (frame="background" takes it as it is, and the big object shows in the frame)."""
    image, mask = scene(128, (24, 24, 104, 104))  # a big red square, blue around
    outpainted = resize_object(image, mask, image, 0.05, method="whole", frame="outpaint")
    as_is = resize_object(image, mask, image, 0.05, method="whole")  # frame: the background
    frame = ~dilate_mask(outpainted.mask, 12)
    assert outpainted.params["frame"] == "outpaint" and as_is.params["frame"] == "background"
    assert not red_pixels(outpainted.image)[frame].any()
    assert red_pixels(as_is.image)[frame].sum() > 200
    with pytest.raises(EditError, match="frame"):
        resize_object(image, mask, image, 0.05, method="whole", frame="magic")


def test_build_edits_paste_the_object_hard_by_default():
    """apply_edit (what the build runs) pastes with a hard alpha composite, as the authors
    do before their diffusion blending: object pixels are the photo's, every other pixel the
    background's; poisson (the earlier default) changes the background at the seam."""
    image, mask = _photo(1, 0)
    other = np.full_like(image, 77)
    clean = remove_object(image, mask).image
    hard = apply_edit("bg_random", image, mask, clean=clean, rng=seeded_rng(0), other=other)
    assert hard.params["blend"] == "alpha"
    assert np.array_equal(hard.image[mask], image[mask])
    assert (hard.image[~mask] == 77).all()
    soft = apply_edit(
        "bg_random", image, mask, clean=clean, rng=seeded_rng(0), other=other, blend="poisson"
    )
    assert not np.array_equal(soft.image[mask], image[mask])


def test_one_image_edit_scales_the_whole_photo_as_the_build_does(tmp_path, capsys):
    """`bgbench edit size` and `bgbench build imagenet-e` share one default, the authors'
    resize_obj.py: the whole photo scaled. The one-image edit at the build's size_0.05 rate
    is the build's size_0.05 image, pixel for pixel; `--size-method object` is the other."""
    import json

    from PIL import Image

    from hf_bgbench.cli import main

    image, mask = _photo(2, 1, 1.4)
    Image.fromarray(image).save(tmp_path / "a.png")
    Image.fromarray(mask.astype(np.uint8) * 255).save(tmp_path / "m.png")
    args = ["edit", "size", "--image", str(tmp_path / "a.png"), "--mask", str(tmp_path / "m.png")]
    assert main([*args, "--rate", "0.05", "--output", str(tmp_path / "e.png")]) == 0
    said = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert said["size_method"] == "whole"
    clean = remove_object(image, mask).image
    built = apply_edit("size_0.05", image, mask, clean=clean, rng=seeded_rng(0, "a", "size"))
    assert built.params["size_method"] == "whole"
    assert np.array_equal(np.asarray(Image.open(tmp_path / "e.png")), built.image)
    assert (
        main(
            [
                *args,
                "--rate",
                "0.05",
                "--size-method",
                "object",
                "--output",
                str(tmp_path / "o.png"),
            ]
        )
        == 0
    )
    said = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert said["size_method"] == "object"
    assert not np.array_equal(np.asarray(Image.open(tmp_path / "o.png")), built.image)
