"""bgbench's benchmarks in other harnesses, without them installed: the lmms-eval plugin's
YAML files are the ones its benchmark specs write and load with their functions; the text
each task asks is bgbench's own prompt, rendered by the same chat template; its
``process_results`` reads written answers as bgbench's rules do; the group's aggregation is
the benchmark's gap. The VLMEvalKit export holds every image (bgbench's pixels) once per
rotation, with the right letter and its MD5. (bench/lmms_eval_check.py and
bench/vlmevalkit_check.py run the harnesses themselves.)"""

from __future__ import annotations

import base64
import csv
import hashlib
import importlib.util
import io
from pathlib import Path

import numpy as np
import pytest
import yaml
from PIL import Image

from hf_bgbench.benchmarks import get_benchmark
from hf_bgbench.cli import main
from hf_bgbench.harnesses import lmms_eval_tasks as tasks
from hf_bgbench.harnesses.asking import asked_rule, harness_rules
from hf_bgbench.models.vlm.prompts import render


def _loader(folder: Path) -> type[yaml.SafeLoader]:
    """A YAML loader that resolves ``!function utils.<name>`` from ``folder``'s utils.py, as
    lmms-eval's does."""
    spec = importlib.util.spec_from_file_location(f"utils_{folder.name}", folder / "utils.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    class Loader(yaml.SafeLoader):
        pass

    def function(loader, node):
        name = loader.construct_scalar(node)
        assert name.startswith("utils.")
        return getattr(module, name.removeprefix("utils."))

    Loader.add_constructor("!function", function)
    return Loader


def _task(folder: Path, name: str) -> dict:
    """A task's config with its ``include`` merged, as lmms-eval reads it."""
    loader = _loader(folder)
    config = yaml.load((folder / name).read_text(), Loader=loader)
    if "include" in config:
        base = yaml.load((folder / config.pop("include")).read_text(), Loader=loader)
        config = base | config
    return config


def test_the_packaged_tasks_are_what_the_specs_write():
    from hf_bgbench.lmms_eval_plugin import TASKS

    assert TASKS == tasks.PACKAGED_TASKS
    folders = {p.name for p in tasks.PACKAGED_TASKS.iterdir() if p.is_dir()}
    folders.discard("__pycache__")
    specs = tasks.harness_specs()
    assert folders == {tasks.folder_name(s) for s in specs}
    for spec in specs:
        folder = tasks.PACKAGED_TASKS / tasks.folder_name(spec)
        on_disk = {p.name: p.read_text() for p in folder.iterdir() if p.is_file()}
        assert on_disk == tasks.benchmark_files(spec), (
            f"{folder} is stale: run `bgbench export lmms-eval --output {tasks.PACKAGED_TASKS}`"
        )


@pytest.mark.parametrize("benchmark", ["in9", "rival10", "imagenet-d"])
def test_every_task_loads_and_reports_exactly_its_own_metrics(benchmark):
    spec = get_benchmark(benchmark)
    folder = tasks.PACKAGED_TASKS / tasks.folder_name(spec)
    doc = {"image": Image.new("RGB", (8, 8)), "label": 0, "id": "x", "negative": 1}
    for rule in harness_rules(spec):
        group = yaml.load(
            (folder / f"{tasks.task_name(spec.name, rule)}.yaml").read_text(),
            Loader=_loader(folder),
        )
        assert group["task"] == [tasks.task_name(spec.name, rule, v) for v in spec.variants]
        names = [m["metric"] for m in group.get("aggregate_metric_list", [])]
        # lmms-eval matches a group's metric to its subtasks' by substring
        assert not [a for a in names for b in names if a != b and a in b]
        for variant in spec.variants:
            config = _task(folder, f"{tasks.task_name(spec.name, rule, variant)}.yaml")
            assert config["dataset_path"] == spec.hub_repo and config["dataset_name"] == variant
            assert config["doc_to_visual"](doc)[0].size == (8, 8)
            assert config["doc_to_text"](doc) == asked_rule(spec.name, rule).questions(doc)[0]
            # lmms-eval lists any key process_results gives as a number of the task
            got = config["process_results"](doc, ["anything"])
            assert set(got) == {m["metric"] for m in config["metric_list"]}


def test_the_text_asked_is_bgbenchs_prompt_under_the_same_chat_template(tmp_path):
    from transformers import AutoProcessor

    from tests.vlm_fixtures import write_llava

    processor = AutoProcessor.from_pretrained(write_llava(tmp_path / "llava"))
    doc = {"image": Image.new("RGB", (32, 32)), "label": 3, "id": "x", "negative": 5}
    for benchmark, rule in (("in9", "open"), ("in9", "choice-text"), ("imagenet-d", "pair")):
        functions = tasks.TaskFunctions(benchmark, rule)
        text = functions.doc_to_text(doc)
        # lmms-eval's user turn from doc_to_visual + doc_to_text: the images, then the text
        turn = [{"type": "image", "url": functions.doc_to_visual(doc)[0]}]
        messages = [{"role": "user", "content": [*turn, {"type": "text", "text": text}]}]
        theirs = processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        assert theirs == render(processor, text)  # bgbench's in-process prompt
    assert "D. Reptile" in tasks.TaskFunctions("in9", "choice-text").doc_to_text(doc)


REPTILE = {"label": 3, "id": "r"}
VERDICTS = [
    # (benchmark, rule, doc, answer, accuracy, no_answer)
    ("in9", "open", REPTILE, "Reptile", 1.0, 0.0),
    ("in9", "open", REPTILE, "  a reptile.", 1.0, 0.0),
    ("in9", "open", REPTILE, "Dog", 0.0, 0.0),
    ("in9", "open", REPTILE, "a dog and a bird", 0.0, 1.0),  # two classes: no answer
    ("in9", "open", REPTILE, "", 0.0, 1.0),
    ("in9", "open", REPTILE, None, 0.0, 1.0),  # the wrapper gave nothing
    ("in9", "choice-text", REPTILE, "D", 1.0, 0.0),
    ("in9", "choice-text", REPTILE, "(D)", 1.0, 0.0),
    ("in9", "choice-text", REPTILE, "The answer is D", 1.0, 0.0),
    ("in9", "choice-text", REPTILE, "B.", 0.0, 0.0),
    ("in9", "choice-text", REPTILE, "Reptile", 0.0, 1.0),  # no letter: no answer
    ("in9", "choice-text", REPTILE, "Z", 0.0, 1.0),  # no such option
]


@pytest.mark.parametrize("benchmark, rule, doc, answer, accuracy, no_answer", VERDICTS)
def test_process_results_reads_answers_as_bgbenchs_rules(
    benchmark, rule, doc, answer, accuracy, no_answer
):
    got = tasks.TaskFunctions(benchmark, rule).process_results(doc, [answer], "original")
    assert (got["accuracy"], got["no_answer"]) == (accuracy, no_answer)


def test_the_two_way_question_leaves_out_answers_naming_both_or_neither():
    names = get_benchmark("imagenet-d").label_space.names
    doc = {"label": 0, "negative": 1, "id": "d"}
    first, second = (n.replace("_", " ") for n in names[:2])
    pair = tasks.TaskFunctions("imagenet-d", "pair")
    text = pair.doc_to_text(doc)
    assert names[0] in text and names[1] in text
    assert pair.process_results(doc, [f"It is a {first}."])["accuracy"] == 1.0
    assert pair.process_results(doc, [f"It is a {second}."])["accuracy"] == 0.0
    both = pair.process_results(doc, [f"a {first} or a {second}"], "background")
    assert both["accuracy"] is None and both["no_answer"] == 1.0  # left out, counted
    assert both["drop_background"] is None


def _aggregate(config: dict, results: list[dict]) -> dict[str, float]:
    """A task's numbers as lmms-eval aggregates them (its ``mean`` or the named function)."""
    out = {}
    for metric in config["metric_list"]:
        items = [r[metric["metric"]] for r in results]
        agg = metric["aggregation"]
        out[metric["metric"]] = sum(items) / len(items) if agg == "mean" else agg(items)
    return out


@pytest.mark.parametrize("benchmark, rule", [("in9", "open"), ("imagenet-d", "pair")])
def test_the_groups_gap_is_the_benchmarks_gap(benchmark, rule):
    spec = get_benchmark(benchmark)
    folder = tasks.PACKAGED_TASKS / tasks.folder_name(spec)
    names = spec.label_space.names
    right = names[0].replace("_", " ") if rule == "pair" else "Dog"
    wrong = names[1].replace("_", " ") if rule == "pair" else "Bird"
    rng = np.random.default_rng(0)
    accuracy, terms = {}, {}
    for variant in spec.variants:
        config = _task(folder, f"{tasks.task_name(spec.name, rule, variant)}.yaml")
        hits = rng.random(20) < 0.6
        docs = [{"label": 0, "negative": 1, "id": str(i)} for i in range(20)]
        results = [
            config["process_results"](d, [right if h else wrong])
            for d, h in zip(docs, hits, strict=True)
        ]
        numbers = _aggregate(config, results)
        accuracy[variant] = hits.mean()
        assert numbers["accuracy"] == pytest.approx(hits.mean())
        terms[variant] = numbers
    group = yaml.load(
        (folder / f"{tasks.task_name(spec.name, rule)}.yaml").read_text(), Loader=_loader(folder)
    )
    for agg in group["aggregate_metric_list"]:
        name = agg["metric"]
        values = [t[name] for t in terms.values() if name in t]  # the subtasks that have it
        gap = next(g for g in tasks.gaps(spec) if tasks.identifier(g.name) == name)
        want = accuracy[gap.minuend] - accuracy[gap.subtrahend]
        assert agg["aggregation"](values, [20] * len(values), False) == pytest.approx(want)


def test_export_lmms_eval_points_the_tasks_at_a_local_folder(in9_hub, tmp_path, capsys):
    out = tmp_path / "tasks"
    assert main(["export", "lmms-eval", "--benchmark", "in9", "--data", str(in9_hub),
                 "--output", str(out)]) == 0  # fmt: skip
    assert "--include_path" in capsys.readouterr().out
    config = _task(out / "bgbench_in9", "bgbench_in9_open_mixed_rand.yaml")
    assert config["dataset_path"] == str(in9_hub.resolve())
    files = {p.name for p in (out / "bgbench_in9").iterdir()}
    assert files == set(tasks.benchmark_files(get_benchmark("in9")))


@pytest.mark.parametrize("circular", [1, 3])
def test_the_vlmevalkit_tsv_holds_every_image_once_per_rotation(in9_hub, tmp_path, circular):
    from hf_bgbench.data.sources import resolve_source

    out = tmp_path / "vk"
    argv = ["export", "vlmevalkit", "--benchmark", "in9", "--data", str(in9_hub)]
    assert main([*argv, "--output", str(out), "--circular", str(circular)]) == 0
    name = "BGBench_IN9" + ("_Circular" if circular > 1 else "")
    tsv = out / f"{name}.tsv"
    md5 = (out / f"{name}.tsv.md5").read_text().split()[0]
    assert md5 == hashlib.md5(tsv.read_bytes()).hexdigest()
    with tsv.open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    spec = get_benchmark("in9")
    reader = resolve_source(str(in9_hub), spec)
    images = {(str(r["id"]), v): r for v in spec.variants for r in reader.load(v)}
    assert len(rows) == len(images) * circular
    by_index = {int(r["index"]): r for r in rows}
    names = [n.capitalize() for n in spec.label_space.names]
    for row in rows:
        source = images[(row["bgbench_id"], row["category"])]
        assert row[row["answer"]] == names[source["label"]]  # the letter of the true class
        main_row = by_index[int(row["index"]) % 1_000_000]
        assert row["image"] in (main_row["image"], main_row["index"])  # a rotation points
        pixels = Image.open(io.BytesIO(base64.b64decode(main_row["image"])))
        assert np.array_equal(np.asarray(pixels), np.asarray(source["image"].convert("RGB")))
    if circular > 1:  # each image's rotations put its class under different letters
        letters = {}
        for row in rows:
            letters.setdefault(int(row["index"]) % 1_000_000, set()).add(row["answer"])
        assert all(len(x) == circular for x in letters.values())
