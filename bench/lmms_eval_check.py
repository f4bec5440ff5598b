"""lmms-eval itself runs bgbench's IN-9 tasks (the plugin's YAML) and gets bgbench's numbers.

    python bench/lmms_eval_check.py [--lmms-python PY] [--work DIR] [--rules open,choice-text]

lmms-eval (pinned: LMMS_EVAL_VERSION) runs in its own virtual environment, built once under
``~/.cache/bgbench/lmms-eval-<version>`` on top of this one's packages (only what lmms-eval
adds is installed there; ``--lmms-python`` names another interpreter that has it). On the
tests' tiny LLaVA (224 px, steered so its greedy answer is a class word, or an option letter
for ``choice-text``: which one depends on the image) and the tests' synthetic IN-9 in the Hub
layout, per rule:

1. ``bgbench evaluate <llava> --benchmark in9 --data <folder> --vlm-protocol <rule>``;
2. ``bgbench export lmms-eval --data <folder>``, then
   ``lmms-eval --model llava_hf --include_path <tasks> --tasks bgbench_in9_<rule>``, offline;
3. per document: lmms-eval's answer text against bgbench's, its verdict against bgbench's
   prediction; per variant the accuracies; the group's BG-GAP against bgbench's.

Prints one line per rule and exits 1 on any difference."""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

LMMS_EVAL_VERSION = "0.7.3"
# lmms-eval 0.7.3 imports decord for video and filelock's private _api (gone in filelock 4)
LMMS_EVAL_EXTRAS = ("decord", "filelock<4")
IN9_WORDS = ("Dog", "Bird", "Vehicle", "Reptile", "Carnivore", "Insect", "Primate", "Fish")
LETTERS = tuple("ABCDEFGHI")
TOLERANCE = 1e-9  # results.json keeps 12 decimals


