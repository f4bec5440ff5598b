"""Neural-feature attribution (Moayeri et al., 2022, Sec. 5) on the RIVAL10 fixture, with a
tiny model whose penultimate features are fixed rectangles: feature f's last feature map is
the box R_f filled with (1 + the image's mean blue), so its Grad-CAM is exactly R_f and its
activation ranks a class's images by blue. The best feature of one (class, attribute) and
its train and test IoU are then known by hand."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from PIL import Image

from hf_bgbench.benchmarks.rival10.labels import rival10_attributes, rival10_classes
from hf_bgbench.cli import main
from hf_bgbench.data.loader import Geometry
from hf_bgbench.labels import imagenet_label_space
from hf_bgbench.models.classifier import Classifier
from hf_bgbench.models.preprocessing import Preprocessing
from hf_bgbench.tasks.attribution import run_attribution
from hf_bgbench.tasks.attribution.options import AttributionError
from hf_bgbench.tasks.attribution.summary import GALLERY_FILE
from tests.rival10_fixture import fixture_items

SIZE = 224
CLASS = 3  # both images of a class hold attribute (label + 7) % 18 (rival10_fixture)
ATTRIBUTE = rival10_attributes()[(CLASS + 7) % len(rival10_attributes())]
STRETCH = Geometry((SIZE, SIZE), None)


def _mask(split: str, k: int) -> np.ndarray:
    """The attribute's mask of image k of CLASS, stretched to 224x224 as the protocol does."""
    item = next(i for i in fixture_items() if (i.split, i.label, i.k) == (split, CLASS, k))
    image = Image.fromarray(item.attribute_masks[ATTRIBUTE].astype(np.uint8) * 255)
    return np.asarray(STRETCH(image, mask=True)) >= 128


def _box(mask: np.ndarray) -> np.ndarray:
    ys, xs = np.nonzero(mask)
    out = np.zeros_like(mask)
    out[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1] = True
    return out


def _iou(a: np.ndarray, b: np.ndarray) -> float:
    return float((a & b).sum() / (a | b).sum())


