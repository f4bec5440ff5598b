"""``bgbench report MODEL``: one background-reliance report card over every benchmark with
data (:mod:`hf_bgbench.report`), optionally opened as a pull request on the model's Hub repo."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hf_bgbench.builders.arguments import non_negative_int, positive_int
from hf_bgbench.cli._common import DEFAULT_MODEL, MODEL_HELP
from hf_bgbench.models.heads import CLASS_SETS


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report",
        help="one report card: every benchmark's headline numbers, beside the published ones",
        description=(
            "Run every benchmark it has data for (its Hub dataset, a `bgbench download`, or "
            "--data NAME=PATH) through the tasks its headlines come from, and write one "
            "report: report.json (every task's results embedded), report.md (a model-card "
            "section: one table and one figure, reliance_profile.png), .eval_results/"
            "<benchmark>.yaml (the Hub's evaluation-results format) and each task's own "
            "folder. A benchmark without data is listed as not run, with the command that "
            "fetches it. Re-running the same command resumes from the tasks' caches."
        ),
    )
    p.add_argument("model", nargs="?", default=DEFAULT_MODEL, help=MODEL_HELP)
    p.add_argument(
        "--data",
        action="append",
        metavar="BENCHMARK=PATH",
        help="data of one benchmark: a built folder, the official release or a Hub id "
        "(repeat for each benchmark; others: the Hub dataset, else a cached download)",
    )
    p.add_argument(
        "--benchmarks", nargs="+", metavar="NAME", help="only these benchmarks (default: all)"
    )
    p.add_argument(
        "--challenge-foregrounds",
        type=positive_int,
        metavar="N",
        help="estimate the Backgrounds Challenge from a seeded sample of N foregrounds, each "
        "against every background (unbiased, with a binomial interval; recorded); "
        "default: every foreground",
    )
    p.add_argument(
        "--task-option",
        action="append",
        metavar="TASK.FLAG=VALUE",
        help="one option of one of the report's tasks, as that task's command takes it: FLAG "
        "is its flag without the dashes, VALUE as the flag reads it (a switch: true or "
        "false; several values: comma-separated), e.g. noise.max-images=200 (repeat for "
        "each; recorded in the task's results). Not the options the report sets itself "
        "(--seed, --data, --output, the model's)",
    )
    p.add_argument(
        "--model-option",
        action="append",
        metavar="FLAG=VALUE",
        help="how the model is reached and scored, for every task, as `bgbench evaluate` "
        "takes the flag (without its dashes): a generative VLM's rule (vlm-protocol=open, "
        "circular=4) or a served model's endpoint (api-base=http://localhost:8000/v1, "
        "api-server=vllm); repeat for each",
    )
    p.add_argument(
        "--seed", type=non_negative_int, default=0, help="seed of every random choice (recorded)"
    )
    p.add_argument(
        "--zero-shot-classes",
        choices=CLASS_SETS,
        default="imagenet",
        help="zero-shot models (CLIP, SigLIP, open_clip): the classes their text head covers "
        "(imagenet = ImageNet's 1000, each benchmark's published mapping then applies; "
        "benchmark = each benchmark's own class names, a named protocol)",
    )
    p.add_argument(
        "--templates",
        default="openai",
        metavar="SET|FILE",
        help="zero-shot models: prompt templates, openai (OpenAI's 80), simple (open_clip's 7) "
        "or a file with one template a line, {} where the class name goes",
    )
    p.add_argument("--checkpoint", help="weights file for a timm architecture given as MODEL")
    p.add_argument("--device", help="cuda / mps / cpu (default: the best available)")
    p.add_argument("--batch-size", type=positive_int, help="images per forward pass")
    p.add_argument("--workers", type=non_negative_int, help="image-decoding worker processes")
    p.add_argument("--quiet", "--no-progress", action="store_true", help="no progress bars")
    p.add_argument("--output", type=Path, default=Path("bgbench_report"), help="report folder")
    p.add_argument(
        "--push-to-hub",
        action="store_true",
        help="open a pull request on the model's Hub repo with .eval_results/ and the card "
        "section (only for scores on the benchmarks' own Hub datasets)",
    )
    p.add_argument(
        "--repo-id", help="the model repo for --push-to-hub (default: MODEL, when a Hub id)"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from hf_bgbench.report.card import parse_data_pairs, run_report
    from hf_bgbench.report.markdown import value_text
    from hf_bgbench.report.task_options import parse_model_options, parse_task_options

    if args.push_to_hub:  # a target that cannot take the report is said before any task runs
        from hf_bgbench.report.hub import check_repo_id

        check_repo_id(args.repo_id or args.model)
    report = run_report(
        args.model,
        args.output,
        data=parse_data_pairs(args.data),
        task_options=parse_task_options(args.task_option, args.benchmarks),
        model_options=parse_model_options(args.model_option),
        benchmarks=args.benchmarks,
        challenge_foregrounds=args.challenge_foregrounds,
        seed=args.seed,
        zero_shot_classes=args.zero_shot_classes,
        templates=args.templates,
        checkpoint=args.checkpoint,
        device=args.device,
        batch_size=args.batch_size,
        num_workers=args.workers,
        progress=not args.quiet,
    )
    width = max(
        (len(f"{r['benchmark_title']} · {r['label']}") for r in report["headlines"]), default=0
    )
    print(f"\nBackground-reliance report: {report['model']}")
    for r in report["headlines"]:
        name = f"{r['benchmark_title']} · {r['label']}"
        which = f" ({r['which']})" if r["which"] else ""
        unit = {"%": " %", "pts": " pts"}.get(r["unit"], "")
        print(f"  {name:<{width}}  {value_text(r)}{unit if r['value'] is not None else ''}{which}")
    for b in report["benchmarks"]:  # each with its own reason (a failed task has no fetch)
        if b["status"] == "not run":
            print(f"  {b['title']}: not run -- {b['reason']} Fetch it: {b['command']}")
        for task, entry in b["tasks"].items():
            if entry["status"] == "failed":
                print(f"  {b['title']} · {task}: failed -- {entry['reason']}")
    hub_files = "".join(f", {name}" for name in report.get("eval_results", []))
    print(f"\nwrote {args.output / 'report.md'}, report.json, reliance_profile.png{hub_files}")
    for w in report.get("eval_results_withheld", []):  # why no leaderboard entry, and what to run
        what = f"{w['benchmark']} {w['task']}"
        print(f"  no Hub eval result for {what}: {w['reason']}. {w['instead']}")
    if not any(t["status"] == "run" for b in report["benchmarks"] for t in b["tasks"].values()):
        # a report card with no score must not pass for one (nor be pushed)
        print(
            "bgbench report: error: nothing ran, so the report holds no score (the reasons "
            "are above and in report.md). Give each benchmark's data as --data NAME=PATH "
            f"(NAME: {', '.join(b['name'] for b in report['benchmarks'])}).",
            file=sys.stderr,
        )
        return 2
    if args.push_to_hub:
        from hf_bgbench.report.hub import push_report

        url = push_report(args.output, repo_id=args.repo_id or args.model)
        print(f"opened {url}")
    return 2 if any(b["status"] == "failed" for b in report["benchmarks"]) else 0
