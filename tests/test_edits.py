"""The CPU editing toolkit (hf_bgbench.edits) on synthetic scenes of known geometry."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from hf_bgbench.edits import EditError, seeded_rng
from hf_bgbench.edits.backgrounds import TEXTURES, replace_background, texture, texture_background
from hf_bgbench.edits.complexity import complexity_bins, fourier_complexity, glcm_measures
from hf_bgbench.edits.geometry import (
    move_object,
    object_box,
    paste,
    resize_object,
    rotate_object,
)
from hf_bgbench.edits.inpaint import remove_object

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


def test_size_full_keeps_the_object():
    image, mask = scene()
    result = resize_object(image, mask, remove_object(image, mask).image, None)
    assert result.params["scale"] == 1.0 and np.array_equal(result.mask, mask)


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
