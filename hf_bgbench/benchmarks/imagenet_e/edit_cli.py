"""``bgbench edit EDIT --image A --mask M --output OUT``: one ImageNet-E-style edit of one
image on the CPU (or, with ``--diffusion-model``, by the paper's diffusion path); prints the
edit's parameters (JSON), which reproduce it with the seed."""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from hf_bgbench.benchmarks.imagenet_e.cli import add_size_method
from hf_bgbench.spec import BenchmarkSpec

EDITS = ("remove", "size", "position", "rotation", "background", "texture", "guided")
NEEDS_MODEL = (
    "needs --diffusion-model PATH_OR_ID (a diffusers UNet folder with its scheduler, or a Hub "
    'id; safetensors weights) and the diffusion extra: pip install "hf-bgbench[diffusion]"'
)


def _read(path: Path, what: str, mode: str) -> np.ndarray:
    from hf_bgbench.files import open_image

    if not path.is_file():
        raise FileNotFoundError(f"{what} {path}: no such file.")
    return np.asarray(open_image(path, f"{what} {path}").convert(mode))


def run_edit(args: argparse.Namespace) -> int:
    from PIL import Image

    from hf_bgbench.benchmarks.imagenet_e.edit_set import move_resized
    from hf_bgbench.edits import seeded_rng
    from hf_bgbench.edits.backgrounds import replace_background, texture_background
    from hf_bgbench.edits.complexity import complexity
    from hf_bgbench.edits.geometry import FRAME_BACKGROUND as FRAME
    from hf_bgbench.edits.geometry import resize_object, rotate_object
    from hf_bgbench.edits.inpaint import remove_object
    from hf_bgbench.files import ensure_writable_dir

    if args.rate is not None and not 0 < args.rate <= 1:  # (NaN fails this too)
        raise ValueError(
            f"--rate must be in (0, 1] (object pixels / image pixels), got {args.rate}."
        )
    if args.angle is not None and not math.isfinite(args.angle):
        raise ValueError(f"--angle must be a finite number of degrees, got {args.angle}.")
    if not (math.isfinite(args.max_angle) and args.max_angle >= 0):
        raise ValueError(
            f"--max-angle must be a number of degrees >= 0 (θ is drawn in [-a, a]), got "
            f"{args.max_angle}."
        )
    if args.seed < 0:
        raise ValueError(f"--seed must be 0 or more, got {args.seed}.")
    image = _read(args.image, "--image", "RGB")
    mask = _read(args.mask, "--mask", "L")
    rng = seeded_rng(args.seed, args.image.name, args.edit)
    if args.diffusion_model is None and args.edit == "guided":
        raise ValueError(f"The guided edit (ImageNet-E's diffusion path) {NEEDS_MODEL}.")
    clean = remove_object(image, mask, method=args.method)
    blend = args.blend
    if args.diffusion_model is not None:
        result = _diffusion(args, image, mask, clean.image, rng)
    elif args.edit == "remove":
        result = clean
    elif args.edit == "size":
        result = resize_object(
            image, mask, clean.image, args.rate, blend=blend, method=args.size_method
        )
    elif args.edit == "position":  # the build's position recipe, from the object at --rate
        result, small = move_resized(
            image, mask, clean.image, args.rate, rng, blend, args.size_method, FRAME, args.method
        )
    elif args.edit == "rotation":
        result = rotate_object(
            image, mask, clean.image, rng, angle=args.angle, max_angle=args.max_angle, blend=blend
        )
    elif args.edit == "background":
        if args.background is None:
            raise ValueError("The background edit needs --background IMAGE (the new background).")
        other = _read(args.background, "--background", "RGB")
        params = {"background": str(args.background), **complexity(other)}
        result = replace_background(image, mask, other, blend=blend, params=params)
    else:
        result = texture_background(image, mask, rng, kind=args.texture, blend=blend)
    result.params.update(seed=args.seed, inpaint=args.method)
    result.params["object_pixel_rate"] = round(result.object_pixel_rate, 6)
    if (
        args.edit == "position"
        and args.rate is not None
        and "within_tolerance" not in result.params
    ):
        tolerance = small.params["rate_tolerance"]  # the size step's target, kept after the move
        result.params.update(
            target_rate=args.rate,
            rate_tolerance=tolerance,
            within_tolerance=bool(abs(result.object_pixel_rate - args.rate) <= tolerance),
        )
    ensure_writable_dir(args.output.parent if str(args.output.parent) else Path("."), "--output")
    Image.fromarray(result.image).save(args.output)
    if args.mask_output is not None:
        Image.fromarray(result.mask.astype(np.uint8) * 255, mode="L").save(args.mask_output)
    if result.params.get("within_tolerance") is False:  # the frame cannot hold the object
        print(
            f"WARNING: the object pixel rate reached is {result.params['object_pixel_rate']}, "
            f"not the {args.rate} asked (more than {result.params['rate_tolerance']} off: the "
            "frame cannot hold the object that large); recorded as within_tolerance: false.",
            file=sys.stderr,
        )
    print(json.dumps(result.params, sort_keys=True, allow_nan=False))
    return 0


