"""``bgbench convert in9-release SRC DIR``, ``bgbench convert rival10 SRC DIR`` and ``bgbench
convert imagenet-e SRC DIR``: an official release -> the Hub layout."""

from __future__ import annotations

import argparse
from pathlib import Path

from hf_bgbench.cli._common import add_progress_argument, non_negative_int, positive_int


def run_in9_release(args: argparse.Namespace) -> int:
    from hf_bgbench.benchmarks.in9.convert import convert_in9_release

    report = convert_in9_release(args.src, args.output, overwrite=args.overwrite)
    counts = ", ".join(f"{k} {v}" for k, v in report["per_class"].items())
    print(f"converted {report['kept']} images per variant ({counts}) into {args.output}")
    return 0


def run_rival10(args: argparse.Namespace) -> int:
    import os

    from hf_bgbench.benchmarks.rival10.convert import convert_rival10_release, summary_lines

    workers = args.workers or min(4, os.cpu_count() or 1)
    report = convert_rival10_release(
        args.src,
        args.output,
        workers=workers,
        shard_size=args.shard_size,
        overwrite=args.overwrite,
        progress=not args.quiet,
        keep_work=args.keep_work,
    )
    for line in summary_lines(report):
        print(line)
    print(f"wrote {args.output} (card: README.md, report: build_report.json)")
    return 0


def add_rival10_arguments(p: argparse.ArgumentParser) -> None:
    """SRC, OUTPUT and the options of ``bgbench convert rival10`` (also dataset_scripts)."""
    p.add_argument("src", type=Path, help="the release folder (RIVAL10, or its parent)")
    p.add_argument("output", metavar="OUTPUT", type=Path, help="the Hub repo folder to write")
    p.add_argument(
        "--workers",
        type=non_negative_int,
        default=None,
        help="worker processes, one shard each (default: one per CPU, at most 4)",
    )
    p.add_argument("--shard-size", type=positive_int, default=1000, help="rows per Parquet shard")
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace another conversion or build in OUTPUT (an interrupted conversion of the "
        "same release resumes without it)",
    )
    p.add_argument(
        "--keep-work",
        action="store_true",
        help="keep OUTPUT/.bgbench-work/rival10 (per-shard reports) after success",
    )
    add_progress_argument(p)


def run_imagenet_e(args: argparse.Namespace) -> int:
    from hf_bgbench.benchmarks.imagenet_e.convert import convert_imagenet_e_release, summary_lines

    report = convert_imagenet_e_release(
        args.src,
        args.output,
        original=args.original,
        shared_only=args.shared_only,
        overwrite=args.overwrite,
        progress=not args.quiet,
    )
    for line in summary_lines(report):
        print(line)
    print(f"wrote {args.output} (card: README.md, report: build_report.json)")
    return 0


IMAGENET_E_DESCRIPTION = (
    "Convert the released ImageNet-E tree -- flat folders, one per edit ('ori', 'rec', "
    "'20_smooth', '20_hard', '20_adv', 'random_bg', 'full', '01', '008', '005', 'rp', 'rd'; "
    "or our names bg_complex, size_0.05, ...) with labels.txt ('<file>\\t<ImageNet-1k index>') "
    "beside them, or edit folders holding wnid class folders -- into a "
    "Hub dataset repo folder: one config per edit (split 'test'), image bytes unchanged, "
    "label = the ImageNet-1k class, id = the file stem (the same in every edit), "
    "object_pixel_rate (NaN: unknown in the release), edit_params. The folder table, and the "
    "public sources it was checked against, are in dataset_scripts/README.md."
)


def add_imagenet_e_arguments(p: argparse.ArgumentParser) -> None:
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


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("convert", help="convert a downloaded release into the Hub layout")
    sources = p.add_subparsers(dest="source", required=True, metavar="SOURCE")
    rel = sources.add_parser(
        "in9-release",
        help="the official Backgrounds Challenge release (bg_challenge/<variant>/val/...)",
        description="Convert bg_challenge/<variant>/val/<class-dir>/<stem>.JPEG and "
        "bg_challenge/fg_mask/val/<class-dir>/<stem>.npy into a Hub dataset repo folder "
        "(image bytes unchanged, masks as PNG, one config per variant, split 'test').",
    )
    rel.add_argument("src", type=Path, help="the release folder (bg_challenge or its parent)")
    rel.add_argument("output", metavar="OUTPUT", type=Path, help="the Hub repo folder to write")
    rel.add_argument("--overwrite", action="store_true", help="replace data/ in the output")
    rel.set_defaults(func=run_in9_release)
    rival = sources.add_parser(
        "rival10",
        help="the official RIVAL10 release (RIVAL10/{train,test}/ordinary/...)",
        description="Convert RIVAL10/{train,test}/ordinary/ (images, _attr_labels.npy, "
        "_merged_mask.JPEG, _attr_dict.pkl) into a Hub dataset repo folder: config "
        "'ordinary' (default) with splits train and test; image bytes unchanged; object, "
        "attribute and merged masks as 0/255 PNGs at the image's size (foreground = any "
        "channel != 0); 18 named attributes. Unreadable images are skipped and reported; a "
        "pickle that asks for code stops the conversion. Interrupted conversions resume.",
    )
    add_rival10_arguments(rival)
    rival.set_defaults(func=run_rival10)
    imagenet_e = sources.add_parser(
        "imagenet-e",
        help="the released ImageNet-E tree (<edit>/<image> + labels.txt)",
        description=IMAGENET_E_DESCRIPTION,
    )
    add_imagenet_e_arguments(imagenet_e)
    imagenet_e.set_defaults(func=run_imagenet_e)
