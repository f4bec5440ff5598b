"""``bgbench edit EDIT --image A --mask M --output OUT``: one ImageNet-E-style edit of one
image on the CPU (or, with ``--diffusion-model``, by the paper's diffusion path); prints the
edit's parameters (JSON), which reproduce it with the seed."""

from __future__ import annotations

import functools
import json
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hf_bgbench.benchmarks.imagenet_e.cli import size_method_option
from hf_bgbench.builders.arguments import option, required
from hf_bgbench.builders.commands import Command
from hf_bgbench.spec import BenchmarkSpec

EDITS = ("remove", "size", "position", "rotation", "background", "texture", "guided")
NEEDS_MODEL = (
    "needs --diffusion-model PATH_OR_ID (a diffusers UNet folder with its scheduler, or a Hub "
    'id; safetensors weights) and the diffusion extra: pip install "hf-bgbench[diffusion]"'
)


# The options of the diffusion path, a section of their own in the help.
diffusion_path = functools.partial(
    option,
    group=("diffusion path", 'ImageNet-E\'s diffusion edits (pip install "hf-bgbench[diffusion]")'),
)


@dataclass(frozen=True, kw_only=True)
class EditOptions:
    """One ImageNet-E-style edit of an image with its object mask: remove the object
    (inpainting), change its size / position (the whole photo scaled, as the authors'
    resize_obj.py and `bgbench build imagenet-e`; --size-method object pastes the object alone)
    / rotation (pasted back with Poisson blending on the inpainted background), or replace the
    background with another image or an OOD texture. With --diffusion-model (a diffusers UNet),
    the paper's diffusion path: 'guided' regenerates the background with L_c guidance λ
    (--lam), and size / position / rotation are blended in by the model. Prints the parameters
    of the edit as JSON."""

    edit: str = required("the edit to make", flags=("edit",), choices=EDITS)
    image: Path = required("the photo (any PIL format)")
    mask: Path = required("its object mask (non-zero = object)")
    output: Path = required("where to write the edited image")
    mask_output: Path | None = option(None, "also write the edited mask")
    seed: int = option(0, "seed of the edit's random choices")
    rate: float | None = option(
        None,
        "size/position: target object pixel rate, e.g. 0.05 (default: full, the object "
        "zoomed as large as the frame holds it whole)",
    )
    angle: float | None = option(None, "rotation: θ in degrees (CCW)")
    max_angle: float = option(
        45.0, "rotation without --angle: θ an integer in [-a, a] (default 45: the authors')"
    )
    background: Path | None = option(None, "background: the new background")
    texture: str | None = option(
        None,
        "texture: the kind (default: drawn with the seed)",
        choices=("checker", "stripes", "noise"),
    )
    method: str = option("telea", "inpainting method", choices=("telea", "ns"))
    blend: str = option("poisson", "paste-back", choices=("poisson", "alpha"))
    size_method: str = size_method_option()
    diffusion_model: str | None = diffusion_path(
        None,
        "diffusers UNet folder (+ scheduler_config.json, or unet/ + scheduler/) or Hub id; "
        "given, the guided edit regenerates the background and size/position/rotation are "
        "blended in by the model instead of Poisson blending",
        metavar="PATH_OR_ID",
    )
    lam: float = diffusion_path(0.0, "guided: λ (-20 simpler, 20 complex)")
    steps: int = diffusion_path(20, "DDIM steps of the schedule")
    strength: float = diffusion_path(0.5, "fraction of the schedule used")
    start: str = diffusion_path("invert", "start point", choices=("invert", "noise"))
    adv_model: str = diffusion_path("", "guided: classifier for adversarial guidance")
    adv_scale: float = diffusion_path(10.0, "weight of that guidance")
    label: int | None = diffusion_path(None, "the image's ImageNet-1k index")
    device: str = diffusion_path("auto", "device of the diffusion model")

    def __post_init__(self) -> None:
        """The numbers are checked before any image is read."""
        if self.rate is not None and not 0 < self.rate <= 1:  # (NaN fails this too)
            raise ValueError(
                f"--rate must be in (0, 1] (object pixels / image pixels), got {self.rate}."
            )
        if self.angle is not None and not math.isfinite(self.angle):
            raise ValueError(f"--angle must be a finite number of degrees, got {self.angle}.")
        if not (math.isfinite(self.max_angle) and self.max_angle >= 0):
            raise ValueError(
                f"--max-angle must be a number of degrees >= 0 (θ is drawn in [-a, a]), got "
                f"{self.max_angle}."
            )
        if self.seed < 0:
            raise ValueError(f"--seed must be 0 or more, got {self.seed}.")
        for flag, path in (("--output", self.output), ("--mask-output", self.mask_output)):
            _check_image_path(flag, path)


def _check_image_path(flag: str, path: Path | None) -> None:
    """Refuse, before the edit is made, a file name PIL cannot write: it said "unknown file
    extension: .xyz" (or ": " for a folder) after the work."""
    from PIL import Image

    if path is None:
        return
    if Path(path).is_dir():
        raise ValueError(f"{flag} {path} is a folder; give the image file to write, e.g. out.png.")
    writer = Image.registered_extensions().get(Path(path).suffix.lower())
    if writer is None or writer not in Image.SAVE:
        raise ValueError(
            f"{flag} {path}: {Path(path).suffix or 'no extension'} is not an image format PIL "
            "writes; end the name in .png (lossless, as the edits are kept) or .jpg."
        )