def _diffusion(args: argparse.Namespace, image, mask, clean, rng):
    """The diffusion path: guided background, or size/position/rotation blended by it."""
    from hf_bgbench.edits.diffusion import diffusion_edit, diffusion_geometry, load_diffusion_model
    from hf_bgbench.models.devices import resolve_device

    if args.edit not in ("guided", "size", "position", "rotation"):
        raise ValueError(
            f"--diffusion-model applies to the guided, size, position and rotation edits, not "
            f"{args.edit!r}; leave it out for the CPU {args.edit} edit."
        )
    device = str(resolve_device(args.device))
    model = load_diffusion_model(args.diffusion_model, device=device)
    options = {
        "lam": args.lam,
        "steps": args.steps,
        "strength": args.strength,
        "start": args.start,
        "seed": int(rng.integers(2**62)),
    }
    if args.edit == "guided":
        classifier = None
        if args.adv_model:
            from hf_bgbench.edits.diffusion_model import classifier_guidance
            from hf_bgbench.models import load_classifier

            if args.label is None:
                raise ValueError("--adv-model needs --label (the image's ImageNet-1k index).")
            classifier = classifier_guidance(load_classifier(args.adv_model, device=device))
        result = diffusion_edit(
            model,
            image,
            mask,
            start_image=clean,
            classifier=classifier,
            label=args.label,
            adversarial_scale=args.adv_scale if classifier is not None else 0.0,
            **options,
        )
        result.params["start_image"] = "inpainted background"
        return result
    return diffusion_geometry(
        model,
        args.edit,
        image,
        mask,
        clean,
        rng=rng,
        rate=args.rate,
        angle=args.angle,
        max_angle=args.max_angle,
        **options,
    )


def register(
    sub: argparse._SubParsersAction, spec: BenchmarkSpec, specs: Sequence[BenchmarkSpec]
) -> None:
    """Add ``bgbench edit`` (the spec's ``cli_commands`` hook)."""
    p = sub.add_parser(
        "edit",
        help="edit one image + object mask (ImageNet-E edits on the CPU)",
        description="One ImageNet-E-style edit of an image with its object mask: remove the "
        "object (inpainting), change its size / position (the whole photo scaled, as the "
        "authors' resize_obj.py and `bgbench build imagenet-e`; --size-method object pastes "
        "the object alone) / rotation (pasted back with Poisson blending on the inpainted "
        "background), or replace the background with another image "
        "or an OOD texture. With --diffusion-model (a diffusers UNet), the paper's diffusion "
        "path: 'guided' regenerates the background with L_c guidance λ (--lam), and size / "
        "position / rotation are blended in by the model. Prints the parameters of the edit "
        "as JSON.",
    )
    p.add_argument("edit", choices=EDITS, help="the edit to make")
    p.add_argument("--image", type=Path, required=True, help="the photo (any PIL format)")
    p.add_argument("--mask", type=Path, required=True, help="its object mask (non-zero = object)")
    p.add_argument("--output", type=Path, required=True, help="where to write the edited image")
    p.add_argument("--mask-output", type=Path, default=None, help="also write the edited mask")
    p.add_argument("--seed", type=int, default=0, help="seed of the edit's random choices")
    p.add_argument(
        "--rate",
        type=float,
        default=None,
        help="size/position: target object pixel rate, e.g. 0.05 (default: full, the object "
        "zoomed as large as the frame holds it whole)",
    )
    p.add_argument("--angle", type=float, default=None, help="rotation: θ in degrees (CCW)")
    p.add_argument(
        "--max-angle",
        type=float,
        default=45.0,
        help="rotation without --angle: θ an integer in [-a, a] (default 45: the authors')",
    )
    p.add_argument("--background", type=Path, default=None, help="background: the new background")
    p.add_argument(
        "--texture",
        choices=("checker", "stripes", "noise"),
        default=None,
        help="texture: the kind (default: drawn with the seed)",
    )
    p.add_argument("--method", choices=("telea", "ns"), default="telea", help="inpainting method")
    p.add_argument("--blend", choices=("poisson", "alpha"), default="poisson", help="paste-back")
    add_size_method(p)
    d = p.add_argument_group(
        "diffusion path", 'ImageNet-E\'s diffusion edits (pip install "hf-bgbench[diffusion]")'
    )
    d.add_argument(
        "--diffusion-model",
        default=None,
        metavar="PATH_OR_ID",
        help="diffusers UNet folder (+ scheduler_config.json, or unet/ + scheduler/) or Hub id; "
        "given, the guided edit regenerates the background and size/position/rotation are "
        "blended in by the model instead of Poisson blending",
    )
    d.add_argument("--lam", type=float, default=0.0, help="guided: λ (-20 simpler, 20 complex)")
    d.add_argument("--steps", type=int, default=20, help="DDIM steps of the schedule")
    d.add_argument("--strength", type=float, default=0.5, help="fraction of the schedule used")
    d.add_argument("--start", choices=("invert", "noise"), default="invert", help="start point")
    d.add_argument("--adv-model", default="", help="guided: classifier for adversarial guidance")
    d.add_argument("--adv-scale", type=float, default=10.0, help="weight of that guidance")
    d.add_argument("--label", type=int, default=None, help="the image's ImageNet-1k index")
    d.add_argument("--device", default="auto", help="device of the diffusion model")
    p.set_defaults(func=run_edit)
