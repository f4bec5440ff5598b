"""Size, position and rotation of the object (SPEC §3), and pasting it back.

Each edit maps the object (image pixels under the mask) with a 2x3 affine matrix, the top
two rows of the paper's 3x3 transforms:

- T_size = [[s, 0, Δx], [0, s, Δy]] with Δx = (1 - s)(x + w/2), Δy = (1 - s)(y + h/2):
  scaling by ``s`` about the centre of the object's box (x, y, w, h). ``s`` is iterated, as
  the authors' ``resize_obj.py`` (``rescale``) does, s ← s·sqrt(target / rate), until the
  object pixel rate (object pixels / image pixels) is within :data:`RATE_TOLERANCE` of the
  target (the object may be cut at the frame, so one step is not always enough);
- "Full" (the paper: "the object as large as possible while maintaining its whole body
  inside the image"): the authors' ``rescale_maximum`` crops a window around the object's
  box and zooms it to the canvas, so the object spans the frame along the axis that binds;
  :func:`full_matrix`;
- T_position = translation of the box to (x', y'), x' ∈ [0, W - w], y' ∈ [0, H - h] drawn
  uniformly (integers, both ends included, as the authors' ``change_place.find_bbox``), so
  the object stays inside the frame;
- T_direction = rotation by θ about the centre of the *image* (the authors rotate the whole
  object image with PIL's ``Image.rotate``, whose default centre is the image centre), θ an
  integer number of degrees drawn uniformly in [-45, 45] (the authors' random rule in
  ``image_editor.py``).

The mapped object is pasted onto a background (usually the image's own inpainted background,
:func:`hf_bgbench.edits.inpaint.remove_object`) by :func:`paste`: Poisson blending
(``cv2.seamlessClone``) at the seam, the object's own colours inside. The paper blends the
edited object in with a diffusion model instead (:mod:`hf_bgbench.edits.diffusion` does that).
"""

from __future__ import annotations

import cv2
import numpy as np

from hf_bgbench.edits.types import EditError, EditResult, as_image, as_mask

BLENDS = ("poisson", "alpha")
SIZE_OBJECT, SIZE_WHOLE = "object", "whole"
SIZE_METHODS = (SIZE_WHOLE, SIZE_OBJECT)
FRAME_OUTPAINT, FRAME_BACKGROUND = "outpaint", "background"
FRAMES = (FRAME_BACKGROUND, FRAME_OUTPAINT)
"""What fills the frame a shrunk photo leaves (``whole`` size edits; the authors outpaint it
with their diffusion model): ``background`` -- the image's inpainted background at full scale
(real texture of the photo; it shows the part of the original object's inpainted hole the
shrunk photo does not cover); ``outpaint`` -- the background scaled with the photo, extended
outwards by Telea inpainting (no trace of the object, but long streaks: measured worse,
bench/imagenet_e_cpu_study.md)."""
"""How a size edit is made: ``whole`` scales the whole photo (the object with its own
background) about the object's box centre, as the authors' ``resize_obj.py`` does
(:func:`scale_photo`); ``object`` warps the object alone and pastes it on the inpainted
background, leaving the rest of the hole it uncovers visible."""
FEATHER = 3.0
"""Pixels over which a Poisson paste goes from the blended seam to the object's own colours.
Poisson blending alone keeps only gradients, so a uniform object would take the colour of
the background around it; the ramp keeps the object recognisable and the seam invisible."""
_PAD = 2  # seamlessClone ignores the outermost pixel of the mask; objects may touch the border
RATE_TOLERANCE = 0.015
"""How far the object pixel rate reached may be from the target: the authors' acceptance
test in ``resize_obj.py`` (``rescale``: |rate - scale| > 0.015 keeps iterating)."""
MAX_RATE_STEPS = 50
"""Scale steps before giving up on the target rate (the authors' ``max_steps``)."""
ROTATION_MAX_ANGLE = 45
"""θ is an integer in [-45, 45] degrees: the random-angle rule in the authors'
``image_editor.py`` (``random.randint(-45, 45)``)."""


