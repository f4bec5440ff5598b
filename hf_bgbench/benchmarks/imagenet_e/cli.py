"""ImageNet-E's sub-commands, declared (the spec's CLI hooks name them): ``bgbench build
imagenet-e`` (the CPU edit set of masked images) and ``bgbench convert imagenet-e`` (the
released tree)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hf_bgbench.benchmarks.imagenet_e.edit_set import CPU_EDITS
from hf_bgbench.builders.arguments import keywords, option, shared_fields
from hf_bgbench.builders.commands import (
    Command,
    output_argument,
    output_folder,
    progress_option,
    release_folder,
    workers_option,
)
from hf_bgbench.edits.geometry import SIZE_METHODS, SIZE_WHOLE
from hf_bgbench.spec import BenchmarkSpec


def size_method_option() -> Any:
    """``--size-method``, one declaration and one default (the authors' whole-photo
    scaling) for ``bgbench build imagenet-e`` and the one-image ``bgbench edit``."""
    return option(
        SIZE_WHOLE,
        "size edits (and position, from the small object): 'whole' scales the whole "
        "photo with its own background about the object's box centre, as the authors' "
        "resize_obj.py, the frame a shrunk photo leaves taken from the inpainted background; "
        "'object' (the earlier CPU recipe) pastes the object alone on the inpainted background "
        "(default: whole)",
        choices=SIZE_METHODS,
    )


def _masked_sources(specs: Sequence[BenchmarkSpec]) -> str:
    """``--from``'s help: the benchmarks whose Hub folders it offers, of ``specs``."""
    offered = [s for s in specs if s.masked_source]
    sources = " or ".join(
        f"'{s.name} DIR' ({s.masked_source}: {s.mask_variant} + {s.mask_column})" for s in offered
    )
    return f"instead of --images/--masks: {sources}"


@dataclass(frozen=True, kw_only=True)
class ImagenetEBuild:
    """Apply the CPU ImageNet-E edit set (backgrounds of other images by complexity, OOD
    textures, object size, position, rotation) to masked images and write one config per edit
    as a Hub dataset repo folder."""

    images: Path | None = option(None, "ImageNet photos (<wnid>/ folders)")
    masks: Path | None = option(None, "their masks, <stem>.png")
    source: tuple[str, str] | None = option(
        None, _masked_sources, flags=("--from",), count=2, metavar=("KIND", "DIR")
    )
    output: Path = output_folder()
    seed: int = option(0, "seed of every random choice")
    runs: int = option(
        1,
        "seeded repetitions of every random edit, seeds --seed, --seed + 1, ... (the "
        "paper averages 5 runs); more than 1: OUTPUT/run-<seed>/ per run, each a complete "
        "build, which `bgbench evaluate --data OUTPUT` scores and averages (default 1: "
        "one build in OUTPUT)",
    )
    workers: int = workers_option("worker processes (0 or 1: in the main process)")
    size: int = option(
        256, "side of the square canvas the edits are made on (default 256: the authors')"
    )
    fit: str = option(
        "resize",
        "photo to canvas: resize the whole photo (the authors'; aspect ratio not kept) or "
        "resize the shorter side and centre crop",
        choices=("resize", "crop"),
    )
    inpaint: str = option("telea", "inpainting", choices=("telea", "ns"))
    size_method: str = size_method_option()
    blend: str = option(
        "alpha",
        "how objects are pasted: a hard alpha paste (the authors' composite before their "
        "diffusion blending; default) or Poisson blending at the seam (the earlier default)",
        choices=("alpha", "poisson"),
    )
    image_format: str = option("jpeg", "encoding", choices=("jpeg", "png"))
    shard_size: int = option(500, "images per Parquet shard")
    max_angle: float = option(
        45.0, "rotation: θ an integer drawn uniformly in [-a, a] degrees (default 45: the authors')"
    )
    edits: str | None = option(
        None,
        f"comma-separated edits to write (default: {','.join(CPU_EDITS)}; with "
        "--diffusion-model also bg_inversion, and bg_complex_adv with --adv-model)",
    )
    diffusion_model: str | None = option(
        None,
        "a diffusers UNet (+ scheduler) folder or Hub id: the background edits are then made "
        'by diffusion guidance as in the paper (needs pip install "hf-bgbench[diffusion]")',
        metavar="PATH_OR_ID",
    )
    diffusion_steps: int = option(20, "DDIM steps of the schedule")
    diffusion_strength: float = option(0.5, "fraction of the schedule used")
    diffusion_start: str = option(
        "invert",
        "DDIM inversion or seeded forward noise of the inpainted background",
        choices=("invert", "noise"),
    )
    adv_model: str = option("", "bg_complex_adv: the ImageNet-1k classifier")
    adv_scale: float = option(10.0, "bg_complex_adv: its weight")
    device: str = option("auto", "device of the diffusion edits (auto, cpu, ...)")
    overwrite: bool = option(False, "replace a different earlier build")
    keep_work: bool = option(False, "keep the per-image cache")
    progress: bool = progress_option()


