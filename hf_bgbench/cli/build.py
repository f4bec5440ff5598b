"""``bgbench build in9 --images ROOT (--boxes ROOT_OR_CSV | --no-boxes) --output DIR``."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from hf_bgbench.cli._common import non_negative_int


def _default_workers() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def add_in9_arguments(p: argparse.ArgumentParser) -> None:
    """The IN-9 builder's options (shared with dataset_scripts/in9.py)."""
    p.add_argument(
        "--images",
        type=Path,
        required=True,
        help="ImageNet photos: ROOT/<wnid>/<stem>.JPEG, a flat folder of <wnid>_*.JPEG, "
        "or any folder with --metadata",
    )
    p.add_argument(
        "--boxes",
        type=Path,
        default=None,
        help="PASCAL-VOC XML boxes (ROOT/<wnid>/<stem>.xml or ROOT/<stem>.xml, the ILSVRC "
        "Annotation layout) or a CSV with columns file,xmin,ymin,xmax,ymax (one row per box)",
    )
    p.add_argument(
        "--no-boxes",
        action="store_true",
        help="estimate a box (spectral-residual saliency) for photos without one; such rows "
        "are flagged box_estimated=True",
    )
    p.add_argument(
        "--metadata",
        type=Path,
        default=None,
        help="CSV with columns file (relative to --images) and wnid, for folders whose layout "
        "does not give the class",
    )
    p.add_argument("--output", type=Path, required=True, help="the Hub repo folder to write")
    p.add_argument("--seed", type=int, default=0, help="seed of every random choice (default 0)")
    p.add_argument(
        "--workers",
        type=non_negative_int,
        default=_default_workers(),
        help="worker processes (default: the CPUs available, %(default)s)",
    )
    p.add_argument(
        "--label-space",
        choices=("in9", "imagenet"),
        default="in9",
        help="in9: the 9 IN-9 classes; imagenet: Full-IN, all 1000 classes (benchmark in9_full)",
    )
    p.add_argument(
        "--split",
        choices=("val", "train"),
        default="val",
        help="val: photos are ImageNet val, written as split 'test'; train: written as split "
        "'train', plus the in9l config (IN-9L; --label-space in9 only)",
    )
    p.add_argument(
        "--image-format",
        choices=("jpeg", "png"),
        default="jpeg",
        help="encoding of the variant images: jpeg (quality 95, 4:4:4) or png (lossless)",
    )
    p.add_argument("--shard-size", type=int, default=1000, help="images per Parquet shard")
    p.add_argument(
        "--limit-per-class",
        type=int,
        default=None,
        help="use a seeded random subset of at most N photos per class (quick builds)",
    )
    p.add_argument(
        "--variants",
        default=None,
        help="comma-separated variants to write (default: all eight)",
    )
    p.add_argument("--overwrite", action="store_true", help="replace an earlier build of the split")
    p.add_argument("--keep-work", action="store_true", help="keep the stage-1 cache afterwards")
    p.add_argument(
        "--quiet", "--no-progress", dest="quiet", action="store_true", help="no progress bars"
    )


def run_in9(args: argparse.Namespace) -> int:
    from hf_bgbench.benchmarks.in9.build import REPORT_NAME, BuildOptions, build_in9, summary_lines
    from hf_bgbench.benchmarks.in9.spec import IN9_VARIANTS

    variants = tuple(v.strip() for v in args.variants.split(",")) if args.variants else IN9_VARIANTS
    report = build_in9(
        BuildOptions(
            images=args.images,
            output=args.output,
            boxes=args.boxes,
            no_boxes=args.no_boxes,
            metadata=args.metadata,
            seed=args.seed,
            workers=args.workers,
            label_space=args.label_space,
            split=args.split,
            image_format=args.image_format,
            shard_size=args.shard_size,
            limit_per_class=args.limit_per_class,
            variants=variants,
            keep_work=args.keep_work,
            overwrite=args.overwrite,
            progress=not args.quiet,
        )
    )
    for line in summary_lines(report):
        print(line)
    print(f"wrote {args.output} (card README.md, {REPORT_NAME})")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("build", help="build a benchmark dataset from source photos")
    datasets = p.add_subparsers(dest="dataset", required=True, metavar="DATASET")
    in9 = datasets.add_parser(
        "in9",
        help="the eight IN-9 variants from ImageNet photos and boxes",
        description="Build the eight ImageNet-9 Backgrounds Challenge variants (and their "
        "foreground masks) from ImageNet photos and boxes, as a Hub dataset repo folder.",
    )
    add_in9_arguments(in9)
    in9.set_defaults(func=run_in9)
    edits = datasets.add_parser(
        "imagenet-e",
        help="ImageNet-E-style edits of masked images, on the CPU",
        description="Apply the CPU ImageNet-E edit set (backgrounds of other images by "
        "complexity, OOD textures, object size, position, rotation) to masked images and write "
        "one config per edit as a Hub dataset repo folder.",
    )
    add_imagenet_e_arguments(edits)
    edits.set_defaults(func=run_imagenet_e)


