"""``bgbench export lmms-eval`` and ``bgbench export vlmevalkit``: a benchmark as another
harness's tasks (:mod:`hf_bgbench.harnesses`), asked and read by bgbench's own VLM rules."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from hf_bgbench.builders.arguments import positive_int

LMMS_EVAL_HELP = (
    "Write lmms-eval task folders: per benchmark and rule, one task per variant and a group "
    "whose aggregations are the benchmark's gaps (such as BG-GAP). The questions and the "
    "reading of the answers are bgbench's own rules (open, choice-text, or the two-way "
    "question a benchmark's protocol sets). The installed plugin's folder "
    "(hf_bgbench.lmms_eval_plugin.TASKS) holds the same tasks over the Hub datasets; export "
    "them with --data to read a local folder in the Hub layout. Either folder is lmms-eval's "
    "--include_path."
)
VLMEVALKIT_HELP = (
    "Write a benchmark as a VLMEvalKit multiple-choice TSV (index, image as base64 PNG, "
    "question, options A.., answer, category = the variant) and its MD5, for $LMUData: "
    "VLMEvalKit then runs it as a custom dataset with no code."
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export", help="a benchmark as lmms-eval tasks or a VLMEvalKit dataset")
    harness = p.add_subparsers(dest="harness", required=True, metavar="HARNESS")
    lm = harness.add_parser("lmms-eval", help="lmms-eval task folders", description=LMMS_EVAL_HELP)
    lm.add_argument(
        "--benchmark",
        action="append",
        help="a benchmark to export (repeatable; default: every benchmark with a Hub dataset)",
    )
    lm.add_argument(
        "--data",
        help="where the tasks read the data: a local folder in the Hub layout or a Hub dataset "
        "id (default: the benchmark's Hub dataset); needs one --benchmark",
    )
    _output(lm, "bgbench_lmms_eval_tasks", "the folder to write (one per benchmark inside)")
    lm.set_defaults(func=run_lmms_eval)
    vk = harness.add_parser("vlmevalkit", help="a VLMEvalKit TSV", description=VLMEVALKIT_HELP)
    vk.add_argument("--benchmark", required=True, help="the benchmark (`bgbench list` names them)")
    vk.add_argument("--data", required=True, help="its data: a folder or a Hub dataset id")
    vk.add_argument("--variants", nargs="+", help="the variants to write (default: all)")
    vk.add_argument(
        "--name",
        type=dataset_name,
        help="the dataset's name in VLMEvalKit (default: BGBench_<benchmark>)",
    )
    vk.add_argument(
        "--circular",
        type=positive_int,
        default=1,
        help="N: each question N times with its options rotated, in VLMEvalKit's circular "
        "layout (its name then ends in _Circular, which turns VLMEvalKit's circular "
        "evaluation on: an image counts right only if every rotation is)",
    )
    _output(vk, "bgbench_vlmevalkit", "the folder to write the TSV and its .md5 into")
    vk.set_defaults(func=run_vlmevalkit)


def dataset_name(text: str) -> str:
    """A VLMEvalKit dataset name: also the TSV's file name under --output and in $LMUData,
    so a path (``../x``) would write outside --output and name no dataset VLMEvalKit finds."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", text):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a dataset name: VLMEvalKit reads <name>.tsv from $LMUData, so "
            "give letters, digits, '_', '-' and '.' only (no '/'), e.g. BGBench_mine"
        )
    return text


def _output(parser: argparse.ArgumentParser, default: str, what: str) -> None:
    from hf_bgbench.tasks.options import folder_path

    parser.add_argument("--output", type=folder_path, default=Path(default), help=what)


def run_lmms_eval(args: argparse.Namespace) -> int:
    from hf_bgbench.files import check_folder
    from hf_bgbench.harnesses.lmms_eval_tasks import task_data_path, write_tasks

    check_folder(args.output, "--output")

    benchmarks = args.benchmark
    data = None
    if args.data is not None:
        if not benchmarks or len(benchmarks) != 1:
            raise ValueError("--data names one benchmark's data: give exactly one --benchmark.")
        data = task_data_path(benchmarks[0], args.data)
    folders = write_tasks(args.output, benchmarks, data)
    for folder in folders:
        print(f"wrote {folder} ({len(list(folder.glob('*.yaml')))} task and group files)")
    print(
        "run: lmms-eval --model llava_hf --model_args pretrained=<model> "
        f"--include_path {args.output} --tasks <group, e.g. {folders[0].name}_open> "
        "--log_samples --output_path <folder>"
    )
    return 0


def run_vlmevalkit(args: argparse.Namespace) -> int:
    from hf_bgbench.files import check_folder
    from hf_bgbench.harnesses.vlmevalkit import write_tsv

    check_folder(args.output, "--output")

    written = write_tsv(
        args.benchmark, args.data, args.output, args.variants, args.name, args.circular
    )
    print(f"wrote {written.tsv} ({written.rows} questions, md5 {written.md5})")
    print(
        f"run: copy {written.tsv.name} into $LMUData (default ~/LMUData), then "
        f"python run.py --data {written.name} --model <model> (VLMEvalKit)"
    )
    return 0
