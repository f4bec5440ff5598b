"""The linear probe (RIVAL10's protocol): accuracy on separable data, seeded and identical
refits, the on-disk cache (no refit on a second call), clear errors, and `bgbench evaluate`
end to end with the probe recorded in results.json."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import numpy as np
import pytest
import torch
from PIL import Image

import hf_bgbench.probe.features as probe
from hf_bgbench.benchmarks import get_benchmark
from hf_bgbench.benchmarks.rival10.labels import rival10_classes
from hf_bgbench.data.hub import HubFolder, configs_yaml, render_card, write_parquet_shards
from hf_bgbench.data.schema import benchmark_features
from hf_bgbench.inference.model_step import ModelStep
from hf_bgbench.labels import imagenet_label_space
from hf_bgbench.models.classifier import Classifier
from hf_bgbench.models.preprocessing import Preprocessing
from hf_bgbench.probe.fit import fit_probe, holdout_split
from hf_bgbench.tasks.evaluate import evaluate_model

SPEC = get_benchmark("rival10")
# Ten well separated colours, one per RIVAL10 class.
PALETTE = np.array(
    [
        (220, 30, 30),
        (30, 200, 30),
        (30, 30, 220),
        (230, 230, 40),
        (220, 40, 220),
        (40, 220, 220),
        (245, 245, 245),
        (20, 20, 20),
        (128, 128, 128),
        (240, 140, 20),
    ],
    dtype=np.float32,
)
OPTS = dict(progress=False, num_workers=0, batch_size=16)


def _rows(split: str, per_class: int, seed: int, skip_class: int | None = None) -> dict:
    """Photos of varying size: a class-coloured object on a random dark background."""
    rng = np.random.default_rng(seed)
    rows: dict[str, list] = {"image": [], "label": [], "id": [], "object_mask": []}
    for label in range(10):
        if label == skip_class:
            continue
        for k in range(per_class):
            h, w = (40, 56) if k % 2 else (56, 40)
            img = rng.uniform(0, 60, (h, w, 3))
            mask = np.zeros((h, w), np.uint8)
            mask[8 : h - 8, 8 : w - 8] = 255
            jitter = rng.uniform(-15, 15, 3)
            img[mask > 0] = np.clip(
                PALETTE[label] + jitter + rng.normal(0, 8, (mask > 0).sum() * 3).reshape(-1, 3),
                0,
                255,
            )
            rows["image"].append(Image.fromarray(img.astype(np.uint8)))
            rows["label"].append(label)
            rows["id"].append(f"{split}_{label}_{k}")
            rows["object_mask"].append(Image.fromarray(mask, "L"))
    return rows


def write_hub(root: Path, splits: dict[str, int], skip_class: int | None = None) -> Path:
    """A RIVAL10 Hub-layout folder: config ``ordinary`` with the given split sizes."""
    features = benchmark_features(rival10_classes(), extra={"object_mask": datasets.Image()})
    for i, (split, per_class) in enumerate(splits.items()):
        rows = _rows(split, per_class, seed=i, skip_class=skip_class if split == "train" else None)
        write_parquet_shards(
            datasets.Dataset.from_dict(rows, features=features), root, "ordinary", split
        )
    meta = {"configs": configs_yaml({"ordinary": list(splits)}, default="ordinary")}
    (root / "README.md").write_text(render_card(meta, "# synthetic RIVAL10"))
    return root


class TinyBackbone(torch.nn.Module):
    """A timm-like random CNN (seeded): forward_features / forward_head(pre_logits=...)."""

    def __init__(self):
        super().__init__()
        gen = torch.Generator().manual_seed(0)
        self.conv = torch.nn.Conv2d(3, 24, 3, padding=1)
        self.fc = torch.nn.Linear(24, 1000)
        with torch.no_grad():
            for p in self.parameters():
                p.copy_(torch.randn(p.shape, generator=gen) * 0.5)
        self.forwards = 0

    def forward_features(self, x):
        self.forwards += len(x)
        return torch.relu(self.conv(x))

    def forward_head(self, x, pre_logits: bool = False):
        x = x.mean((2, 3))
        return x if pre_logits else self.fc(x)

    def forward(self, x):
        return self.forward_head(self.forward_features(x))


def tiny_classifier() -> Classifier:
    pre = Preprocessing((32, 32), 36, (32, 32), "bilinear", (0.5,) * 3, (0.25,) * 3)
    return Classifier(
        model_id="tiny-random-cnn",
        resolved="test:tiny-random-cnn",
        source="timm",
        model=TinyBackbone(),
        preprocessing=pre,
        label_space=imagenet_label_space(),
    )


@pytest.fixture(scope="module")
def hub(tmp_path_factory) -> Path:
    return write_hub(tmp_path_factory.mktemp("rival10_hub"), {"train": 16, "test": 6})


def reader_of(path: Path) -> HubFolder:
    return HubFolder.detect(str(path), SPEC)


def test_probe_separates_coloured_classes(hub, tmp_path):
    clf = probe.probed_classifier(
        tiny_classifier(), SPEC, reader_of(hub), cache_dir=tmp_path, **OPTS
    )
    rec = clf.probe_record
    assert rec["heldout_accuracy"] > 0.95 and rec["train_accuracy"] > 0.95
    assert rec["n_train"] == 160 and rec["heldout_n"] == 20 and rec["input"] == "full"
    assert rec["l2"] in rec["recipe"]["l2_grid"] and rec["seed"] == 0 and not rec["reused"]
    assert clf.model_id == "tiny-random-cnn + linear probe"
    assert clf.label_space.kind == "rival10"
    results = evaluate_model(clf, benchmark="rival10", data=reader_of(hub), use_cache=False, **OPTS)
    assert results["variants"]["ordinary"]["accuracy"] > 0.95
    assert results["variants"]["ordinary"]["n"] == 60


def test_probed_classifier_keeps_backbone_features_and_gradients(hub, tmp_path):
    base = tiny_classifier()
    clf = probe.probed_classifier(base, SPEC, reader_of(hub), cache_dir=tmp_path, **OPTS)
    x = torch.rand(4, 3, 32, 32)
    step = ModelStep(clf, device="cpu")
    assert torch.equal(step.features(x), ModelStep(base, device="cpu").features(x))
    x.requires_grad_(True)
    logits = step.logits_with_grad(x)
    assert logits.shape == (4, 10)
    logits[:, 0].sum().backward()
    assert x.grad is not None and x.grad.abs().sum() > 0
    assert isinstance(step.gradient_module(), torch.nn.Module)
    assert clf.fingerprint != base.fingerprint


def test_same_seed_gives_the_same_head_and_another_seed_another_split():
    gen = torch.Generator().manual_seed(1)
    labels = torch.arange(3).repeat_interleave(30)
    feats = torch.randn(90, 8, generator=gen) + 2.0 * torch.nn.functional.one_hot(labels, 8)
    head_a, rec_a = fit_probe(feats, labels, 3, seed=0)
    head_b, rec_b = fit_probe(feats, labels, 3, seed=0)
    for name, tensor in head_a.tensors().items():
        assert torch.equal(tensor, head_b.tensors()[name]), name
    assert rec_a == rec_b
    assert not torch.equal(holdout_split(labels, 0.1, 0)[1], holdout_split(labels, 0.1, 1)[1])
    held = holdout_split(labels, 0.1, 0)[1]
    assert labels[held].bincount().tolist() == [3, 3, 3]  # stratified: 10% of each class


def test_second_call_reuses_the_cached_head(hub, tmp_path, monkeypatch):
    calls = {"fit": 0, "features": 0}

    def counting(name, fn):
        def wrapper(*args, **kwargs):
            calls[name] += 1
            return fn(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(probe, "fit_probe", counting("fit", probe.fit_probe))
    monkeypatch.setattr(probe, "extract_features", counting("features", probe.extract_features))
    first = probe.probed_classifier(
        tiny_classifier(), SPEC, reader_of(hub), cache_dir=tmp_path, **OPTS
    )
    base = tiny_classifier()
    second = probe.probed_classifier(base, SPEC, reader_of(hub), cache_dir=tmp_path, **OPTS)
    assert calls == {"fit": 1, "features": 1}
    assert base.model.forwards == 0  # not one train image went through the backbone again
    assert second.probe_record["reused"] and not first.probe_record["reused"]
    assert second.fingerprint == first.fingerprint
    for name, tensor in first.model.head.tensors().items():
        assert torch.equal(tensor, second.model.head.tensors()[name])
    folder = Path(second.probe_record["cache_path"])
    assert folder.parent == tmp_path and (folder / "head.safetensors").is_file()
    on_disk = json.loads((folder / "probe.json").read_text())
    assert on_disk["heldout_accuracy"] == first.probe_record["heldout_accuracy"]
    probe.probed_classifier(
        tiny_classifier(), SPEC, reader_of(hub), cache_dir=tmp_path, seed=1, **OPTS
    )
    assert calls == {"fit": 2, "features": 2}  # another seed is another recipe: fitted anew


def test_a_damaged_cached_head_is_fitted_again(hub, tmp_path, monkeypatch, caplog):
    """The head's bytes changed on disk, the file's size kept: the digest written with it
    tells, so the head is fitted again (the same head), saying so."""
    calls = {"fit": 0}
    fit = probe.fit_probe

    def counting(*args, **kwargs):
        calls["fit"] += 1
        return fit(*args, **kwargs)

    monkeypatch.setattr(probe, "fit_probe", counting)
    first = probe.probed_classifier(
        tiny_classifier(), SPEC, reader_of(hub), cache_dir=tmp_path, **OPTS
    )
    weights = Path(first.probe_record["cache_path"]) / "head.safetensors"
    data = bytearray(weights.read_bytes())
    data[-8:] = bytes(8)  # the last two float32 values of the last tensor zeroed
    weights.write_bytes(bytes(data))
    with caplog.at_level("WARNING"):
        again = probe.probed_classifier(
            tiny_classifier(), SPEC, reader_of(hub), cache_dir=tmp_path, **OPTS
        )
    assert "linear-probe cache at " in caplog.text and "digest does not match" in caplog.text
    assert calls["fit"] == 2 and not again.probe_record["reused"]
    for name, tensor in first.model.head.tensors().items():
        assert torch.equal(tensor, again.model.head.tensors()[name])


def test_default_cache_is_under_the_cache_root(hub):
    clf = probe.probed_classifier(tiny_classifier(), SPEC, reader_of(hub), **OPTS)
    assert Path(clf.probe_record["cache_path"]).parent == probe.probes_dir()


def test_no_train_split_is_a_clear_error(tmp_path):
    test_only = write_hub(tmp_path / "test_only", {"test": 2})
    with pytest.raises(probe.ProbeError) as err:
        probe.probed_classifier(tiny_classifier(), SPEC, reader_of(test_only), **OPTS)
    message = str(err.value)
    assert "RIVAL10's probe needs the train split" in message
    assert "only the test split" in message and "--label-map imagenet" in message


def test_release_without_train_split_is_a_clear_error(tmp_path):
    import shutil

    from hf_bgbench.data.sources import resolve_source
    from tests.rival10_fixture import write_rival10_release

    release = write_rival10_release(tmp_path)
    shutil.rmtree(release / "train")
    with pytest.raises(probe.ProbeError) as err:
        probe.probed_classifier(tiny_classifier(), SPEC, resolve_source(release, SPEC), **OPTS)
    message = str(err.value)
    assert "needs the train split" in message and "no train split" in message
    assert "--label-map imagenet" in message


def test_a_class_missing_from_train_is_named(tmp_path):
    data = write_hub(tmp_path / "no_frog", {"train": 2, "test": 1}, skip_class=8)
    with pytest.raises(probe.ProbeError, match=f"has none of {rival10_classes()[8]}"):
        probe.probed_classifier(tiny_classifier(), SPEC, reader_of(data), **OPTS)


def test_empty_train_split_is_a_clear_error(tmp_path):
    data = write_hub(tmp_path / "empty", {"train": 0, "test": 1})
    with pytest.raises(probe.ProbeError, match="split of .* is empty"):
        probe.probed_classifier(tiny_classifier(), SPEC, reader_of(data), **OPTS)


def _tiny_transformers_model(folder: Path) -> Path:
    from transformers import ConvNextImageProcessor, ResNetConfig, ResNetForImageClassification

    torch.manual_seed(0)
    cfg = ResNetConfig(num_labels=1000, hidden_sizes=[8, 16], depths=[1, 1], embedding_size=8)
    ResNetForImageClassification(cfg).save_pretrained(folder)
    ConvNextImageProcessor(size={"shortest_edge": 64}, crop_pct=0.875).save_pretrained(folder)
    return folder


def test_cli_evaluate_rival10_records_the_probe(hub, tmp_path, capsys):
    from hf_bgbench.cli import main

    model = _tiny_transformers_model(tmp_path / "tiny_resnet")
    out = tmp_path / "out"
    argv = ["evaluate", str(model), "--benchmark", "rival10", "--data", str(hub)]
    code = main([*argv, "--output", str(out), "--quiet", "--workers", "0"])
    assert code == 0, capsys.readouterr().err
    results = json.loads((out / "results.json").read_text())
    rec = results["probe"]
    assert results["model"] == f"{model} + linear probe"
    assert results["model_label_space"] == "rival10"
    # the paper protocol's head: the authors' finetuner recipe, its deviations named
    assert results["protocol"]["name"] == "rival10-paper"
    assert rec["recipe"]["name"] == "adam-augmented-v1" and rec["seed"] == 0
    assert rec["normalise"] is False and rec["selected_epoch"] >= 1
    assert set(rec["deviations"]) <= set(results["protocol"]["deviations"])
    assert rec["n_train"] == 160 and 0 <= rec["heldout_accuracy"] <= 1
    assert Path(rec["cache_path"]).is_dir()
    assert results["variants"]["ordinary"]["n"] == 60
    # bgbench-v1 keeps the fast L-BFGS head by name
    code = main(
        [
            *argv,
            "--output",
            str(tmp_path / "v1"),
            "--quiet",
            "--workers",
            "0",
            "--protocol",
            "bgbench-v1",
        ]
    )
    assert code == 0
    v1 = json.loads((tmp_path / "v1" / "results.json").read_text())
    assert v1["probe"]["recipe"]["name"] == "linear-probe-v1"
    assert any("L-BFGS" in d for d in v1["protocol"]["deviations"])
    # no train split: the CLI says so, without a traceback
    test_only = write_hub(tmp_path / "test_only", {"test": 1})
    code = main(
        ["evaluate", str(model), "--benchmark", "rival10", "--data", str(test_only), "--quiet"]
    )
    assert code == 2
    assert "needs the train split" in capsys.readouterr().err


def test_a_head_at_chance_is_named_in_the_results():
    """A head that did not learn (held-out accuracy <= 1.5x chance) makes every number noise:
    the results say so, naming the recipe and the way out."""
    from hf_bgbench.tasks.runner import head_warnings

    record = {"heldout_accuracy": 0.125, "n_fit": 16, "recipe": {"name": "adam-augmented-v1"}}
    (sentence,) = head_warnings(record, num_classes=10)
    assert "did not learn" in sentence and "12.5%" in sentence and "chance 10.0%" in sentence
    assert "adam-augmented-v1" in sentence and "--protocol bgbench-v1" in sentence
    assert head_warnings({**record, "heldout_accuracy": 0.16}, num_classes=10) == []
    assert head_warnings({"l2": 1.0}, num_classes=10) == []


def test_a_headless_backbone_is_scored_through_the_probe(hub, tmp_path, capsys):
    """A backbone without a classification head (timm num_classes=0, as DINOv2 towers are
    published) loads, and RIVAL10's probe protocol scores its features; the probe record
    says which features it probed."""
    import timm
    from timm.models import save_for_hf

    from hf_bgbench.cli import main

    folder = tmp_path / "backbone"
    torch.manual_seed(0)
    save_for_hf(timm.create_model("test_vit", num_classes=0), str(folder), safe_serialization=True)
    out = tmp_path / "out"
    argv = ["evaluate", str(folder), "--benchmark", "rival10", "--data", str(hub)]
    argv += ["--protocol", "bgbench-v1", "--output", str(out), "--quiet", "--workers", "0"]
    assert main(argv) == 0, capsys.readouterr().err
    results = json.loads((out / "results.json").read_text())
    assert results["model_label_space"] == "rival10"
    assert results["probe"]["features"].startswith("the backbone's pooled features")
    assert results["variants"]["ordinary"]["n"] == 60


def test_a_probe_fitted_through_a_runs_decode_pipeline_is_the_loaders_probe(
    hub, tmp_path, monkeypatch
):
    """A run's probe decodes its held-out pass and every training epoch through the run's
    pipeline (its worker started once, no DataLoader per epoch), and fits the same head."""
    from hf_bgbench.data.pipeline import DecodePipeline

    common = dict(progress=False, batch_size=16, recipe="adam-augmented-v1", epochs=2)
    by_loader = probe.probed_classifier(
        tiny_classifier(), SPEC, reader_of(hub), cache_dir=tmp_path / "a", num_workers=0, **common
    )

    def no_loader(*args, **kwargs):
        raise AssertionError("a pass of the probe started a DataLoader of its own")

    monkeypatch.setattr(torch.utils.data, "DataLoader", no_loader)
    with DecodePipeline(1) as pipeline:
        by_pipeline = probe.probed_classifier(
            tiny_classifier(),
            SPEC,
            reader_of(hub),
            cache_dir=tmp_path / "b",
            pipeline=pipeline,
            **common,
        )
        assert pipeline.record()["worker_starts"] == 1
    x = torch.rand(4, 3, 32, 32, generator=torch.Generator().manual_seed(0))
    torch.testing.assert_close(by_pipeline.logits(x), by_loader.logits(x), rtol=0, atol=1e-6)
    same = ("heldout_accuracy", "train_accuracy", "selected_epoch", "n_train")
    assert {k: by_pipeline.probe_record[k] for k in same} == {
        k: by_loader.probe_record[k] for k in same
    }
