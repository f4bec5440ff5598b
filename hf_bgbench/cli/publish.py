"""``bgbench publish DIR --repo-id OWNER/NAME [--private] [--dry-run]``: a dataset is
published only once ``bgbench validate`` passes, and only privately when its benchmark's
licence forbids redistribution."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from hf_bgbench.cli._common import human_size


def dataset_check(
    benchmark: str | None = None,
    eval_yaml: bool = False,
    force_eval_yaml: bool = False,
    dry_run: bool = False,
) -> Any:
    """The ``check`` :func:`hf_bgbench.hub.publish.publish_folder` runs on a dataset folder:
    ``bgbench validate`` (as ``benchmark``, default: inferred) must pass, and a benchmark
    whose licence forbids redistribution is published only privately.

    With ``eval_yaml`` the folder gets the benchmark's ``eval.yaml`` at its root
    (:mod:`hf_bgbench.hub.eval_yaml`), which registers the published dataset as a Hub
    benchmark -- refused while the framework it names is not listed on the Hub, unless
    ``force_eval_yaml`` (a dry run writes it anyway, for inspection). Without it, an
    ``eval.yaml`` of an earlier publish is refused rather than uploaded unasked."""

    def check(folder: Path, private: bool) -> str | None:
        from hf_bgbench.benchmarks import get_benchmark
        from hf_bgbench.cli.validate import validate
        from hf_bgbench.hub.publish import DatasetInvalidError

        checked = validate(folder, benchmark=benchmark)
        if not checked.ok:
            raise DatasetInvalidError(
                f"{folder} is not published: `bgbench validate` finds {len(checked.problems)} "
                "problem(s):\n  - "
                + "\n  - ".join(checked.problems)
                + f"\nRebuild or fix the folder until `bgbench validate {folder}` says OK."
            )
        validated = checked.benchmark
        if validated and not private and get_benchmark(validated).publish_private_only:
            raise ValueError(
                f"{folder} is {validated}, whose licence forbids redistribution: publish it "
                "only as a private repository (add --private; gate it on the Hub if you share "
                "it with others under the same terms)."
            )
        from hf_bgbench.hub.eval_yaml import check_registration, write_eval_yaml

        if not eval_yaml:
            if (folder / "eval.yaml").exists():
                raise ValueError(
                    f"{folder}/eval.yaml would be uploaded, but --eval-yaml was not given: "
                    "delete it, or add --eval-yaml to (re)write and upload it on purpose."
                )
            return validated
        if not dry_run:
            check_registration(force_eval_yaml)
        if not validated or write_eval_yaml(get_benchmark(validated), folder) is None:
            raise ValueError(
                f"--eval-yaml: {folder} is not a benchmark with leaderboard numbers to declare."
            )
        return validated

    return check


def publish(
    folder: str | Path,
    repo_id: str,
    repo_type: str = "dataset",
    private: bool = False,
    dry_run: bool = False,
    *,
    benchmark: str | None = None,
    eval_yaml: bool = False,
    force_eval_yaml: bool = False,
    token: str | None = None,
    api: Any = None,
) -> Any:
    """:func:`hf_bgbench.hub.publish.publish_folder`, with :func:`dataset_check` for a
    dataset (``benchmark``: the benchmark it is validated as; default: inferred;
    ``eval_yaml``: also register it as a Hub benchmark)."""
    from hf_bgbench.hub.publish import publish_folder

    check = (
        dataset_check(benchmark, eval_yaml, force_eval_yaml, dry_run)
        if repo_type == "dataset"
        else None
    )
    return publish_folder(
        folder, repo_id, repo_type, private, dry_run, check=check, token=token, api=api
    )


def run(args: argparse.Namespace) -> int:
    result = publish(
        args.folder,
        args.repo_id,
        args.repo_type,
        private=args.private,
        dry_run=args.dry_run,
        benchmark=args.benchmark,
        eval_yaml=args.eval_yaml,
        force_eval_yaml=args.force_eval_yaml,
    )
    checked = "the card is valid"
    if result.benchmark:
        checked += f" and `bgbench validate` passes ({result.benchmark})"
    if args.eval_yaml and args.dry_run:
        from hf_bgbench.hub.eval_yaml import EvalYamlRefused, check_registration

        print(f"wrote {Path(args.folder) / 'eval.yaml'} for inspection", end="")
        try:
            check_registration(args.force_eval_yaml)
            print()
        except EvalYamlRefused as err:
            print(f"; a real run would refuse it: {err}")
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
    from hf_bgbench.benchmarks import all_specs

    example = all_specs()[0].hub_repo
    p.add_argument("--repo-id", required=True, help=f"owner/name, e.g. {example}")
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
    p.add_argument(
        "--eval-yaml",
        action="store_true",
        help="also write and upload eval.yaml, which registers the dataset as a Hub benchmark "
        "(its leaderboard tasks: higher-is-better numbers only); refused while the evaluation "
        "framework is not listed on the Hub (docs/hub_benchmark.md)",
    )
    p.add_argument(
        "--force-eval-yaml",
        action="store_true",
        help="with --eval-yaml: upload it even though the framework is not listed yet (the "
        "Hub then shows a metadata error on the dataset page)",
    )
    p.add_argument("--private", action="store_true", help="create the repo private")
    p.add_argument(
        "--dry-run", action="store_true", help="check and validate, list the files; upload nothing"
    )
    p.set_defaults(func=run)
