"""``bgbench publish-space [--repo-id OWNER/NAME] [--dry-run] [--private] [--out DIR]``: stage
the Space (spaces/app.py, its card, a wheel of this package and a requirements.txt that
installs that wheel) and upload it as a Gradio Space
(:mod:`hf_bgbench.cli.publish_space_folder`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from hf_bgbench.cli._common import human_size
from hf_bgbench.cli.publish_space_folder import DEFAULT_HARDWARE, DEFAULT_REPO_ID


def run(args: argparse.Namespace) -> int:
    from hf_bgbench.cli.publish_space_folder import publish_space

    staged = publish_space(
        args.repo_id,
        out_dir=args.out,
        wheel=args.wheel,
        private=args.private,
        dry_run=args.dry_run,
        hardware=args.hardware,
    )
    where = f"in {staged.folder}" if args.out else "in a temporary folder (--out DIR keeps it)"
    if args.dry_run:
        print(f"dry run: staged the Space {where}; would upload to Space {args.repo_id}:")
    else:
        print(f"published the Space staged {where} to {args.repo_id}:")
    for path, size in staged.files:
        print(f"  {path}  {human_size(size)}")
    print(f"{len(staged.files)} files, {human_size(staged.total_bytes)}; the wheel: {staged.wheel}")
    for note in staged.notes:
        print(note)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "publish-space",
        help="upload the bgbench Gradio Space, with a wheel of this package",
        description=(
            "Build a wheel of hf-bgbench from this checkout, stage the Space folder "
            "(app.py, README.md with the Space card, requirements.txt installing the wheel, "
            "wheels/) and upload it to a Gradio Space with huggingface_hub (create_repo "
            "exist_ok, then the folder). Needs network access and a login (hf auth login / "
            "HF_TOKEN), except with --dry-run."
        ),
    )
    p.add_argument(
        "--repo-id", default=DEFAULT_REPO_ID, help="the Space, owner/name (default: %(default)s)"
    )
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        help="stage the Space in this folder and keep it (default: a temporary folder)",
    )
    p.add_argument(
        "--wheel",
        type=Path,
        default=None,
        help="bundle this hf_bgbench wheel instead of building one from the checkout",
    )
    p.add_argument(
        "--hardware",
        default=DEFAULT_HARDWARE,
        help="suggested_hardware in the Space card (default: %(default)s)",
    )
    p.add_argument("--private", action="store_true", help="create the Space private")
    p.add_argument(
        "--dry-run", action="store_true", help="stage the folder and list its files; no upload"
    )
    p.set_defaults(func=run)
