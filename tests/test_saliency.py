"""The saliency task (hf_bgbench.tasks.saliency, hf_bgbench.inference.cam) on models whose Grad-CAM
is
known by construction.

:class:`GreyNet` is a hand-built CNN on the synthetic IN-9 of tests/in9_fixture.py: its only
feature map ``act`` is ~1 on grey pixels and 0 on the palette colours (``look="object"``) or
the reverse (``look="background"``), and every logit is a positive multiple of that map's
mean. In ``original`` the k=1 images hold a GREY square object (the mask) on a coloured
background; the k=0 images are one colour throughout (the object's colour is the
background's), so their map is constant and grad-cam's min-max scaling makes it all zero.
Hence, per k=1 image: object net -> saliency inside the mask ~1, IoU ~1, delta density ~1;
background net -> inside ~0, IoU 0, delta density ~-1. Per k=0 image: no saliency (share
inside undefined, delta density 0).
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pandas as pd
import pytest
import timm
import torch
from PIL import Image

from hf_bgbench.benchmarks.in9.labels import imagenet_to_in9, in9_classes
from hf_bgbench.cli import main
from hf_bgbench.data.loader import Geometry
from hf_bgbench.inference.cam import CamRunner, ClassTarget, TargetLayerError, choose_target_layer
from hf_bgbench.inference.model_step import ModelStep
from hf_bgbench.labels import LabelSpace, imagenet_label_space
from hf_bgbench.metrics.saliency import bootstrap_mean_interval, class_mean_interval
from hf_bgbench.tasks.saliency import SALIENCY_OUTPUTS, run_saliency
from hf_bgbench.tasks.saliency.summary import RESULT_KEYS, SCORES, summarize
from tests.in9_fixture import _Preprocessing, image_id, write_release


class GreyNet(torch.nn.Module):
    def __init__(self, look: str = "object", num_classes: int = 9):
        super().__init__()
        self.dev = torch.nn.Conv2d(3, 6, 1)  # relu(+-(x - 0.5)) per channel = |x - 0.5|
        self.grey = torch.nn.Conv2d(6, 1, 1)
        self.act = torch.nn.ReLU()
        self.fc = torch.nn.Linear(1, num_classes)
        with torch.no_grad():
            self.dev.weight.zero_()
            for c in range(3):
                self.dev.weight[c, c], self.dev.bias[c] = 1.0, -0.5
                self.dev.weight[3 + c, c], self.dev.bias[3 + c] = -1.0, 0.5
            obj = look == "object"
            self.grey.weight.fill_(-5.0 if obj else 5.0)
            self.grey.bias.fill_(1.0 if obj else -0.5)
            self.fc.weight.copy_(torch.arange(1.0, num_classes + 1)[:, None])
            self.fc.bias.zero_()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.act(self.grey(torch.relu(self.dev(x)))).mean(dim=(2, 3)))


class GreyClassifier:
    """The classifier interface around GreyNet (identity normalisation)."""

    def __init__(self, look: str = "object", space: str = "in9"):
        imagenet = space == "imagenet-1k"
        self.model = GreyNet(look, 1000 if imagenet else 9)
        self.label_space = (
            imagenet_label_space() if imagenet else LabelSpace("in9", tuple(in9_classes()[0]))
        )
        self.model_id = self.resolved = f"grey-{look}-{space}"
        self.preprocessing = _Preprocessing()
        self.fingerprint = hashlib.sha256(self.model_id.encode()).hexdigest()[:16]

    def to(self, device):
        self.model.to(device)
        return self

    def logits(self, x: torch.Tensor) -> torch.Tensor:
        return self.model(x)


GREY = [image_id(y, 1) for y in range(9)]  # the images with a visible (grey) object


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    return write_release(tmp_path_factory.mktemp("in9_sal"), variants=("original",))


def _run(release, look="object", space="in9", **kw):
    kw.setdefault("progress", False)
    kw.setdefault("num_workers", 0)
    kw.setdefault("batch_size", 5)
    return run_saliency(GreyClassifier(look, space), str(release), **kw)


def _frame(folder) -> pd.DataFrame:
    return pd.read_parquet(folder / "saliency_per_image.parquet").set_index("id")


def test_saliency_of_a_known_object_detector_lands_inside_the_mask(release, tmp_path):
    doc = _run(release, output_dir=tmp_path)
    assert doc["target_layer"] == {"name": "act", "layout": "NCHW", "auto": True}
    frame = _frame(tmp_path)
    assert len(frame) == 18
    grey = frame.loc[GREY]
    assert (grey["saliency_fraction_inside"] > 0.98).all()
    assert (grey["saliency_iou"] > 0.95).all()
    assert (grey["delta_density"] > 0.9).all()
    plain = frame.drop(index=GREY)  # one colour throughout: no saliency anywhere
    assert plain["saliency_fraction_inside"].isna().all()
    assert (plain["delta_density"] == 0).all() and (plain["saliency_iou"] == 0).all()
    area = 80 * 80 / 224**2
    assert (grey["saliency_average_precision"] > 0.95).all()
    assert (grey["saliency_recall_25"] > 0.7).all()
    assert (grey["saliency_recall_25"] >= grey["saliency_recall_75"]).all()
    # a blank map ranks nothing (AP = the mask's area) and selects nothing (coverage 0)
    assert plain["saliency_average_precision"].to_numpy() == pytest.approx(area, abs=1e-9)
    recalls = plain[["saliency_recall_25", "saliency_recall_50", "saliency_recall_75"]]
    assert (recalls.to_numpy() == 0).all()
    assert doc["n_undefined"] == {
        "delta_density": 0,
        "saliency_fraction_inside": 9,
        "saliency_iou": 0,
        "saliency_average_precision": 0,
        "saliency_recall_25": 0,
        "saliency_recall_50": 0,
        "saliency_recall_75": 0,
    }
    # every logit is a positive multiple of the map's mean: the grey images are predicted
    # class 8 (fish), the blank ones class 0 (dog, the first of nine tied zero logits)
    assert set(frame.loc[GREY, "pred"]) == {8} and set(plain["pred"]) == {0}
    assert doc["n_classes"]["delta_density"] == 2 and doc["n_predicted_classes"] == 2
    assert doc["n_classes"]["saliency_fraction_inside"] == 1  # class 0: no saliency at all
    for key in SCORES:
        by_pred = frame.groupby("pred")[key].mean()  # pandas skips NaN, like np.nanmean
        assert doc[key] == pytest.approx(by_pred.dropna().mean())
        assert doc[f"{key}_image_mean"] == pytest.approx(frame[key].mean())
    # class dog's blank maps all score delta density 0: resampling within the class cannot
    # vary it, so the class-mean interval is withheld, with the reason, not shown too narrow
    assert doc["delta_density_ci95"] is None
    assert "class 'dog' has the same value" in doc["intervals_withheld"]["delta_density"]
    lo, hi = doc["delta_density_image_mean_ci95"]
    assert lo < doc["delta_density_image_mean"] < hi
    assert doc["mask_area"] == pytest.approx(area, abs=1e-9)
    per_class = doc["per_predicted_class"]
    assert (per_class["dog"]["n"], per_class["fish"]["n"], per_class["bird"]["n"]) == (9, 9, 0)
    assert per_class["fish"]["n_correct"] == 1 and per_class["bird"]["delta_density"] is None
    assert per_class["fish"]["saliency_average_precision"] == pytest.approx(
        grey["saliency_average_precision"].mean()
    )


def test_numbers_do_not_depend_on_the_batch_size(release, tmp_path):
    small = _run(release, output_dir=tmp_path / "small")
    default = _run(release, output_dir=tmp_path / "default", batch_size=None, device="cpu")
    assert (small["settings"]["batch_size"], default["settings"]["batch_size"]) == (5, 8)
    pd.testing.assert_frame_equal(
        _frame(tmp_path / "small"), _frame(tmp_path / "default"), check_exact=False, atol=1e-5
    )
    assert default["delta_density"] == pytest.approx(small["delta_density"], abs=1e-6)


def test_a_background_detector_is_caught_and_its_images_fill_the_gallery(release, tmp_path):
    doc = _run(release, look="background", output_dir=tmp_path, gallery=4)
    frame = _frame(tmp_path)
    grey = frame.loc[GREY]
    assert (grey["saliency_fraction_inside"] < 0.02).all()
    assert (grey["saliency_iou"] == 0).all()
    assert (grey["delta_density"] < -0.9).all()
    assert (grey["saliency_average_precision"] < 0.2).all()  # the object ranks last
    assert (grey["saliency_recall_25"] < 0.05).all()
    shown = frame.loc[doc["gallery_ids"], "delta_density"].tolist()
    assert shown == sorted(frame["delta_density"])[:4]  # the lowest delta density, in order
    assert set(doc["gallery_ids"]) <= set(GREY)
    gallery = Image.open(tmp_path / "saliency_gallery.png")
    assert gallery.size[0] > 600 and gallery.size[1] > 300
    assert doc["delta_density"] < 0 and doc["delta_density_ci95"][1] < 0.0


def test_outputs_follow_the_one_results_format(release, tmp_path):
    stale = tmp_path / "saliency_gallery.png"
    stale.write_bytes(b"old")
    doc = _run(release, output_dir=tmp_path, gallery=0, max_images=7, seed=3)
    assert stale.exists() is False  # no gallery this time: the old one is removed
    written = {p.name for p in tmp_path.iterdir()}
    assert written == set(SALIENCY_OUTPUTS) - {"saliency_gallery.png"}
    saved = json.loads((tmp_path / "saliency.json").read_text())
    assert saved["task"] == "saliency" and saved["benchmark"] == "in9"
    assert saved["n_images"] == 7 and len(saved["subset"]["ids"]) == 7
    assert saved["subset"]["ids"] == doc["subset"]["ids"]
    again = _run(release, max_images=7, seed=3)
    assert again["subset"]["ids"] == doc["subset"]["ids"]
    assert _run(release, max_images=7, seed=4)["subset"]["ids"] != doc["subset"]["ids"]
    keys = [s["key"] for s in saved["report"]["scores"]]
    assert keys == [
        "delta_density",
        "saliency_fraction_inside",
        "saliency_iou",
        "saliency_average_precision",
        "saliency_recall_25",
    ]
    start = list(saved).index("target")
    assert list(saved)[start : start + len(RESULT_KEYS)] == RESULT_KEYS
    assert saved["settings"]["bootstrap"] == {"resamples": 1000, "seed": 3}
    markdown = (tmp_path / "saliency.md").read_text()
    assert "Per predicted class" in markdown and "| grey-object-in9 |" in markdown
    assert "mean over predicted classes" in markdown and "Mean over images" in markdown
    assert "AP (%)" in markdown and "Recall@25 (%)" in markdown
    assert "model-index" in (tmp_path / "saliency_model_index.yaml").read_text()
    frame = pd.read_parquet(tmp_path / "saliency_per_image.parquet")
    assert list(frame.columns)[:4] == ["id", "label", "target_class", "target_class_name"]
    assert set(SCORES) <= set(frame.columns)
    assert Image.open(tmp_path / "saliency.png").size[0] > 300


def _authors_number(values, preds, num_classes):
    """saliency_alignment_plots.gen_heatmap written out: per predicted class np.nanmean of
    its images' scores, then the average over the classes (those with a value)."""
    class_means = []
    for c in range(num_classes):
        scores = [v for v, p in zip(values, preds, strict=True) if p == c]
        if scores and not all(np.isnan(scores)):
            class_means.append(np.nanmean(scores))
    return sum(class_means) / len(class_means)