def object_box(mask: np.ndarray) -> tuple[int, int, int, int]:
    """(x, y, w, h) of the object's bounding box."""
    return tuple(int(v) for v in cv2.boundingRect(mask.astype(np.uint8)))  # type: ignore[return-value]


def paste(
    background: np.ndarray, image: np.ndarray, mask: np.ndarray, *, blend: str = "poisson"
) -> np.ndarray:
    """``image``'s pixels under ``mask`` over ``background`` (all the same size)."""
    if blend not in BLENDS:
        raise EditError(f"Unknown blend {blend!r}; use one of {list(BLENDS)}.")
    m = mask.astype(bool)
    if background.shape != image.shape:
        raise EditError(f"Background {background.shape} and image {image.shape} differ in size.")
    out = background.copy()
    if not m.any():
        return out
    if blend == "alpha" or m.sum() < 16:
        out[m] = image[m]
        return out
    pad = ((_PAD, _PAD), (_PAD, _PAD), (0, 0))
    dst = np.pad(background, pad, mode="reflect")
    src = np.pad(image, pad, mode="reflect")
    mk = np.pad(m, pad[:2]).astype(np.uint8) * 255
    x, y, w, h = cv2.boundingRect(mk)
    centre = (x + w // 2, y + h // 2)  # OpenCV puts the mask's box at centre - (w//2, h//2)
    cloned = cv2.seamlessClone(src, dst, mk, centre, cv2.NORMAL_CLONE)[_PAD:-_PAD, _PAD:-_PAD]
    inside = cv2.distanceTransform(m.astype(np.uint8), cv2.DIST_L2, 3)
    alpha = np.clip(inside / FEATHER, 0.0, 1.0)[..., None]
    mixed = alpha * image.astype(np.float32) + (1.0 - alpha) * cloned.astype(np.float32)
    out[m] = np.clip(np.rint(mixed[m]), 0, 255).astype(np.uint8)
    return out


def warped_mask(mask: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """``mask`` mapped by the 2x3 ``matrix`` (bilinear, then halved: what :func:`warp_object`
    pastes through), cut at the frame."""
    h, w = mask.shape
    warped = cv2.warpAffine(mask.astype(np.uint8) * 255, matrix, (w, h), flags=cv2.INTER_LINEAR)
    return warped > 127


def warp_object(
    image: np.ndarray,
    mask: np.ndarray,
    background: np.ndarray,
    matrix: np.ndarray,
    *,
    blend: str = "poisson",
) -> tuple[np.ndarray, np.ndarray]:
    """Map the object with the 2x3 ``matrix`` and paste it on ``background``; returns the
    edited image and the mapped mask (parts mapped outside the frame are cut)."""
    h, w = mask.shape
    moved = cv2.warpAffine(
        image, matrix, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )
    moved_mask = warped_mask(mask, matrix)
    return paste(background, moved, moved_mask, blend=blend), moved_mask


def _inputs(image, mask, background):
    img = as_image(image)
    m = as_mask(mask, img)
    bg = as_image(background)
    if bg.shape != img.shape:
        raise EditError(f"The background is {bg.shape[:2]}, the image {img.shape[:2]}.")
    return img, m, bg


def size_matrix(mask: np.ndarray, scale: float) -> np.ndarray:
    """T_size: scale by ``scale`` about the centre of the object's box."""
    x, y, w, h = object_box(mask)
    dx, dy = (1 - scale) * (x + w / 2), (1 - scale) * (y + h / 2)
    return np.array([[scale, 0.0, dx], [0.0, scale, dy]])


def zoom_matrix(scale: float, x0: float, y0: float) -> np.ndarray:
    """The window whose top-left corner is (x0, y0) (pixel edges) zoomed by ``scale`` onto
    the canvas, as a matrix on pixel indices (pixel i covers [i, i + 1), centre i + 0.5)."""
    return np.array(
        [
            [scale, 0.0, scale * (0.5 - x0) - 0.5],
            [0.0, scale, scale * (0.5 - y0) - 0.5],
        ]
    )


def full_window(mask: np.ndarray) -> tuple[float, float, float]:
    """(scale, x0, y0) of "Full": the largest zoom that keeps the object's whole box in the
    frame, s = min(H / h, W / w), and the window (x0, y0, W / s, H / s) it crops.

    As the authors' ``rescale_maximum``: along the axis that binds, the window is the box
    itself (the object touches both borders); along the other, the window is placed so the
    box centre keeps its relative place (x0 = c_x (1 - 1/s), what zooming about the centre
    gives), moved just enough to hold the whole box. Their code sizes that other side as
    w·h/H and unions it with the box, so the window loses the canvas's aspect ratio and the
    object is stretched when resized to the canvas; ours keeps one scale for both axes."""
    x, y, w, h = object_box(mask)
    height, width = mask.shape
    scale = min(height / h, width / w)
    win_w, win_h = width / scale, height / scale
    cx, cy = x + w / 2, y + h / 2
    x0 = float(np.clip(cx * (1 - 1 / scale), x + w - win_w, x))
    y0 = float(np.clip(cy * (1 - 1 / scale), y + h - win_h, y))
    return float(scale), x0, y0


def full_matrix(mask: np.ndarray) -> np.ndarray:
    """The 2x3 matrix of "Full" (:func:`full_window`)."""
    return zoom_matrix(*full_window(mask))


def fit_size_scale(
    mask: np.ndarray,
    rate: float,
    *,
    tolerance: float = RATE_TOLERANCE,
    max_steps: int = MAX_RATE_STEPS,
) -> tuple[float, float, int]:
    """(scale, object pixel rate reached, steps) of T_size towards the target ``rate``.

    The first step is s = sqrt(rate / rate_before); then, as the authors' ``rescale``,
    s ← s·sqrt(rate / reached) while the rate reached is more than ``tolerance`` off -- the
    frame cuts an object grown near its border, and small objects lose pixels to rounding.
    Each step maps the original mask (no resampling of resampled pixels). Stops when a step
    does not bring the rate closer (the frame cannot hold more of the object) or after
    ``max_steps``; the closest scale is returned with the rate it reaches."""
    before = float(mask.mean())
    scale = float(np.sqrt(rate / before))
    best: tuple[float, float, int] | None = None
    for step in range(1, max_steps + 1):
        reached = float(warped_mask(mask, size_matrix(mask, scale)).mean())
        if best is None or abs(reached - rate) < abs(best[1] - rate):
            best = (scale, reached, step)
        elif step > 1:
            break  # no closer than the best: further steps cannot help
        if abs(reached - rate) <= tolerance or reached <= 0:
            break
        scale *= float(np.sqrt(rate / reached))
    assert best is not None
    return best


def resize_object(
    image: np.ndarray,
    mask: np.ndarray,
    background: np.ndarray,
    rate: float | None,
    *,
    blend: str = "poisson",
    tolerance: float = RATE_TOLERANCE,
    method: str = SIZE_WHOLE,
    frame: str = FRAME_BACKGROUND,
) -> EditResult:
    """T_size to the object pixel rate ``rate`` within ``tolerance``
    (:func:`fit_size_scale`), or "Full" for None (:func:`full_matrix`: the object zoomed
    until its box spans the frame along one axis, whole). The rate reached is recorded as
    ``object_pixel_rate``, with ``within_tolerance``.

    ``method`` (:data:`SIZE_METHODS`): ``whole`` (the default, as the authors'
    ``resize_obj.py`` and ``bgbench build imagenet-e``) maps the whole photo, its own
    background with it,
    and takes from ``background`` only the frame a shrunk photo leaves
    (:func:`scale_photo`; ``filled`` records its share), as ``frame`` says (:data:`FRAMES`);
    ``object`` maps the object alone and pastes it on ``background`` (``blend``)."""
    if method not in SIZE_METHODS:
        raise EditError(f"Unknown size method {method!r}; use one of {list(SIZE_METHODS)}.")
    if frame not in FRAMES:
        raise EditError(f"Unknown frame {frame!r}; use one of {list(FRAMES)}.")
    img, m, bg = _inputs(image, mask, background)
    if rate is not None and not 0 < rate <= 1:  # (NaN fails this too)
        raise EditError(f"The object pixel rate must be in (0, 1], got {rate}.")
    before = float(m.mean())
    params: dict = {"edit": "size", "target_rate": "full" if rate is None else rate}
    if rate is None:
        scale, x0, y0 = full_window(m)
        matrix = zoom_matrix(scale, x0, y0)
        params["window"] = [round(v, 3) for v in (x0, y0, m.shape[1] / scale, m.shape[0] / scale)]
    else:
        scale, _, steps = fit_size_scale(m, rate, tolerance=tolerance)
        matrix = size_matrix(m, scale)
        params["rate_steps"] = steps
    if method == SIZE_WHOLE:
        filler = outpaint_frame(bg, matrix) if frame == FRAME_OUTPAINT else bg
        out, new_mask, filled = scale_photo(img, m, filler, matrix)
        params.update(
            {
                "size_method": method,
                "frame": frame,
                "filled": round(filled, 6),
                "feather": FEATHER,
            }
        )
    else:
        out, new_mask = warp_object(img, m, bg, matrix, blend=blend)
        params.update({"size_method": method, "blend": blend})
    reached = float(new_mask.mean())
    params.update(
        {
            "rate_before": round(before, 6),
            "object_pixel_rate": round(reached, 6),
            "scale": round(float(scale), 6),
            "dx": round(float(matrix[0, 2]), 3),
            "dy": round(float(matrix[1, 2]), 3),
        }
    )
    if rate is not None:
        params["rate_tolerance"] = tolerance
        params["within_tolerance"] = bool(abs(reached - rate) <= tolerance)
    return EditResult(out, new_mask, params)


def scale_photo(
    image: np.ndarray,
    mask: np.ndarray,
    filler: np.ndarray,
    matrix: np.ndarray,
    *,
    feather: float = FEATHER,
) -> tuple[np.ndarray, np.ndarray, float]:
    """The *whole photo* -- the object with its own background -- mapped by the 2x3
    ``matrix``, as the authors' ``resize_obj.py`` scales the image about the object's box
    centre (``resize_around_the_center_padding``) and crops-and-zooms it (``rescale_maximum``).

    Where a shrunk photo no longer covers the canvas, the frame is taken from ``filler``
    (the photo's inpainted background at full scale: the authors outpaint that frame with
    their diffusion model), with a ``feather``-pixel ramp at the seam; object pixels are
    always the photo's. Returns (image, mapped object mask, share of the canvas filled)."""
    h, w = mask.shape
    moved = cv2.warpAffine(
        image, matrix, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )
    new_mask = warped_mask(mask, matrix)
    inside = cv2.warpAffine(np.full((h, w), 255, np.uint8), matrix, (w, h), flags=cv2.INTER_LINEAR)
    covered = inside > 127
    filled = float(1.0 - covered.mean())
    if filled == 0.0:
        return moved, new_mask, 0.0
    depth = cv2.distanceTransform(
        np.pad(covered, 1, constant_values=True).astype(np.uint8), cv2.DIST_L2, 3
    )[1:-1, 1:-1]
    # the canvas border is not a seam: only the edge facing the filler is feathered
    alpha = np.clip(depth / max(feather, 1e-6), 0.0, 1.0) if feather > 0 else covered * 1.0
    alpha[~covered] = 0.0
    alpha[new_mask] = 1.0
    a = alpha[..., None].astype(np.float32)
    out = a * moved.astype(np.float32) + (1.0 - a) * filler.astype(np.float32)
    return np.clip(np.rint(out), 0, 255).astype(np.uint8), new_mask, filled


def outpaint_frame(background: np.ndarray, matrix: np.ndarray, radius: int = 5) -> np.ndarray:
    """``background`` mapped by ``matrix``; where it no longer covers the canvas (a shrunk
    photo's frame), extended outwards by Telea inpainting from its own edge."""
    h, w = background.shape[:2]
    moved = cv2.warpAffine(
        background, matrix, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )
    inside = cv2.warpAffine(np.full((h, w), 255, np.uint8), matrix, (w, h), flags=cv2.INTER_LINEAR)
    hole = (inside <= 127).astype(np.uint8) * 255
    if not hole.any() or hole.all():
        return moved
    return cv2.inpaint(moved, hole, radius, cv2.INPAINT_TELEA)


def move_object(
    image: np.ndarray,
    mask: np.ndarray,
    background: np.ndarray,
    rng: np.random.Generator,
    *,
    blend: str = "poisson",
) -> EditResult:
    """T_position: the object's box moved to a uniformly drawn (x', y') inside the frame."""
    img, m, bg = _inputs(image, mask, background)
    x, y, w, h = object_box(m)
    height, width = m.shape
    nx = int(rng.integers(0, width - w + 1))
    ny = int(rng.integers(0, height - h + 1))
    matrix = np.array([[1.0, 0.0, nx - x], [0.0, 1.0, ny - y]])
    out, new_mask = warp_object(img, m, bg, matrix, blend=blend)
    params = {
        "edit": "position",
        "x": nx,
        "y": ny,
        "dx": nx - x,
        "dy": ny - y,
        "object_pixel_rate": round(float(new_mask.mean()), 6),
        "blend": blend,
    }
    return EditResult(out, new_mask, params)


def rotation_matrix(mask: np.ndarray, angle: float) -> np.ndarray:
    """T_direction: rotation by ``angle`` degrees (counter-clockwise, as PIL's
    ``Image.rotate`` and OpenCV) about the image centre ((W - 1)/2, (H - 1)/2 in pixel
    indices: the centre PIL uses), as the authors rotate the object image."""
    h, w = mask.shape
    return cv2.getRotationMatrix2D(((w - 1) / 2, (h - 1) / 2), angle, 1.0)


def draw_angle(rng: np.random.Generator, max_angle: float = ROTATION_MAX_ANGLE) -> int:
    """θ: an integer drawn uniformly in [-⌊max_angle⌋, ⌊max_angle⌋] (both ends included, as
    Python's ``random.randint`` in the authors' code)."""
    bound = int(np.floor(max_angle))
    return int(rng.integers(-bound, bound + 1))


def rotate_object(
    image: np.ndarray,
    mask: np.ndarray,
    background: np.ndarray,
    rng: np.random.Generator | None = None,
    *,
    angle: float | None = None,
    max_angle: float = ROTATION_MAX_ANGLE,
    blend: str = "poisson",
) -> EditResult:
    """T_direction by ``angle`` degrees about the image centre, or by an integer θ drawn
    uniformly in [-max_angle, max_angle] (:func:`draw_angle`). Parts turned out of the frame
    are cut, as in the authors' rotation."""
    img, m, bg = _inputs(image, mask, background)
    if angle is not None and not np.isfinite(angle):
        raise EditError(f"The rotation angle must be a finite number of degrees, got {angle}.")
    if not (np.isfinite(max_angle) and max_angle >= 0):
        raise EditError(
            f"The largest rotation angle must be a number of degrees >= 0 (the angle is drawn "
            f"in [-a, a]), got {max_angle}."
        )
    if angle is None:
        if rng is None:
            raise EditError("Give an angle or a random generator to draw one.")
        angle = draw_angle(rng, max_angle)
    out, new_mask = warp_object(img, m, bg, rotation_matrix(m, angle), blend=blend)
    params = {
        "edit": "rotation",
        "angle": round(float(angle), 4),
        "centre": "image",
        "object_pixel_rate": round(float(new_mask.mean()), 6),
        "blend": blend,
    }
    return EditResult(out, new_mask, params)