def _read(path: Path, what: str, mode: str) -> np.ndarray:
    from hf_bgbench.files import open_image

    if not path.is_file():
        raise FileNotFoundError(f"{what} {path}: no such file.")
    return np.asarray(open_image(path, f"{what} {path}").convert(mode))


def edit(options: EditOptions, spec: BenchmarkSpec, specs: Sequence[BenchmarkSpec]) -> int:
    """``bgbench edit``: make the edit, write it, print its parameters."""
    from PIL import Image

    from hf_bgbench.benchmarks.imagenet_e.edit_set import move_resized
    from hf_bgbench.edits import seeded_rng
    from hf_bgbench.edits.backgrounds import replace_background, texture_background
    from hf_bgbench.edits.complexity import complexity
    from hf_bgbench.edits.geometry import FRAME_BACKGROUND as FRAME
    from hf_bgbench.edits.geometry import resize_object, rotate_object
    from hf_bgbench.edits.inpaint import remove_object
    from hf_bgbench.files import ensure_writable_dir

    image = _read(options.image, "--image", "RGB")
    mask = _read(options.mask, "--mask", "L")
    rng = seeded_rng(options.seed, options.image.name, options.edit)
    if options.diffusion_model is None and options.edit == "guided":
        raise ValueError(f"The guided edit (ImageNet-E's diffusion path) {NEEDS_MODEL}.")
    clean = remove_object(image, mask, method=options.method)
    blend, rate, size_method = options.blend, options.rate, options.size_method
    if options.diffusion_model is not None:
        result = _diffusion(options, image, mask, clean.image, rng)
    elif options.edit == "remove":
        result = clean
    elif options.edit == "size":
        result = resize_object(image, mask, clean.image, rate, blend=blend, method=size_method)
    elif options.edit == "position":  # the build's position recipe, from the object at --rate
        result, small = move_resized(
            image, mask, clean.image, rate, rng, blend, size_method, FRAME, options.method
        )
    elif options.edit == "rotation":
        result = rotate_object(
            image,
            mask,
            clean.image,
            rng,
            angle=options.angle,
            max_angle=options.max_angle,
            blend=blend,
        )
    elif options.edit == "background":
        if options.background is None:
            raise ValueError("The background edit needs --background IMAGE (the new background).")
        other = _read(options.background, "--background", "RGB")
        params = {"background": str(options.background), **complexity(other)}
        result = replace_background(image, mask, other, blend=blend, params=params)
    else:
        result = texture_background(image, mask, rng, kind=options.texture, blend=blend)
    result.params.update(seed=options.seed, inpaint=options.method)
    result.params["object_pixel_rate"] = round(result.object_pixel_rate, 6)
    if options.edit == "position" and rate is not None and "within_tolerance" not in result.params:
        tolerance = small.params["rate_tolerance"]  # the size step's target, kept after the move
        result.params.update(
            target_rate=rate,
            rate_tolerance=tolerance,
            within_tolerance=bool(abs(result.object_pixel_rate - rate) <= tolerance),
        )
    folder = options.output.parent
    ensure_writable_dir(folder if str(folder) else Path("."), "--output")
    Image.fromarray(result.image).save(options.output)
    if options.mask_output is not None:
        Image.fromarray(result.mask.astype(np.uint8) * 255, mode="L").save(options.mask_output)
    if result.params.get("within_tolerance") is False:  # the frame cannot hold the object
        print(
            f"WARNING: the object pixel rate reached is {result.params['object_pixel_rate']}, "
            f"not the {rate} asked (more than {result.params['rate_tolerance']} off: the "
            "frame cannot hold the object that large); recorded as within_tolerance: false.",
            file=sys.stderr,
        )
    print(json.dumps(result.params, sort_keys=True, allow_nan=False))
    return 0


def _diffusion(options: EditOptions, image, mask, clean, rng):
    """The diffusion path: guided background, or size/position/rotation blended by it."""
    from hf_bgbench.edits.diffusion import diffusion_edit, diffusion_geometry, load_diffusion_model
    from hf_bgbench.models.devices import resolve_device

    if options.edit not in ("guided", "size", "position", "rotation"):
        raise ValueError(
            f"--diffusion-model applies to the guided, size, position and rotation edits, not "
            f"{options.edit!r}; leave it out for the CPU {options.edit} edit."
        )
    device = str(resolve_device(options.device))
    model = load_diffusion_model(options.diffusion_model, device=device)
    schedule = {
        "lam": options.lam,
        "steps": options.steps,
        "strength": options.strength,
        "start": options.start,
        "seed": int(rng.integers(2**62)),
    }
    if options.edit == "guided":
        classifier = None
        if options.adv_model:
            from hf_bgbench.edits.diffusion_model import classifier_guidance
            from hf_bgbench.models import load_classifier

            if options.label is None:
                raise ValueError("--adv-model needs --label (the image's ImageNet-1k index).")
            classifier = classifier_guidance(load_classifier(options.adv_model, device=device))
        result = diffusion_edit(
            model,
            image,
            mask,
            start_image=clean,
            classifier=classifier,
            label=options.label,
            adversarial_scale=options.adv_scale if classifier is not None else 0.0,
            **schedule,
        )
        result.params["start_image"] = "inpainted background"
        return result
    return diffusion_geometry(
        model,
        options.edit,
        image,
        mask,
        clean,
        rng=rng,
        rate=options.rate,
        angle=options.angle,
        max_angle=options.max_angle,
        **schedule,
    )


EDIT = Command(
    "edit", "edit one image + object mask (ImageNet-E edits on the CPU)", EditOptions, edit
)