def test_summary_is_the_authors_mean_over_predicted_classes():
    """Hand-made per-image scores, class-imbalanced on purpose: class 0 is predicted for 6
    images, class 1 for 2, class 2 for 1, class 3 never; one image is predicted outside the
    benchmark (-1). The headline is the mean of the class means; the image mean differs."""
    from types import SimpleNamespace

    nan = float("nan")
    preds = [0, 0, 0, 0, 0, 0, 1, 1, 2, -1]
    labels = [0, 0, 1, 0, 0, 0, 1, 0, 3, 2]
    per_image = {
        "delta": [0.9, 0.8, 1.0, 0.7, 0.9, 0.6, -0.2, 0.0, 0.5, 0.3],
        "inside": [0.9, nan, 0.8, 0.95, 0.85, 0.9, 0.1, 0.3, nan, 0.5],
        "iou": [0.7, 0.6, 0.8, 0.5, 0.7, 0.6, 0.0, 0.1, 0.2, 0.9],
        "ap": [0.9, 0.85, 0.95, 0.8, 0.9, 0.7, 0.15, 0.2, 0.4, 0.6],
        "coverage_25": [0.5, 0.4, 0.6, 0.3, 0.5, 0.4, 0.0, 0.05, 0.2, 0.3],
        "coverage_50": [0.7, 0.6, 0.8, 0.5, 0.7, 0.6, 0.1, 0.1, 0.4, 0.5],
        "coverage_75": [0.9, 0.8, 0.9, 0.7, 0.9, 0.8, 0.2, 0.3, 0.6, 0.7],
    }
    out = {
        "labels": labels,
        "pred": preds,
        "mask_area": [0.2] * 10,
        "attributes": [],
        "gallery": [],
        **per_image,
    }
    spec = SimpleNamespace(classes=("a", "b", "c", "d"))
    body = summarize(spec, out, seed=5, resamples=300)
    for key, src in SCORES.items():
        expected = _authors_number(per_image[src], preds, 4)
        assert body[key] == pytest.approx(expected, abs=1e-12)
        assert body[f"{key}_image_mean"] == pytest.approx(np.nanmean(per_image[src]))
        assert body[key] != pytest.approx(body[f"{key}_image_mean"], abs=1e-3)
        lo, hi = body[f"{key}_image_mean_ci95"]
        assert lo <= body[f"{key}_image_mean"] <= hi
        if key == "saliency_fraction_inside":  # class c's one image is NaN: a and b vary
            lo, hi = body[f"{key}_ci95"]
            assert lo <= body[key] <= hi
        else:  # class c is one image: no spread to resample, so no class-mean interval
            assert body[f"{key}_ci95"] is None
            assert "class 'c' has 1 image" in body["intervals_withheld"][key]
    assert body["delta_density"] == pytest.approx(
        ((0.9 + 0.8 + 1 + 0.7 + 0.9 + 0.6) / 6 - 0.1 + 0.5) / 3
    )
    assert body["n_classes"] == {**dict.fromkeys(SCORES, 3), "saliency_fraction_inside": 2}
    assert body["n_predicted_classes"] == 3 and body["n_predicted_outside_benchmark"] == 1
    assert (
        body["n_scored"]["saliency_fraction_inside"] == 7 and body["n_scored"]["saliency_iou"] == 9
    )
    assert body["accuracy"] == pytest.approx(6 / 10)
    rows = body["per_predicted_class"]
    assert [rows[c]["n"] for c in "abcd"] == [6, 2, 1, 0]
    assert [rows[c]["n_correct"] for c in "abcd"] == [5, 1, 0, 0]
    assert rows["b"]["delta_density"] == pytest.approx(-0.1)
    assert rows["c"]["saliency_fraction_inside"] is None and rows["d"]["saliency_iou"] is None
    # the intervals: the metric core's class-mean bootstrap of the same values and seed
    for key, src in SCORES.items():
        expected = class_mean_interval(per_image[src], preds, 4, n_resamples=300, seed=5)
        assert body[f"{key}_ci95"] == (None if expected is None else pytest.approx(list(expected)))
    assert body["aggregation"] == "class-mean" and "saliency_iou_class_mean" not in body
    # bgbench-v1's protocol: the image mean is the headline, the class mean secondary
    pooled = summarize(spec, out, seed=5, resamples=300, aggregation="image-pooled")
    for key in SCORES:
        assert pooled[key] == body[f"{key}_image_mean"]
        assert pooled[f"{key}_ci95"] == body[f"{key}_image_mean_ci95"]
        assert pooled[f"{key}_class_mean"] == body[key]
        assert pooled[f"{key}_class_mean_ci95"] == body[f"{key}_ci95"]
        assert f"{key}_image_mean" not in pooled
    with pytest.raises(ValueError, match="aggregation 'per-class'"):
        summarize(spec, out, seed=5, resamples=300, aggregation="per-class")


