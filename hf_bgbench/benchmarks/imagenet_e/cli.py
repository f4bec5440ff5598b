"""ImageNet-E's sub-commands (the spec's CLI hooks): ``bgbench build imagenet-e`` (the CPU
edit set of masked images) and ``bgbench convert imagenet-e`` (the released tree)."""

from __future__ import annotations

import argparse
import functools
from collections.abc import Sequence
from pathlib import Path

from hf_bgbench.builders.arguments import add_progress_argument, default_workers, non_negative_int
from hf_bgbench.spec import BenchmarkSpec


def add_size_method(p: argparse.ArgumentParser) -> None:
    """``--size-method``, one declaration and one default (the authors' whole-photo
    scaling) for ``bgbench build imagenet-e`` and the one-image ``bgbench edit``."""
    from hf_bgbench.edits.geometry import SIZE_METHODS, SIZE_WHOLE

    p.add_argument(
        "--size-method",
        choices=SIZE_METHODS,
        default=SIZE_WHOLE,
        help="size edits (and position, from the small object): 'whole' scales the whole "
        "photo with its own background about the object's box centre, as the authors' "
        "resize_obj.py, the frame a shrunk photo leaves taken from the inpainted background; "
        "'object' (the earlier CPU recipe) pastes the object alone on the inpainted background "
        "(default: whole)",
    )


def add_build_arguments(p: argparse.ArgumentParser, specs: Sequence[BenchmarkSpec]) -> None:
    """The options of ``bgbench build imagenet-e`` (``specs``: the benchmarks whose Hub
    folders ``--from`` offers)."""
    from hf_bgbench.benchmarks.imagenet_e.edit_set import CPU_EDITS

    offered = [s for s in specs if s.masked_source]
    sources = " or ".join(
        f"'{s.name} DIR' ({s.masked_source}: {s.mask_variant} + {s.mask_column})" for s in offered
    )

    p.add_argument("--images", type=Path, default=None, help="ImageNet photos (<wnid>/ folders)")
    p.add_argument("--masks", type=Path, default=None, help="their masks, <stem>.png")
    p.add_argument(
        "--from",
        dest="source",
        nargs=2,
        metavar=("KIND", "DIR"),
        default=None,
        help=f"instead of --images/--masks: {sources}",
    )
    p.add_argument("--output", type=Path, required=True, help="the Hub repo folder to write")
    p.add_argument("--seed", type=int, default=0, help="seed of every random choice")
    p.add_argument(
        "--runs",
        type=int,
        default=1,
        help="seeded repetitions of every random edit, seeds --seed, --seed + 1, ... (the "
        "paper averages 5 runs); more than 1: OUTPUT/run-<seed>/ per run, each a complete "
        "build, which `bgbench evaluate --data OUTPUT` scores and averages (default 1: "
        "one build in OUTPUT)",
    )
    p.add_argument(
        "--workers",
        type=non_negative_int,
        default=default_workers(),
        help="worker processes (0 or 1: in the main process)",
    )
    p.add_argument(
        "--size",
        type=int,
        default=256,
        help="side of the square canvas the edits are made on (default 256: the authors')",
    )
    p.add_argument(
        "--fit",
        choices=("resize", "crop"),
        default="resize",
        help="photo to canvas: resize the whole photo (the authors'; aspect ratio not kept) or "
        "resize the shorter side and centre crop",
    )
    p.add_argument("--inpaint", choices=("telea", "ns"), default="telea", help="inpainting")
    add_size_method(p)
    p.add_argument(
        "--blend",
        choices=("alpha", "poisson"),
        default="alpha",
        help="how objects are pasted: a hard alpha paste (the authors' composite before their "
        "diffusion blending; default) or Poisson blending at the seam (the earlier default)",
    )
    p.add_argument("--image-format", choices=("jpeg", "png"), default="jpeg", help="encoding")
    p.add_argument("--shard-size", type=int, default=500, help="images per Parquet shard")
    p.add_argument(
        "--max-angle",
        type=float,
        default=45.0,
        help="rotation: θ an integer drawn uniformly in [-a, a] degrees (default 45: the authors')",
    )
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


