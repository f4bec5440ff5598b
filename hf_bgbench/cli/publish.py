"""``bgbench publish DIR --repo-id bgbench/in9 [--private] [--dry-run]``."""

from __future__ import annotations

import argparse
from pathlib import Path

from hf_bgbench.cli._common import human_size


def run(args: argparse.Namespace) -> int:
    from hf_bgbench.hub.publish import publish_folder

    result = publish_folder(
        args.folder,
        args.repo_id,
        args.repo_type,
        private=args.private,
        dry_run=args.dry_run,
        benchmark=args.benchmark,
    )
    checked = "the card is valid"
    if result.benchmark:
        checked += f" and `bgbench validate` passes ({result.benchmark})"
    if args.dry_run:
        print(f"dry run: {checked}; would upload to {args.repo_type} repo {args.repo_id}:")
        for path, size in result.files:
            print(f"  {path}  {human_size(size)}")
        print(f"{len(result.files)} files, {human_size(result.total_bytes)}")
    else:
        size = human_size(result.total_bytes)
        print(f"published {len(result.files)} files ({size}) to {result.url}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "publish",
        help="upload a repo folder to the Hugging Face Hub",
        description="Check the card (and, for a dataset, everything `bgbench validate` "
        "checks; a folder it rejects is refused), create the repo (exist_ok) and upload the "
        "folder with huggingface_hub. Needs network access and a login (hf auth login / "
        "HF_TOKEN).",
    )
    p.add_argument("folder", type=Path, help="the repo folder (e.g. a bgbench build output)")
    p.add_argument("--repo-id", required=True, help="owner/name, e.g. bgbench/in9")
    p.add_argument(
        "--repo-type",
        choices=("dataset", "space", "model"),
        default="dataset",
        help="the kind of Hub repo; a dataset is validated before upload",
    )
    p.add_argument(
        "--benchmark",
        default=None,
        help="benchmark a dataset is validated as (default: inferred from its labels)",
    )
    p.add_argument("--private", action="store_true", help="create the repo private")
    p.add_argument(
        "--dry-run", action="store_true", help="check and validate, list the files; upload nothing"
    )
    p.set_defaults(func=run)