def test_targets_in_the_model_label_space(release):
    """A 1000-class model whose logits grow with the class index: the predicted class is
    999 (outside IN-9); the true class of an IN-9 label is its highest-scoring (here:
    highest-index) mapped ImageNet class; restricted, the best mapped class overall."""
    table = imagenet_to_in9()
    predicted = _frame_of(release, target="predicted")
    assert set(predicted.loc[GREY, "target_class"]) == {999}
    assert set(predicted.loc[GREY, "pred"]) == {-1}
    true = _frame_of(release, target="true")
    for y, name in enumerate(GREY):
        assert true.loc[name, "target_class"] == np.flatnonzero(table == y).max()
    restricted = _frame_of(release, target="predicted", restrict_to_benchmark=True)
    assert set(restricted.loc[GREY, "target_class"]) == {np.flatnonzero(table >= 0).max()}
    assert (true.loc[GREY, "delta_density"] > 0.9).all()  # same map, any class


def _frame_of(release, **kw) -> pd.DataFrame:
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        _run(release, space="imagenet-1k", output_dir=tmp, gallery=0, **kw)
        return _frame(Path(tmp))


def _choice(model, size=160, name=None):
    model.eval()
    with torch.no_grad():
        return choose_target_layer(model, lambda: model(torch.zeros(1, 3, size, size)), name)


