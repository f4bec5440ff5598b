"""``bgbench publish-results DIR --repo-id OWNER/NAME``: a run's per-image predictions and
results documents as a Hub dataset (:mod:`hf_bgbench.report.results_dataset`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from hf_bgbench.cli._common import human_size


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "publish-results",
        help="push a run's per-image predictions and results to a Hub dataset",
        description=(
            "Upload a `bgbench report` folder, or one task's results folder, to a Hub dataset "
            "repo: runs/<model>/<benchmark>/<task>/ with the results documents and per-image "
            "files, and one dataset config per model x benchmark in the card, so anyone can "
            "re-analyse the predictions or `bgbench compare` against them without re-running."
        ),
    )
    p.add_argument("folder", type=Path, help="report or results folder")
    p.add_argument("--repo-id", required=True, help="the dataset repo, OWNER/NAME")
    p.add_argument("--private", action="store_true", help="create the repo as private")
    p.add_argument("--dry-run", action="store_true", help="list what would be uploaded")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from hf_bgbench.hub.repo_ids import check_repo_id
    from hf_bgbench.report.results_dataset import (
        LOCAL_PATH,
        publish_results,
        publishable,
        results_plan,
    )

    plan, configs = results_plan(args.folder)
    if args.dry_run:  # everything the real run checks, short of the network
        check_repo_id(args.repo_id)
        files, removed = publishable(plan)
        print(f"dry run: would upload to dataset repo {args.repo_id}:")
        for path, local in files:
            size = len(local) if isinstance(local, bytes) else local.stat().st_size
            note = (
                f"  ({removed[path]} path(s) of this machine -> {LOCAL_PATH})"
                if path in removed
                else ""
            )
            print(f"  {path}  {human_size(size)}{note}")
        print(f"configs: {', '.join(c['config_name'] for c in configs)}")
        if removed:
            print(f"paths of this machine are never published: replaced by {LOCAL_PATH}")
        return 0
    url = publish_results(args.folder, args.repo_id, private=args.private)
    print(f"published {len(plan)} files ({', '.join(c['config_name'] for c in configs)}): {url}")
    return 0