def _spots() -> list[np.ndarray]:
    """R_0: the attribute's box in the bluer train image (k = 1); R_1: its left half;
    R_2, R_3: corner boxes no attribute reaches (masks start a block inside the image)."""
    r0 = _box(_mask("train", 1))
    r1 = r0.copy()
    xs = np.nonzero(r0.any(axis=0))[0]
    r1[:, xs[len(xs) // 2] :] = False
    corners = [np.zeros((SIZE, SIZE), bool) for _ in range(2)]
    corners[0][:16, :16] = True
    corners[1][-16:, -16:] = True
    return [r0, r1, *corners]


class SpotFeatures(torch.nn.Module):
    def __init__(self, spots: list[np.ndarray]):
        super().__init__()
        self.blue = torch.nn.Conv2d(3, 1, 1, bias=False)
        with torch.no_grad():
            self.blue.weight.copy_(torch.tensor([0.0, 0.0, 1.0]).view(1, 3, 1, 1))
        self.register_buffer("spots", torch.from_numpy(np.stack(spots)).float())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scale = 1 + self.blue(x).mean(dim=(2, 3), keepdim=True)  # (N, 1, 1, 1)
        return self.spots[None] * scale


class SpotNet(torch.nn.Module):
    """timm-like: forward_features = the spot maps, pre-logits = their spatial means."""

    def __init__(self, spots: list[np.ndarray]):
        super().__init__()
        self.features = SpotFeatures(spots)
        self.fc = torch.nn.Linear(len(spots), 1000)

    def forward_features(self, x):
        return self.features(x)

    def forward_head(self, x, pre_logits: bool = False):
        x = x.mean(dim=(2, 3))
        return x if pre_logits else self.fc(x)

    def forward(self, x):
        return self.forward_head(self.forward_features(x))


def spot_classifier() -> Classifier:
    pre = Preprocessing((SIZE, SIZE), (SIZE, SIZE), None, "bilinear", (0.0,) * 3, (1.0,) * 3)
    return Classifier(
        model_id="spots",
        resolved="test:spots",
        source="timm",
        model=SpotNet(_spots()),
        preprocessing=pre,
        label_space=imagenet_label_space(),
    )


@pytest.fixture(scope="module")
def release(rival10_release):
    return rival10_release  # shared, read only (tests/conftest.py)


def _run(release, **kw):
    kw = {"progress": False, "num_workers": 0, "device": "cpu", "batch_size": 4, **kw}
    return run_attribution(
        spot_classifier(), release, benchmark="rival10", label_map="imagenet", **kw
    )


def _row(result: dict) -> dict:
    name = rival10_classes()[CLASS]
    return next(p for p in result["pairs"] if (p["class"], p["attribute"]) == (name, ATTRIBUTE))


def test_best_feature_and_its_iou_on_train_and_test(release, tmp_path):
    spots = _spots()
    by_hand = [np.mean([_iou(r, _mask("train", k)) for k in (0, 1)]) for r in spots]
    assert int(np.argmax(by_hand)) == 0 and by_hand[1] > 0 and by_hand[2] == 0  # construction
    r = _run(release, classes=[rival10_classes()[CLASS]], output_dir=tmp_path)
    row = _row(r)
    assert row["feature"] == 0
    assert row["train_iou"] == pytest.approx(by_hand[0], abs=1e-9)
    assert (row["train_n"], row["train_k"]) == (2, 2)
    test = np.mean([_iou(spots[0], _mask("test", k)) for k in (0, 1)])
    assert row["test_iou"] == pytest.approx(test, abs=1e-9) and row["test_k"] == 2
    assert r["examined_features"] == {rival10_classes()[CLASS]: 4} and r["feature_dim"] == 4
    tested = [p for p in r["pairs"] if p["test_iou"] is not None]
    assert r["mean_train_iou"] == pytest.approx(np.mean([p["train_iou"] for p in tested]))
    lo, hi = r["iou_gap_ci95"]
    assert lo <= r["iou_gap"] <= hi
    assert r["protocol"]["name"] == "rival10-paper" and r["top_k"] == 10 and r["tau"] == 0.5
    assert r["target_layer"]["name"] == "features"
    assert {p["class"] for p in r["pairs"]} == {rival10_classes()[CLASS]}
    files = {p.name for p in tmp_path.iterdir()}
    assert {"attribution.json", "attribution.md", "attribution.png", GALLERY_FILE} <= files
    assert ATTRIBUTE in (tmp_path / "attribution.md").read_text()


def test_top_k_picks_the_most_activating_image_and_the_cap_the_most_active_feature(release):
    """top_k = 1: the bluer image of the class (k = 1, on both splits), where R_0 is the
    attribute's own box on train; max_features = 1: only R_0, the largest box, is examined."""
    r = _run(release, classes=[rival10_classes()[CLASS]], top_k=1, max_features=1, gallery=0)
    row = _row(r)
    assert row["feature"] == 0 and row["train_iou"] == pytest.approx(1.0)
    assert (row["train_n"], row["train_k"], row["test_k"]) == (1, 1, 1)
    assert row["test_iou"] == pytest.approx(_iou(_spots()[0], _mask("test", 1)), abs=1e-9)
    assert r["examined_features"] == {rival10_classes()[CLASS]: 1} and r["max_features"] == 1


def test_data_without_attribute_masks_is_a_clear_error(tmp_path):
    from tests.test_probe import write_hub

    hub = write_hub(tmp_path / "hub", {"train": 2, "test": 1})
    with pytest.raises(AttributionError, match="attribute_masks"):
        _run(hub)


def test_unknown_class_and_bad_tau_are_named(release, capsys):
    with pytest.raises(AttributionError, match="--classes unicorn"):
        _run(release, classes=["unicorn"])
    with pytest.raises(SystemExit) as stop:
        main(["attribution", "spots", "--benchmark", "rival10", "--tau", "1.5"])
    assert stop.value.code == 2
    assert "tau is a fraction" in capsys.readouterr().err