@pytest.mark.parametrize(
    ("arch", "kwargs", "name", "layout", "prefix"),
    [
        ("test_resnet", {}, "layer4", "NCHW", 0),
        ("test_efficientnet", {}, "bn2", "NCHW", 0),
        ("test_convnext", {}, "stages", "NCHW", 0),
        ("test_vit", {}, "blocks.{last}.norm1", "tokens", 1),
        ("test_vit", {"reg_tokens": 2}, "blocks.{last}.norm1", "tokens", 3),
    ],
)
def test_target_layer_is_chosen_from_a_timm_model(arch, kwargs, name, layout, prefix):
    model = timm.create_model(arch, pretrained=False, **kwargs)
    choice = _choice(model)
    last = len(getattr(model, "blocks", [])) - 1
    assert (choice.name, choice.layout) == (name.format(last=last), layout)
    if layout == "tokens":
        assert choice.prefix_tokens == prefix == model.num_prefix_tokens
        assert choice.grid == tuple(model.patch_embed.grid_size)


def test_target_layer_is_chosen_from_a_transformers_model():
    from transformers import (
        ResNetConfig,
        ResNetForImageClassification,
        ViTConfig,
        ViTForImageClassification,
    )

    vit = ViTForImageClassification(
        ViTConfig(
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=64,
            image_size=64,
            patch_size=16,
            num_labels=9,
        )
    )
    choice = _choice(vit, 64)
    assert choice.name.endswith("1.layernorm_before") and choice.layout == "tokens"
    assert (choice.prefix_tokens, choice.grid) == (1, (4, 4))
    resnet = ResNetForImageClassification(
        ResNetConfig(embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1], num_labels=9)
    )
    assert _choice(resnet, 64).name == "resnet.encoder.stages.1"