def run_build(args: argparse.Namespace, specs: Sequence[BenchmarkSpec]) -> int:
    """``bgbench build imagenet-e`` (``specs``: as for :func:`add_build_arguments`)."""
    from hf_bgbench.benchmarks.imagenet_e.build import EditBuildOptions, build_imagenet_e
    from hf_bgbench.benchmarks.imagenet_e.edit_set import CPU_EDITS
    from hf_bgbench.benchmarks.imagenet_e.sources import from_folders, from_hub, hub_sources

    sources = hub_sources(specs)
    if args.source is not None:
        if args.images is not None or args.masks is not None:
            raise ValueError("Give either --images/--masks or --from KIND DIR, not both.")
        source = from_hub(args.source[0], Path(args.source[1]), sources)
    elif args.images is None or args.masks is None:
        raise ValueError(f"Give --images DIR and --masks DIR, or --from {'|'.join(sources)} DIR.")
    else:
        source = from_folders(args.images, args.masks)
    diffusion, edits = None, CPU_EDITS
    if args.diffusion_model:
        from hf_bgbench.benchmarks.imagenet_e.diffusion import DiffusionSettings
        from hf_bgbench.models.devices import resolve_device

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
            runs=args.runs,
            workers=args.workers,
            size=args.size,
            fit=args.fit,
            method=args.inpaint,
            image_format=args.image_format,
            shard_size=args.shard_size,
            max_angle=args.max_angle,
            size_method=args.size_method,
            blend=args.blend,
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
    if "runs" in report:
        print(
            f"wrote {args.output}: {len(report['runs'])} runs, "
            + ", ".join(f"{name}/ (seed {run['seed']})" for name, run in report["runs"].items())
            + ", each a complete build; card README.md, build_report.json"
        )
    else:
        print(f"wrote {args.output} (card README.md, build_report.json)")
    return 0


def register_build(
    sub: argparse._SubParsersAction, spec: BenchmarkSpec, specs: Sequence[BenchmarkSpec]
) -> None:
    p = sub.add_parser(
        "imagenet-e",
        help="ImageNet-E-style edits of masked images, on the CPU",
        description="Apply the CPU ImageNet-E edit set (backgrounds of other images by "
        "complexity, OOD textures, object size, position, rotation) to masked images and write "
        "one config per edit as a Hub dataset repo folder.",
    )
    add_build_arguments(p, specs)
    p.set_defaults(func=functools.partial(run_build, specs=specs))


CONVERT_DESCRIPTION = (
    "Convert the released ImageNet-E tree -- flat folders, one per edit ('ori', 'rec', "
    "'20_smooth', '20_hard', '20_adv', 'random_bg', 'full', '01', '008', '005', 'rp', 'rd'; "
    "or our names bg_complex, size_0.05, ...) with labels.txt ('<file>\\t<ImageNet-1k index>') "
    "beside them, or edit folders holding wnid class folders -- into a "
    "Hub dataset repo folder: one config per edit (split 'test'), image bytes unchanged, "
    "label = the ImageNet-1k class, id = the file stem (the same in every edit), "
    "object_pixel_rate (NaN: unknown in the release), edit_params. The folder table, and the "
    "public sources it was checked against, are in dataset_scripts/README.md."
)


def add_convert_arguments(p: argparse.ArgumentParser) -> None:
    """SRC, OUTPUT and the options of ``bgbench convert imagenet-e`` (also dataset_scripts)."""
    p.add_argument("src", type=Path, help="the release folder (the edit folders, or its parent)")
    p.add_argument("output", metavar="OUTPUT", type=Path, help="the Hub repo folder to write")
    p.add_argument(
        "--original",
        type=Path,
        default=None,
        help="the unedited photos (ImageNet val in wnid class folders), when the release has "
        "no 'ori'/'original' folder; only the ids the edits hold are kept",
    )
    p.add_argument(
        "--shared-only",
        action="store_true",
        help="keep only the ids every edit holds (default: edits that differ are an error)",
    )
    p.add_argument("--overwrite", action="store_true", help="replace data/ in the output")
    add_progress_argument(p)


def run_convert(args: argparse.Namespace, spec: BenchmarkSpec) -> int:
    """``bgbench convert imagenet-e`` into the Hub layout of ``spec``."""
    from hf_bgbench.benchmarks.imagenet_e.convert import convert_imagenet_e_release, summary_lines

    report = convert_imagenet_e_release(
        args.src,
        args.output,
        spec=spec,
        original=args.original,
        shared_only=args.shared_only,
        overwrite=args.overwrite,
        progress=not args.quiet,
    )
    for line in summary_lines(report):
        print(line)
    print(f"wrote {args.output} (card: README.md, report: build_report.json)")
    return 0


def register_convert(
    sub: argparse._SubParsersAction, spec: BenchmarkSpec, specs: Sequence[BenchmarkSpec]
) -> None:
    p = sub.add_parser(
        "imagenet-e",
        help="the released ImageNet-E tree (<edit>/<image> + labels.txt)",
        description=CONVERT_DESCRIPTION,
    )
    add_convert_arguments(p)
    p.set_defaults(func=functools.partial(run_convert, spec=spec))