def add_imagenet_e_arguments(p: argparse.ArgumentParser) -> None:
    from hf_bgbench.benchmarks.imagenet_e.edit_set import CPU_EDITS

    p.add_argument("--images", type=Path, default=None, help="ImageNet photos (<wnid>/ folders)")
    p.add_argument("--masks", type=Path, default=None, help="their masks, <stem>.png")
    p.add_argument(
        "--from",
        dest="source",
        nargs=2,
        metavar=("KIND", "DIR"),
        default=None,
        help="instead of --images/--masks: 'in9 DIR' (an IN-9 build: original + mask) or "
        "'rival10 DIR' (RIVAL10 Hub folder: ordinary + object_mask)",
    )
    p.add_argument("--output", type=Path, required=True, help="the Hub repo folder to write")
    p.add_argument("--seed", type=int, default=0, help="seed of every random choice")
    p.add_argument(
        "--workers",
        type=non_negative_int,
        default=_default_workers(),
        help="worker processes (0 or 1: in the main process)",
    )
    p.add_argument("--size", type=int, default=224, help="side of the square edited images")
    p.add_argument("--inpaint", choices=("telea", "ns"), default="telea", help="inpainting")
    p.add_argument("--image-format", choices=("jpeg", "png"), default="jpeg", help="encoding")
    p.add_argument("--shard-size", type=int, default=500, help="images per Parquet shard")
    p.add_argument("--max-angle", type=float, default=180.0, help="rotation: θ ~ U[-a, a]")
    p.add_argument(
        "--edits",
        default=None,
        help=f"comma-separated edits to write (default: {','.join(CPU_EDITS)}; with "
        "--diffusion-model also bg_inversion, and bg_complex_adv with --adv-model)",
    )
    p.add_argument(
        "--diffusion-model",
        default=None,
        metavar="PATH_OR_ID",
        help="a diffusers UNet (+ scheduler) folder or Hub id: the background edits are then made "
        'by diffusion guidance as in the paper (needs pip install "hf-bgbench[diffusion]")',
    )
    p.add_argument("--diffusion-steps", type=int, default=20, help="DDIM steps of the schedule")
    p.add_argument(
        "--diffusion-strength", type=float, default=0.5, help="fraction of the schedule used"
    )
    p.add_argument(
        "--diffusion-start",
        choices=("invert", "noise"),
        default="invert",
        help="DDIM inversion or seeded forward noise of the inpainted background",
    )
    p.add_argument("--adv-model", default="", help="bg_complex_adv: the ImageNet-1k classifier")
    p.add_argument("--adv-scale", type=float, default=10.0, help="bg_complex_adv: its weight")
    p.add_argument(
        "--device", default="auto", help="device of the diffusion edits (auto, cpu, ...)"
    )
    p.add_argument("--overwrite", action="store_true", help="replace a different earlier build")
    p.add_argument("--keep-work", action="store_true", help="keep the per-image cache")
    p.add_argument(
        "--quiet", "--no-progress", dest="quiet", action="store_true", help="no progress bars"
    )


def run_imagenet_e(args: argparse.Namespace) -> int:
    from hf_bgbench.benchmarks.imagenet_e.build import EditBuildOptions, build_imagenet_e
    from hf_bgbench.benchmarks.imagenet_e.edit_set import CPU_EDITS
    from hf_bgbench.benchmarks.imagenet_e.sources import from_folders, from_hub

    if args.source is not None:
        if args.images is not None or args.masks is not None:
            raise ValueError("Give either --images/--masks or --from KIND DIR, not both.")
        source = from_hub(args.source[0], Path(args.source[1]))
    elif args.images is None or args.masks is None:
        raise ValueError("Give --images DIR and --masks DIR, or --from in9|rival10 DIR.")
    else:
        source = from_folders(args.images, args.masks)
    diffusion, edits = None, CPU_EDITS
    if args.diffusion_model:
        from hf_bgbench.benchmarks.imagenet_e.diffusion import DiffusionSettings
        from hf_bgbench.inference.devices import resolve_device

        diffusion = DiffusionSettings(
            model=args.diffusion_model,
            steps=args.diffusion_steps,
            strength=args.diffusion_strength,
            start=args.diffusion_start,
            adv_model=args.adv_model,
            adv_scale=args.adv_scale,
            device=str(resolve_device(args.device)),
        )
        edits = (*CPU_EDITS, "bg_inversion", *(("bg_complex_adv",) if args.adv_model else ()))
    if args.edits is not None:
        edits = tuple(e.strip() for e in args.edits.split(",") if e.strip())
    report = build_imagenet_e(
        source,
        EditBuildOptions(
            output=args.output,
            seed=args.seed,
            workers=args.workers,
            size=args.size,
            method=args.inpaint,
            image_format=args.image_format,
            shard_size=args.shard_size,
            max_angle=args.max_angle,
            edits=edits,
            overwrite=args.overwrite,
            keep_work=args.keep_work,
            progress=not args.quiet,
            diffusion=diffusion,
        ),
    )
    rows = report["complexity"]["rows_per_edit"]
    print(
        f"kept {report['kept']} images ({len(report['per_class'])} classes); rows per edit: "
        + ", ".join(f"{e} {n}" for e, n in rows.items())
    )
    skipped = {**report["skipped"], **report["dropped"]}
    if any(skipped.values()):
        print("skipped: " + ", ".join(f"{k} {v}" for k, v in skipped.items() if v))
    print(f"wrote {args.output} (card README.md, build_report.json)")
    return 0