@pytest.mark.parametrize("arch", ["test_resnet", "test_vit"])
def test_cam_with_the_backward_cut_at_the_layer_equals_plain_grad_cam(arch):
    from pytorch_grad_cam import GradCAM
    from pytorch_grad_cam.utils.model_targets import ClassifierOutputTarget

    torch.manual_seed(0)
    model = timm.create_model(arch, pretrained=False, num_classes=9).eval()
    clf = GreyClassifier()
    clf.model, clf.model_id = model, arch
    step = ModelStep(clf, device="cpu")
    choice = _choice(model)
    x = torch.rand(3, 3, 160, 160)
    reshape = None if choice.layout == "NCHW" else choice.reshape
    plain = GradCAM(
        model=step.gradient_module(), target_layers=[choice.module], reshape_transform=reshape
    )
    expected = plain(input_tensor=x, targets=[ClassifierOutputTarget(c) for c in (0, 4, 8)])
    plain.activations_and_grads.release()
    with CamRunner(step.gradient_module(), choice) as runner:
        targets = [ClassTarget(torch.arange(9) == c) for c in (0, 4, 8)]
        maps, logits = runner(x, targets)
    assert [t.chosen for t in targets] == [0, 4, 8]
    np.testing.assert_allclose(maps, expected, atol=1e-5)
    assert all(p.requires_grad for p in model.parameters())  # restored
    assert maps.shape == (3, 160, 160) and logits.shape == (3, 9)