def lmms_python(cache: Path) -> Path:
    """An interpreter with lmms-eval, built once: a venv that sees this one's packages."""
    python = cache / "bin" / "python"
    if python.exists():
        return python
    subprocess.run([sys.executable, "-m", "venv", str(cache)], check=True)
    site = Path(sysconfig.get_paths()["purelib"])
    target = next((cache / "lib").glob("python3*/site-packages"))
    (target / "bgbench_base.pth").write_text(f"import site; site.addsitedir({str(site)!r})\n")
    pip = [str(python), "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, f"lmms-eval=={LMMS_EVAL_VERSION}", *LMMS_EVAL_EXTRAS], check=True)
    return python


def offline_env() -> dict[str, str]:
    return os.environ | {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}


def write_inputs(work: Path) -> tuple[dict[str, Path], Path]:
    """The steered LLaVAs (rule -> folder) and the IN-9 Hub-layout folder."""
    from tests.in9_fixture import write_in9_hub
    from tests.vlm_fixtures import steer_answers, write_llava

    models = {}
    for rule, words in (("open", IN9_WORDS), ("choice-text", LETTERS)):
        folder = work / f"llava-{rule}"
        if not folder.exists():
            steer_answers(write_llava(folder, image_size=224, patch_size=56), words)
        models[rule] = folder
    data = work / "in9" / "hub"
    if not data.exists():
        write_in9_hub(work / "in9")
    return models, data


def run_bgbench(model: Path, data: Path, rule: str, out: Path) -> dict:
    from hf_bgbench.cli import main

    argv = ["evaluate", str(model), "--benchmark", "in9", "--data", str(data), "--quiet"]
    argv += ["--vlm-protocol", rule, "--device", "cpu", "--output", str(out), "--no-cache"]
    if main(argv) != 0:
        raise SystemExit(f"bgbench evaluate failed: {' '.join(argv)}")
    return json.loads((out / "results.json").read_text())


def run_lmms_eval(python: Path, model: Path, tasks: Path, rule: str, out: Path) -> Path:
    group = f"bgbench_in9_{rule.replace('-', '_')}"
    argv = [str(python), "-m", "lmms_eval", "--model", "llava_hf", "--batch_size", "1"]
    argv += ["--model_args", f"pretrained={model},device_map=cpu", "--device", "cpu"]
    argv += ["--include_path", str(tasks), "--tasks", group, "--log_samples"]
    argv += ["--output_path", str(out)]
    shutil.rmtree(out, ignore_errors=True)  # one run's files only
    log = out.with_suffix(".log")
    with log.open("w") as f:
        done = subprocess.run(argv, stdout=f, stderr=subprocess.STDOUT, env=offline_env())
    results = glob.glob(str(out / "*" / "*_results.json"))
    if done.returncode != 0 or not results:
        raise SystemExit(f"lmms-eval failed (exit {done.returncode}); its log: {log}")
    return Path(results[0])


def compare(rule: str, bg_dir: Path, bg: dict, lmms_results: Path, data: Path) -> list[str]:
    """The differences between the two runs (empty: the same answers and numbers)."""
    import datasets
    import pandas as pd

    from hf_bgbench.harnesses.lmms_eval_tasks import task_name

    problems, lines = [], []
    doc = json.loads(lmms_results.read_text())["results"]
    group = doc[task_name("in9", rule)]
    accuracy = {v: row["accuracy"] for v, row in bg["variants"].items()}
    for variant in accuracy:
        ids = datasets.load_dataset(str(data), variant, split="test")["id"]
        (samples,) = glob.glob(
            str(lmms_results.parent / f"*_samples_{task_name('in9', rule, variant)}.jsonl")
        )
        theirs = {
            ids[s["doc_id"]]: s for s in map(json.loads, Path(samples).read_text().splitlines())
        }
        ours = pd.read_parquet(bg_dir / "predictions" / f"{variant}.parquet").set_index("id")
        for i, s in theirs.items():
            answer = ours.loc[i, "answer"]
            answer = answer[0] if not isinstance(answer, str) else answer  # per rotation
            if s["filtered_resps"].strip() != answer:
                problems.append(f"{variant}/{i}: answer {s['filtered_resps']!r} vs {answer!r}")
            if s["accuracy"] != float(ours.loc[i, "pred"] == ours.loc[i, "label"]):
                problems.append(f"{variant}/{i}: verdict differs")
        acc = doc[task_name("in9", rule, variant)]["accuracy,none"]
        if abs(acc - accuracy[variant]) > TOLERANCE:
            problems.append(f"{variant}: accuracy {acc} vs {accuracy[variant]}")
        lines.append(f"{variant} {acc:.4f}/{accuracy[variant]:.4f}")
    gap = group["bg_gap,none"]
    if abs(gap - bg["bg_gap"]) > TOLERANCE:
        problems.append(f"bg_gap {gap} vs {bg['bg_gap']}")
    print(f"{rule}: per-variant accuracy lmms-eval/bgbench: {', '.join(lines)}")
    print(
        f"{rule}: BG-GAP lmms-eval {gap:.4f}, bgbench {bg['bg_gap']:.4f}; documents compared: "
        f"{sum(len(datasets.load_dataset(str(data), v, split='test')) for v in accuracy)}"
    )
    return problems


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--lmms-python", type=Path, help="an interpreter with lmms-eval installed")
    p.add_argument("--work", type=Path, help="a folder for the models, data and runs")
    p.add_argument("--rules", default="open,choice-text")
    args = p.parse_args()
    cache = Path.home() / ".cache" / "bgbench" / f"lmms-eval-{LMMS_EVAL_VERSION}"
    python = args.lmms_python or lmms_python(cache)
    work = args.work or Path(tempfile.mkdtemp(prefix="lmms-eval-check-"))
    os.environ.update(offline_env())
    models, data = write_inputs(work)
    from hf_bgbench.harnesses.lmms_eval_tasks import write_tasks

    tasks = work / "tasks"
    write_tasks(tasks, ["in9"], str(data.resolve()))
    problems = []
    for rule in args.rules.split(","):
        bg = run_bgbench(models[rule], data, rule, work / f"bgbench-{rule}")
        found = run_lmms_eval(python, models[rule], tasks, rule, work / f"lmms-{rule}")
        problems += compare(rule, work / f"bgbench-{rule}", bg, found, data)
    for line in problems[:20]:
        print("DIFFERENT:", line)
    print("same answers and numbers" if not problems else f"{len(problems)} difference(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
