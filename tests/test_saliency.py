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
from hf_bgbench.metrics.saliency import bootstrap_mean_interval
from hf_bgbench.models import load_classifier
from hf_bgbench.tasks.saliency import SALIENCY_OUTPUTS, run_saliency
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
    assert doc["n_undefined"] == {
        "saliency_iou": 0,
        "saliency_fraction_inside": 9,
        "delta_density": 0,
    }
    assert doc["saliency_fraction_inside"] == pytest.approx(grey["saliency_fraction_inside"].mean())
    assert doc["delta_density"] == pytest.approx(frame["delta_density"].mean())
    lo, hi = doc["delta_density_ci95"]
    assert lo < doc["delta_density"] < hi
    assert doc["mask_area"] == pytest.approx(80 * 80 / 224**2, abs=1e-9)
    assert doc["per_class"]["dog"]["n"] == 2


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
    assert keys == ["delta_density", "saliency_fraction_inside", "saliency_iou"]
    assert saved["settings"]["bootstrap"] == {"resamples": 1000, "seed": 3}
    markdown = (tmp_path / "saliency.md").read_text()
    assert "Per class (true label):" in markdown and "| grey-object-in9 |" in markdown
    assert "model-index" in (tmp_path / "saliency_model_index.yaml").read_text()
    frame = pd.read_parquet(tmp_path / "saliency_per_image.parquet")
    assert list(frame.columns)[:4] == ["id", "label", "target_class", "target_class_name"]
    assert Image.open(tmp_path / "saliency.png").size[0] > 300


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
    assert bootstrap_mean_interval(np.full(5, 0.3)) == pytest.approx((0.3, 0.3))
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
    # what the model sees: its eval resize + centre crop, applied to the masks too
    geometry = Geometry.of(load_classifier("tf_efficientnet_lite0").preprocessing)
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