def test_a_wrong_target_layer_is_a_clear_error():
    model = timm.create_model("test_resnet", pretrained=False)
    with pytest.raises(TargetLayerError, match=r"has no submodule 'layer5'.*'layer4'.*fc"):
        _choice(model, name="layer5")
    with pytest.raises(TargetLayerError, match=r"layer4 has no submodule '7'"):
        _choice(model, name="layer4.7")
    with pytest.raises(TargetLayerError, match=r"no spatial feature map.*candidates: .*layer4"):
        _choice(model, name="fc")
    assert _choice(model, name="layer3").name == "layer3"
    vit = timm.create_model("test_vit", pretrained=False)
    assert _choice(vit, name="blocks.-1.norm1").name == f"blocks.{len(vit.blocks) - 1}.norm1"
    mlp = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 8 * 8, 9))
    with pytest.raises(TargetLayerError, match="cannot be chosen automatically.*--target-layer"):
        _choice(mlp, size=8)


def test_bootstrap_mean_interval():
    values = np.array([0.0, 1.0, np.nan, 0.5, 0.25])
    lo, hi = bootstrap_mean_interval(values, seed=1)
    assert 0.0 <= lo < np.nanmean(values) < hi <= 1.0
    assert bootstrap_mean_interval(values, seed=1) == (lo, hi)
    assert bootstrap_mean_interval(np.array([np.nan])) is None
    # all equal: resampling cannot vary them, so no (zero-width) interval
    assert bootstrap_mean_interval(np.full(5, 0.3)) is None
    with pytest.raises(ValueError, match="n_resamples"):
        bootstrap_mean_interval(values, n_resamples=0)
    with pytest.raises(ValueError, match="infinite"):
        bootstrap_mean_interval(np.array([np.inf]))


def test_cli_end_to_end_with_the_bundled_model(release, tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["saliency", "tf_efficientnet_lite0", "--data", str(release), "--output", str(out)]
    code = main([*argv, "--max-images", "4", "--gallery", "2", "--workers", "0", "--quiet"])
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert "Delta density" in printed and "saliency_gallery.png" in printed
    saved = json.loads((out / "saliency.json").read_text())
    assert saved["target_layer"] == {"name": "bn2", "layout": "NCHW", "auto": True}
    assert saved["n_images"] == 4 and saved["model"] == "tf_efficientnet_lite0"
    assert len(saved["gallery_ids"]) == 2
    # the headline's n is of the images of a benchmark class as predicted: the rest are said
    outside = saved["n_predicted_outside_benchmark"]
    left_out = f"({outside} of 4 images left out: predicted outside the benchmark's classes)"
    assert (left_out in printed) == (outside > 0)
    code = main([*argv, "--max-images", "2", "--target-layer", "blocks.9", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "blocks has no submodule '9'" in err and "Traceback" not in err


def test_rival10_attribute_shares(tmp_path):
    from tests.rival10_fixture import fixture_items, write_rival10_hub

    hub = write_rival10_hub(tmp_path / "rival10")
    argv = ["saliency", "tf_efficientnet_lite0", "--benchmark", "rival10", "--data", str(hub)]
    code = main([*argv, "--label-map", "imagenet", "--output", str(tmp_path / "out"), "--quiet"])
    assert code == 0
    saved = json.loads((tmp_path / "out" / "saliency.json").read_text())
    test_items = [item for item in fixture_items() if item.split == "test"]
    assert saved["n_images"] == len(test_items) and saved["variant"] == "ordinary"
    # what the model sees under the paper protocol: every photo and mask stretched whole
    # to 224x224 (the authors' Resize((224, 224))), so no attribute is cropped away
    geometry = Geometry((224, 224), None)
    assert saved["protocol"]["name"] == "rival10-paper"
    visible = {
        item.stem: {
            name
            for name, mask in item.attribute_masks.items()
            if np.asarray(geometry(Image.fromarray(mask.astype(np.uint8) * 255), mask=True)).any()
        }
        for item in test_items
    }
    frame = pd.read_parquet(tmp_path / "out" / "saliency_per_image.parquet")
    shares = frame.set_index("id")["attribute_shares"]
    for item in test_items:
        assert {entry["attribute"] for entry in shares[item.stem]} == visible[item.stem]
    assert set(saved["per_attribute"]) == set().union(*visible.values())
    for name, row in saved["per_attribute"].items():
        assert row["n"] == sum(name in names for names in visible.values())
        assert 0.0 <= row["share_inside"] <= 1.0 and 0.0 < row["mask_area"] <= 1.0
    assert "Per attribute" in (tmp_path / "out" / "saliency.md").read_text()