def build(options: ImagenetEBuild, spec: BenchmarkSpec, specs: Sequence[BenchmarkSpec]) -> int:
    """``bgbench build imagenet-e`` (``specs``: the benchmarks whose Hub folders ``--from``
    reads)."""
    from hf_bgbench.benchmarks.imagenet_e.build import EditBuildOptions, build_imagenet_e
    from hf_bgbench.benchmarks.imagenet_e.sources import from_folders, from_hub, hub_sources

    sources = hub_sources(specs)
    if options.source is not None:
        if options.images is not None or options.masks is not None:
            raise ValueError("Give either --images/--masks or --from KIND DIR, not both.")
        source = from_hub(options.source[0], Path(options.source[1]), sources)
    elif options.images is None or options.masks is None:
        raise ValueError(f"Give --images DIR and --masks DIR, or --from {'|'.join(sources)} DIR.")
    else:
        source = from_folders(options.images, options.masks)
    diffusion, edits = None, CPU_EDITS
    if options.diffusion_model:
        from hf_bgbench.benchmarks.imagenet_e.diffusion import DiffusionSettings
        from hf_bgbench.models.devices import resolve_device

        diffusion = DiffusionSettings(
            model=options.diffusion_model,
            steps=options.diffusion_steps,
            strength=options.diffusion_strength,
            start=options.diffusion_start,
            adv_model=options.adv_model,
            adv_scale=options.adv_scale,
            device=str(resolve_device(options.device)),
        )
        edits = (*CPU_EDITS, "bg_inversion", *(("bg_complex_adv",) if options.adv_model else ()))
    if options.edits is not None:
        edits = tuple(e.strip() for e in options.edits.split(",") if e.strip())
    chosen = shared_fields(
        options, EditBuildOptions, method=options.inpaint, edits=edits, diffusion=diffusion
    )
    report = build_imagenet_e(source, EditBuildOptions(**chosen))
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
            f"wrote {options.output}: {len(report['runs'])} runs, "
            + ", ".join(f"{name}/ (seed {run['seed']})" for name, run in report["runs"].items())
            + ", each a complete build; card README.md, build_report.json"
        )
    else:
        print(f"wrote {options.output} (card README.md, build_report.json)")
    return 0


BUILD = Command(
    "imagenet-e", "ImageNet-E-style edits of masked images, on the CPU", ImagenetEBuild, build
)


@dataclass(frozen=True, kw_only=True)
class ImagenetERelease:
    """Convert the released ImageNet-E tree -- flat folders, one per edit ('ori', 'rec',
    '20_smooth', '20_hard', '20_adv', 'random_bg', 'full', '01', '008', '005', 'rp', 'rd'; or
    our names bg_complex, size_0.05, ...) with labels.txt ('<file>\\t<ImageNet-1k index>')
    beside them, or edit folders holding wnid class folders -- into a Hub dataset repo folder:
    one config per edit (split 'test'), image bytes unchanged, label = the ImageNet-1k class,
    id = the file stem (the same in every edit), object_pixel_rate (NaN: unknown in the
    release), edit_params. The folder table, and the public sources it was checked against,
    are in dataset_scripts/README.md.

    The same options serve dataset_scripts/imagenet_e.py."""

    src: Path = release_folder("the edit folders, or its parent")
    output: Path = output_argument()
    original: Path | None = option(
        None,
        "the unedited photos (ImageNet val in wnid class folders), when the release has "
        "no 'ori'/'original' folder; only the ids the edits hold are kept",
    )
    shared_only: bool = option(
        False, "keep only the ids every edit holds (default: edits that differ are an error)"
    )
    overwrite: bool = option(False, "replace data/ in the output")
    progress: bool = progress_option()


def convert(options: ImagenetERelease, spec: BenchmarkSpec, specs: Sequence[BenchmarkSpec]) -> int:
    """``bgbench convert imagenet-e`` into the Hub layout of ``spec``."""
    from hf_bgbench.benchmarks.imagenet_e.convert import convert_imagenet_e_release, summary_lines

    report = convert_imagenet_e_release(**keywords(options), spec=spec)
    for line in summary_lines(report):
        print(line)
    print(f"wrote {options.output} (card: README.md, report: build_report.json)")
    return 0


CONVERT = Command(
    "imagenet-e",
    "the released ImageNet-E tree (<edit>/<image> + labels.txt)",
    ImagenetERelease,
    convert,
)
