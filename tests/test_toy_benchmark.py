"""A new benchmark is a spec + a reader: a toy one runs through `bgbench evaluate` with a metric
of its own, without any change to the tasks, the renderer or the CLI.

Hand computation: the model answers "blue" for every image (all weights zero but the head's
bias). ``clean`` holds 2 red, 2 green, 2 blue images -> accuracy 2/6; ``blue_heavy`` holds
3 blue and 1 red -> 3/4. The toy's own metric ``blue_lift`` = acc(blue_heavy) − acc(clean)
= 3/4 − 1/3 = 5/12 = 41.7 points.
"""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pytest
import torch
import yaml
from PIL import Image

from hf_bgbench.benchmarks import BenchmarkSpec, register, unregister
from hf_bgbench.cli import main
from hf_bgbench.data.schema import ID, IMAGE, LABEL, benchmark_features
from hf_bgbench.data.sources import Reader
from hf_bgbench.labels import LabelSpace
from hf_bgbench.results import SCHEMA_VERSION
from hf_bgbench.scoring import FrameMetric

CLASSES = ("red", "green", "blue")
COLOURS = {"red": (220, 20, 20), "green": (20, 200, 20), "blue": (20, 20, 220)}
LAYOUT = {
    "clean": ["red", "red", "green", "green", "blue", "blue"],
    "blue_heavy": ["blue", "blue", "blue", "red"],
}


class ToyReader(Reader):
    """The toy's own release layout: ``toy.json`` {variant: [[file, class name], ...]}."""

    kind = "toy-release"
    layout_hint = "a toy release (toy.json)"

    @classmethod
    def detect(cls, data: str, spec):
        index = Path(data) / "toy.json"
        if not index.is_file():
            return None
        return cls(str(Path(data).resolve()), list(json.loads(index.read_text())), spec)

    def _load(self, variant, columns, split):
        rows = json.loads((Path(self.location) / "toy.json").read_text())[variant]
        return datasets.Dataset.from_dict(
            {
                IMAGE: [str(Path(self.location) / f) for f, _ in rows],
                LABEL: [CLASSES.index(c) for _, c in rows],
                ID: [Path(f).stem for f, _ in rows],
            },
            features=benchmark_features(CLASSES),
        )


def _blue_lift(frames) -> float:
    def acc(frame):
        return float((frame["pred"] == frame["label"]).mean())

    return acc(frames["blue_heavy"]) - acc(frames["clean"])


TOY = BenchmarkSpec(
    name="toy",
    title="Toy colours",
    label_space=LabelSpace("toy", CLASSES),
    variants=tuple(LAYOUT),
    reference_variant="clean",
    hub_repo="bgbench/toy",
    metrics=(
        FrameMetric(
            "blue_lift",
            "blue lift (blue_heavy − clean)",
            _blue_lift,
            variants=("clean", "blue_heavy"),
            unit="pts",
            headline=True,
        ),
    ),
    readers=("tests.test_toy_benchmark:ToyReader",),
)


@pytest.fixture
def toy_benchmark():
    register(TOY)
    yield TOY
    unregister("toy")


def _write_toy_release(root: Path) -> Path:
    index = {}
    for variant, names in LAYOUT.items():
        rows = []
        for i, name in enumerate(names):
            rel = f"{variant}/{variant}_{i}.png"
            (root / variant).mkdir(parents=True, exist_ok=True)
            Image.new("RGB", (32, 32), COLOURS[name]).save(root / rel)
            rows.append([rel, name])
        index[variant] = rows
    (root / "toy.json").write_text(json.dumps(index))
    return root


def _always_blue_model(folder: Path) -> Path:
    from transformers import ConvNextImageProcessor, ResNetConfig, ResNetForImageClassification

    cfg = ResNetConfig(
        num_labels=3,
        hidden_sizes=[8, 16],
        depths=[1, 1],
        embedding_size=8,
        id2label=dict(enumerate(CLASSES)),
        label2id={n: i for i, n in enumerate(CLASSES)},
    )
    model = ResNetForImageClassification(cfg)
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
        model.classifier[-1].bias.copy_(torch.tensor([0.0, 0.0, 1.0]))
    model.save_pretrained(folder)
    ConvNextImageProcessor(size={"shortest_edge": 224}).save_pretrained(folder)
    return folder


def test_toy_benchmark_runs_through_the_cli_with_its_own_metric(toy_benchmark, tmp_path):
    data = _write_toy_release(tmp_path / "toy_release")
    model = _always_blue_model(tmp_path / "always_blue")
    out = tmp_path / "out"
    argv = ["evaluate", str(model), "--benchmark", "toy", "--data", str(data)]
    code = main([*argv, "--output", str(out), "--quiet", "--workers", "0", "--no-cache"])
    assert code == 0
    results = json.loads((out / "results.json").read_text())
    assert results["schema_version"] == SCHEMA_VERSION and results["task"] == "evaluate"
    assert results["benchmark"] == "toy" and results["data"]["kind"] == "toy-release"
    assert results["variants"]["clean"]["accuracy"] == pytest.approx(2 / 6)
    assert results["variants"]["blue_heavy"]["accuracy"] == pytest.approx(3 / 4)
    assert results["blue_lift"] == pytest.approx(3 / 4 - 1 / 3)
    assert "bg_gap" not in results  # IN-9's metrics stay IN-9's
    assert results["protocol_deviations"] == []  # 32x32 fed as they are: a CNN accepts them
    md = (out / "results.md").read_text()
    assert "**blue lift (blue_heavy − clean) = 41.7 points**" in md
    index = yaml.safe_load((out / "results_model_index.yaml").read_text())["model-index"][0]
    metrics = {
        (r["dataset"].get("config"), m["type"]): m["value"]
        for r in index["results"]
        for m in r["metrics"]
    }
    assert metrics[(None, "blue_lift")] == pytest.approx(41.67)
    assert metrics[("clean", "accuracy")] == pytest.approx(33.33)
    # a local release is named by its fingerprint, never as the Hub dataset bgbench/toy
    local = f"local-{results['data']['fingerprint']}"
    assert {r["dataset"]["type"] for r in index["results"]} == {local}
    assert all(
        "a local copy, not the published dataset" in r["dataset"]["name"] for r in index["results"]
    )


def test_a_task_the_benchmark_does_not_declare_is_refused(toy_benchmark, tmp_path, capsys):
    data = _write_toy_release(tmp_path / "toy_release")
    code = main(["challenge", "tf_efficientnet_lite0", "--benchmark", "toy", "--data", str(data)])
    assert code == 2
    assert "does not apply to benchmark 'toy'; it offers: evaluate" in capsys.readouterr().err
