"""The ``adam-augmented-v1`` head recipe (Moayeri et al. 2022's finetuner.py, epoch chosen on
held-out train images) and the ``recipe=`` / ``normalise=`` options of probed_classifier:
the authors' crop sampler draw for draw, the recipe learning a separable problem with its
own hyper-parameters, epoch selection on the held-out part only, seeded and batch-size-free
heads, [0, 1] pixels reaching the backbone (when fitting and when scored), the keywords
through the tasks' model_step_for, and a clear error for an unknown recipe."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

import hf_bgbench.probe.adam_head as adam
import hf_bgbench.probe.features as probe
from hf_bgbench.data.loader import DecodedRows
from hf_bgbench.inference.model_step import ModelStep
from hf_bgbench.labels import imagenet_label_space
from hf_bgbench.models.classifier import Classifier
from hf_bgbench.models.preprocessing import Preprocessing
from hf_bgbench.probe.fit import holdout_split
from tests.test_probe import SPEC, reader_of, write_hub

ADAM = "adam-augmented-v1"
OPTS = dict(progress=False, num_workers=0, batch_size=16)
MEAN, STD = 0.5, 0.25


class PixelBackbone(torch.nn.Module):
    """A timm-like backbone, cheap on a CPU: penultimate features = ReLU of a seeded random
    projection of each channel's mean and max. Takes only 16x16 inputs (as a ViT with fixed
    position embeddings would), so the recipe stretches to the model's input size. Keeps the
    value range of every batch it is given, and the last batch."""

    def __init__(self):
        super().__init__()
        gen = torch.Generator().manual_seed(0)
        self.proj = torch.nn.Linear(6, 64)
        self.fc = torch.nn.Linear(64, 1000)
        with torch.no_grad():
            for p in self.parameters():
                p.copy_(torch.randn(p.shape, generator=gen))
        self.ranges: list[tuple[float, float]] = []
        self.last: torch.Tensor | None = None

    def forward_features(self, x):
        if tuple(x.shape[-2:]) != (16, 16):
            raise ValueError(f"this model takes 16x16 inputs, not {tuple(x.shape[-2:])}")
        self.ranges.append((float(x.min()), float(x.max())))
        self.last = x.detach().clone()
        return x

    def forward_head(self, x, pre_logits: bool = False):
        feats = torch.relu(self.proj(torch.cat([x.mean((2, 3)), x.amax((2, 3))], 1)))
        return feats if pre_logits else self.fc(feats)

    def forward(self, x):
        return self.forward_head(self.forward_features(x))


def pixel_classifier() -> Classifier:
    pre = Preprocessing((16, 16), 18, (16, 16), "bilinear", (MEAN,) * 3, (STD,) * 3)
    return Classifier(
        model_id="tiny-pixel-model",
        resolved="test:tiny-pixel-model",
        source="timm",
        model=PixelBackbone(),
        preprocessing=pre,
        label_space=imagenet_label_space(),
    )


@pytest.fixture(scope="module")
def hub(tmp_path_factory) -> Path:
    # 6 train photos per class: 1 held out, 5 fitted (2 head steps per epoch); 2 test.
    return write_hub(tmp_path_factory.mktemp("rival10_small"), {"train": 6, "test": 2})


@pytest.fixture(scope="module")
def fitted(hub, tmp_path_factory) -> tuple[Classifier, probe.ProbedClassifier]:
    """(base, its adam-augmented-v1 head with the defaults), fitted once for the module."""
    base = pixel_classifier()
    cache = tmp_path_factory.mktemp("adam_heads")
    return base, probe.probed_classifier(
        base, SPEC, reader_of(hub), cache_dir=cache, recipe=ADAM, **OPTS
    )


@pytest.fixture(scope="module")
def default_fitted(hub, tmp_path_factory) -> tuple[Classifier, probe.ProbedClassifier]:
    """(base, its linear-probe-v1 head), fitted once for the module."""
    base = pixel_classifier()
    cache = tmp_path_factory.mktemp("default_heads")
    return base, probe.probed_classifier(base, SPEC, reader_of(hub), cache_dir=cache, **OPTS)


def fit(hub: Path, cache: Path, **options):
    merged = {**OPTS, "recipe": ADAM, **options}
    return probe.probed_classifier(
        pixel_classifier(), SPEC, reader_of(hub), cache_dir=cache, **merged
    )


# --------------------------------------------------------------------------- the photos


def test_crop_params_are_torchvisions_draw_for_draw():
    from torchvision.transforms import RandomResizedCrop

    scale, ratio = (0.8, 1.0), (0.75, 1.25)
    for s in range(120):
        # wide photos fall through the ten tries to torchvision's clamped centre crop
        for w, h in ((20 + s % 97, 15 + (s * 7) % 131), (400 + s, 40)):
            torch.manual_seed(s)
            expected = RandomResizedCrop.get_params(Image.new("RGB", (w, h)), scale, ratio)
            got = adam.crop_params(h, w, scale, ratio, torch.Generator().manual_seed(s))
            assert got == tuple(expected), (s, w, h)


def test_photo_transform_is_per_image_and_epoch_and_ends_in_a_stretch():
    import torchvision.transforms.functional as TF
    from torchvision.transforms import InterpolationMode

    rng = np.random.default_rng(0)
    photo = Image.fromarray(rng.integers(0, 255, (100, 120, 3), dtype=np.uint8))
    one = adam.PhotoTransform((32, 32), augment=True, seed=3, epoch=1)
    out = one.for_image("a")(photo)
    assert out.dtype == torch.uint8 and out.shape == (3, 32, 32)
    same = adam.PhotoTransform((32, 32), augment=True, seed=3, epoch=1)
    assert torch.equal(out, same.for_image("a")(photo))  # a fresh transform: the same photo
    draws = [one.params(photo, f"id{k}") for k in range(400)]
    assert len(set(draws)) > 300  # every image its own crop
    next_epoch = adam.PhotoTransform((32, 32), augment=True, seed=3, epoch=2)
    assert one.params(photo, "a") != next_epoch.params(photo, "a")
    areas = [h * w / (100 * 120) for _, _, h, w, _ in draws]
    assert 0.78 <= min(areas) and max(areas) <= 1.0 and np.mean(areas) > 0.85
    assert 0.4 < np.mean([flip for *_, flip in draws]) < 0.6  # p = 0.5; 400 draws: sd 0.025
    i, j, h, w, flip = one.params(photo, "a")
    crop = TF.crop(photo, i, j, h, w)
    crop = TF.hflip(crop) if flip else crop
    stretched = TF.resize(crop, [32, 32], interpolation=InterpolationMode.BILINEAR)
    assert torch.equal(out, TF.pil_to_tensor(stretched))
    held = adam.PhotoTransform((32, 32), augment=False)(photo)  # the whole photo, stretched
    whole = TF.resize(photo, [32, 32], interpolation=InterpolationMode.BILINEAR)
    assert torch.equal(held, TF.pil_to_tensor(whole))
    with pytest.raises(ValueError, match="image id"):
        one(photo)


# --------------------------------------------------------------------------- training


def _toy(dim: int = 4096, per_class: int = 40):
    """Ten classes, each a random +-1 pattern over ``dim`` features plus N(0, 0.5) noise."""
    gen = torch.Generator().manual_seed(0)
    patterns = torch.randint(0, 2, (10, dim), generator=gen).float() * 2 - 1
    labels = torch.arange(10).repeat_interleave(per_class)
    return patterns[labels] + 0.5 * torch.randn(len(labels), dim, generator=gen), labels


def _train(feats, labels, settings=adam.ADAM_RECIPE, chunk: int = 7, seen=None):
    fit_idx, held_idx = holdout_split(labels, 0.1, 0)

    def stream(epoch, order):
        rows = fit_idx[order]
        if seen is not None:
            seen.append(rows.clone())
        for k in range(0, len(rows), chunk):  # any chunking: the head cuts batches of 32
            yield feats[rows[k : k + chunk]], labels[rows[k : k + chunk]]

    return train_head_of(stream, len(fit_idx), feats[held_idx], labels[held_idx], settings)


def train_head_of(stream, n_fit, held_feats, held_labels, settings):
    return adam.train_head(stream, n_fit, held_feats, held_labels, 10, 0, settings)


def test_the_recipe_learns_a_separable_problem_with_its_own_settings():
    # lr 1e-5 moves a weight by about 1e-5 a step: 120 steps learn only when many feature
    # dimensions agree, as penultimate features of real backbones do (here 4096).
    feats, labels = _toy()
    head, rec = _train(feats, labels)
    assert rec["epochs"] == 10 and len(rec["heldout_accuracy_by_epoch"]) == 10
    assert rec["heldout_accuracy"] >= 0.95 and rec["heldout_accuracy_by_epoch"][0] < 0.6
    assert rec["heldout_accuracy"] == max(rec["heldout_accuracy_by_epoch"])
    best = rec["heldout_accuracy_by_epoch"].index(rec["heldout_accuracy"]) + 1
    assert rec["selected_epoch"] == best  # the earliest best epoch
    assert rec["train_accuracy"] == rec["train_accuracy_by_epoch"][best - 1] > 0.9
    assert rec["n_fit"] == 360 and rec["heldout_n"] == 40 and rec["feature_dim"] == 4096
    assert torch.equal(head.mean, torch.zeros(4096)) and torch.equal(head.std, torch.ones(4096))
    fit_idx, held_idx = holdout_split(labels, 0.1, 0)
    with torch.no_grad():
        acc = (head(feats[held_idx]).argmax(1) == labels[held_idx]).float().mean().item()
    assert acc == rec["heldout_accuracy"]  # the returned head is the one that was scored


def script_heldout_accuracy(monkeypatch, values: list[float]) -> list[torch.Tensor]:
    """Make the held-out scores ``values``, epoch by epoch; returns the labels scored."""
    answers, asked = iter(values), []

    def scripted(head, held_feats, held_labels):
        asked.append(held_labels.clone())
        return next(answers)

    monkeypatch.setattr(adam, "heldout_accuracy", scripted)
    return asked


def test_epoch_is_chosen_on_held_out_accuracy_and_its_head_is_kept(monkeypatch):
    feats, labels = _toy(dim=64, per_class=10)
    fit_idx, held_idx = holdout_split(labels, 0.1, 0)
    settings = {**adam.ADAM_RECIPE, "optimiser": {**adam.ADAM_RECIPE["optimiser"], "lr": 1e-2}}
    asked = script_heldout_accuracy(monkeypatch, [0.2, 0.9, 0.5, 0.9])
    seen: list[torch.Tensor] = []
    head, rec = _train(feats, labels, {**settings, "epochs": 4}, seen=seen)
    assert rec["heldout_accuracy_by_epoch"] == [0.2, 0.9, 0.5, 0.9]
    assert rec["selected_epoch"] == 2 and rec["heldout_accuracy"] == 0.9  # ties: the earlier
    assert len(asked) == 4 and all(torch.equal(y, labels[held_idx]) for y in asked)
    trained = set(torch.cat(seen).tolist())  # what the head was trained on
    assert trained == set(fit_idx.tolist()) and not trained & set(held_idx.tolist())
    # the kept head is the one after epoch 2: not the last epoch's, and not refitted
    script_heldout_accuracy(monkeypatch, [0.2, 0.9])
    two, _ = _train(feats, labels, {**settings, "epochs": 2})
    script_heldout_accuracy(monkeypatch, [0.0, 0.0, 0.0, 1.0])
    four, rec4 = _train(feats, labels, {**settings, "epochs": 4})
    assert rec4["selected_epoch"] == 4
    for name, tensor in head.tensors().items():
        assert torch.equal(tensor, two.tensors()[name]), name
    assert not torch.equal(head.linear.weight, four.linear.weight)


def test_head_does_not_depend_on_how_the_stream_is_chunked():
    feats, labels = _toy(dim=256, per_class=12)
    settings = {**adam.ADAM_RECIPE, "epochs": 3}
    a, rec_a = _train(feats, labels, settings, chunk=1)
    b, rec_b = _train(feats, labels, settings, chunk=50)
    assert rec_a == rec_b
    for name, tensor in a.tensors().items():  # same features, same batches of 32: exact
        assert torch.equal(tensor, b.tensors()[name]), name


# --------------------------------------------------------------------------- end to end


def test_same_seed_same_head_other_batch_size_and_workers_the_same_head(hub, fitted, tmp_path):
    first = fitted[1]
    again = fit(hub, tmp_path / "b")
    other = fit(hub, tmp_path / "c", batch_size=3, num_workers=2)
    seed1 = fit(hub, tmp_path / "d", seed=1)
    rec = first.probe_record
    assert not again.probe_record["reused"] and not other.probe_record["reused"]
    a, b = first.model.head.linear, again.model.head.linear
    assert torch.equal(a.weight, b.weight) and torch.equal(a.bias, b.bias)
    # Another decode batch size and worker count feed the backbone the same photos in other
    # batches, and the head the same batches of 32. The only freedom left is float rounding
    # of the backbone's batched maths (~1e-7 relative); Adam moves a weight by about lr per
    # step, so training moves the head by at most ~lr x steps (here 1e-5 x 20): a tolerance
    # of 0.1% of that catches any change of crop, flip or order, and passes rounding.
    c = other.model.head.linear
    tol = 1e-3 * rec["recipe"]["optimiser"]["lr"] * rec["epochs"] * 2
    assert torch.allclose(a.weight, c.weight, rtol=0, atol=tol)
    assert torch.allclose(a.bias, c.bias, rtol=0, atol=tol)
    init = adam._default_linear(64, 10, adam.stream_seed(0, "init"))
    assert (a.weight - init.weight).abs().max() > 100 * tol  # the head did train
    assert not torch.equal(a.weight, seed1.model.head.linear.weight)
    assert rec["heldout_accuracy_by_epoch"] == other.probe_record["heldout_accuracy_by_epoch"]


def test_training_shows_one_bar_over_every_epoch(hub, tmp_path, capsys):
    """One count for the whole training, so its estimate is the training's: a Space stops a
    job whose step cannot finish in time, and a bar per epoch hid the other nine epochs."""
    fit(hub, tmp_path, progress=True)
    err = capsys.readouterr().err
    # 10 classes x 5 fitted photos (one of 6 held out), 10 epochs
    assert "training (10 epochs): 100%" in err and "500/500" in err
    assert "epoch 10/10" in err
    assert "epoch 1:" not in err  # no bar of its own per epoch


def test_training_never_sees_test_rows_and_never_trains_on_held_out_ones(
    hub, tmp_path, monkeypatch
):
    decoded: list[tuple[str, str]] = []
    original = DecodedRows.__getitem__

    def spy(self, i):
        item = original(self, i)
        decoded.append((type(self).__name__, str(item["id"])))
        return item

    monkeypatch.setattr(DecodedRows, "__getitem__", spy)
    clf = fit(hub, tmp_path)
    rec = clf.probe_record
    assert decoded and all(image_id.startswith("train_") for _, image_id in decoded)
    trained = [i for kind, i in decoded if kind == "AugmentedRows"]
    held = {i for kind, i in decoded if kind == "DecodedRows"}
    assert len(held) == rec["heldout_n"] == 10 and not held & set(trained)
    assert len(trained) == rec["epochs"] * 50 and len(set(trained)) == 50  # each epoch, once
    labels = torch.tensor(reader_of(hub).load("ordinary", split="train")["label"])
    ids = reader_of(hub).load("ordinary", split="train")["id"]
    expected = {ids[k] for k in holdout_split(labels, 0.1, 0)[1].tolist()}
    assert held == expected
    assert rec["selected_epoch"] == 1 + rec["heldout_accuracy_by_epoch"].index(
        max(rec["heldout_accuracy_by_epoch"])
    )


def test_without_normalisation_the_backbone_sees_unit_pixels_when_fitted_and_scored(
    hub, fitted, default_fitted, tmp_path
):
    base, clf = fitted
    rec = clf.probe_record
    assert rec["normalise"] is False and "[0, 1] pixels" in rec["normalisation"]
    ranges = list(base.model.ranges)  # every batch the backbone got while the head was fitted
    assert ranges and all(0.0 <= lo and hi <= 1.0 for lo, hi in ranges)
    assert max(hi for _, hi in ranges) > 0.9  # the photos' bright colours, not normalised
    assert clf.preprocessing.mean == (0.0,) * 3 and clf.preprocessing.std == (1.0,) * 3
    assert base.preprocessing.mean == (MEAN,) * 3  # the caller's classifier is untouched
    x = torch.randint(0, 256, (2, 3, 16, 16), dtype=torch.uint8)
    ModelStep(clf, device="cpu").logits(x)  # what every task does at test time
    assert torch.equal(base.model.last, x.float() / 255)
    # the model's normalisation when asked, and by default for linear-probe-v1
    asked = pixel_classifier()
    normalised = probe.probed_classifier(
        asked, SPEC, reader_of(hub), cache_dir=tmp_path, recipe=ADAM, normalise=True, **OPTS
    )
    for other, head in ((asked, normalised), default_fitted):
        assert head.probe_record["normalise"] is True
        assert min(lo for lo, _ in other.model.ranges) < 0  # (x - 0.5) / 0.25 reaches -2
        ModelStep(head, device="cpu").logits(x)
        assert torch.allclose(other.model.last, (x.float() / 255 - MEAN) / STD)
        assert head.preprocessing == other.preprocessing
    assert normalised.probe_record["key"] != rec["key"]  # its own cache entry


def test_second_call_reuses_the_cached_head(hub, fitted):
    first = fitted[1]
    base = pixel_classifier()
    cache = Path(first.probe_record["cache_path"]).parent
    second = probe.probed_classifier(
        base, SPEC, reader_of(hub), cache_dir=cache, recipe=ADAM, **OPTS
    )
    assert second.probe_record["reused"] and not base.model.ranges  # no photo decoded again
    assert torch.equal(first.model.head.linear.weight, second.model.head.linear.weight)
    assert second.preprocessing.std == (1.0,) * 3  # still fed [0, 1] pixels when reused


def test_record_and_note_name_the_recipe_and_the_normalisation(fitted, default_fitted):
    rec = fitted[1].probe_record
    assert rec["recipe"]["name"] == ADAM and rec["recipe"]["seed"] == 0
    assert rec["recipe"]["optimiser"]["lr"] == 1e-5 and rec["recipe"]["batch_size"] == 32
    assert rec["epochs"] == 10 and 1 <= rec["selected_epoch"] <= 10
    assert rec["input"] == {
        "train": "crop (scale 0.8-1, ratio 0.75-1.25) + flip (p 0.5) + stretch 16x16",
        "heldout": "stretch 16x16",
    }
    assert adam.BACKBONE_MODE_DEVIATION in rec["deviations"]
    assert any("not the authors' 224x224" in d for d in rec["deviations"])  # 16x16 only
    assert rec["n_train"] == 60 and rec["n_fit"] == 50 and rec["heldout_n"] == 10
    note = probe.probe_note(rec)
    assert ADAM in note and "no normalisation" in note and "not refitted" in note
    assert f"epoch {rec['selected_epoch']} of 10" in note and "\n" not in note
    default = default_fitted[1].probe_record
    note = probe.probe_note(default)
    assert "linear-probe-v1" in note and "the model's normalisation applied" in note
    assert "normalisation applied" in probe.probe_note({**default, "normalise": True})


def test_stretch_is_the_authors_224_when_the_model_takes_it():
    from tests.test_probe import tiny_classifier

    assert adam.stretch_size(ModelStep(tiny_classifier(), device="cpu")) == ((224, 224), [])


def test_keywords_pass_through_the_tasks_model_step_for(hub, tmp_path):
    from hf_bgbench.tasks.run_model import ModelRequest, model_step_for

    base = pixel_classifier()
    clf, mapper, step = model_step_for(
        base,
        SPEC,
        reader_of(hub),
        ModelRequest(label_map="probe", progress=False),
        recipe=ADAM,
        normalise=False,
        seed=0,
        cache_dir=tmp_path,
        batch_size=16,
        num_workers=0,
    )
    assert clf.probe_record["recipe"]["name"] == ADAM and clf.probe_record["normalise"] is False
    x = torch.randint(0, 256, (3, 3, 16, 16), dtype=torch.uint8)
    pred = step.predict(x, torch.zeros(3, dtype=torch.long))
    assert pred.pred.shape == (3,)
    assert torch.equal(base.model.last, x.float() / 255)


def test_an_unknown_recipe_is_a_clear_error_before_any_data_is_read():
    with pytest.raises(ValueError) as err:
        probe.probed_classifier(pixel_classifier(), SPEC, reader=None, recipe="sgd-v9")
    message = str(err.value)
    assert "'sgd-v9'" in message and "linear-probe-v1" in message and ADAM in message


# --------------------------------------------------------------------------- grey background


@pytest.fixture(scope="module")
def gray_fitted(hub, tmp_path_factory) -> probe.ProbedClassifier:
    """The grey-background head (Fig. 8, right) with the defaults (20 epochs), fitted once."""
    cache = tmp_path_factory.mktemp("gray_heads")
    return probe.probed_classifier(
        pixel_classifier(), SPEC, reader_of(hub), cache_dir=cache, recipe=ADAM,
        gray_background=0.5, **OPTS,
    )  # fmt: skip


def test_pair_cuts_flips_and_stretches_the_mask_with_its_photo():
    import torchvision.transforms.functional as TF
    from torchvision.transforms import InterpolationMode

    rng = np.random.default_rng(1)
    photo = Image.fromarray(rng.integers(0, 255, (60, 90, 3), dtype=np.uint8))
    mask = Image.fromarray((rng.random((60, 90)) > 0.5).astype(np.uint8) * 255, "L")
    one = adam.PhotoTransform((24, 24), augment=True, seed=5, epoch=2)
    flips = set()
    for k in range(12):
        image, cut = one.pair(f"id{k}", photo, mask)
        assert torch.equal(image, one.for_image(f"id{k}")(photo))  # the photo as without mask
        i, j, h, w, flip = one.params(photo, f"id{k}")
        flips.add(flip)
        expected = TF.crop(mask, i, j, h, w)
        expected = TF.hflip(expected) if flip else expected
        expected = TF.resize(expected, [24, 24], interpolation=InterpolationMode.NEAREST)
        assert torch.equal(cut, TF.pil_to_tensor(expected)) and cut.shape == (1, 24, 24)
        assert set(cut.unique().tolist()) <= {0, 255}  # nearest neighbour: still binary
    assert flips == {True, False}
    with pytest.raises(ValueError, match="must have its photo's size"):
        one.pair("a", photo, mask.resize((45, 30)))


def test_gray_background_keeps_the_object_and_greys_the_rest():
    x = torch.randint(0, 256, (2, 3, 4, 4), dtype=torch.uint8)
    m = torch.zeros(2, 1, 4, 4, dtype=torch.uint8)
    m[:, :, 1:3, 1:3] = 255
    m[1, 0, 0, 0] = 127  # below the threshold: background
    out = adam.gray_background(x, m, 0.5)
    inside = (m >= 128).expand(-1, 3, -1, -1)
    assert torch.equal(out[inside], x.float()[inside] / 255)
    assert torch.all(out[~inside] == 0.5)
    assert torch.equal(adam.gray_background(x.float() / 255, m, 0.5), out)  # float in [0, 1]


def test_gray_head_trains_on_photos_grayed_outside_the_identically_cut_mask(
    hub, tmp_path, monkeypatch
):
    """Every photo the backbone sees while the grey head is fitted is the decoded photo with
    grey outside its mask, and that mask is the stored one cut, flipped and stretched with
    the photo's own draw (held-out photos: stretched only)."""
    import torchvision.transforms.functional as TF
    from torchvision.transforms import InterpolationMode

    decoded: list[dict] = []
    original = adam.AugmentedRows._with_mask

    def spy(self, i, image_id):
        item = original(self, i, image_id)
        decoded.append(item)
        return item

    monkeypatch.setattr(adam.AugmentedRows, "_with_mask", spy)
    base = pixel_classifier()
    seen: list[torch.Tensor] = []
    forward_features = base.model.forward_features

    def record(x):  # what the backbone takes (its probe at 224x224 is refused: not kept)
        out = forward_features(x)
        seen.append(x.detach().clone())
        return out

    base.model.forward_features = record
    clf = probe.probed_classifier(
        base, SPEC, reader_of(hub), cache_dir=tmp_path, recipe=ADAM, gray_background=0.5,
        epochs=2, **OPTS,
    )  # fmt: skip
    rec = clf.probe_record
    assert rec["epochs"] == 2 and rec["recipe"]["epochs"] == 2  # the override, recorded
    held_n, n_fit = rec["heldout_n"], rec["n_fit"]
    assert len(decoded) == held_n + 2 * n_fit  # held-out once, the fit photos every epoch
    inputs = torch.cat(seen)
    assert len(inputs) == len(decoded)  # decode order = the order the backbone sees them
    train = reader_of(hub).load("ordinary", columns=("object_mask",), split="train")
    rows = zip(train["id"], train["image"], train["object_mask"], strict=True)
    stored = {str(i): (photo, mask) for i, photo, mask in rows}
    grey_pixels = object_pixels = 0
    for k, (item, x) in enumerate(zip(decoded, inputs, strict=True)):
        photo, mask = stored[str(item["id"])]
        if k < held_n:  # the held-out photos: the whole photo stretched, no draw
            expected = mask
        else:
            draw = adam.PhotoTransform((16, 16), augment=True, seed=0, epoch=(k - held_n) // n_fit)
            i, j, h, w, flip = draw.params(photo, str(item["id"]))
            expected = TF.crop(mask, i, j, h, w)
            expected = TF.hflip(expected) if flip else expected
            assert torch.equal(item["image"], draw.for_image(str(item["id"]))(photo))
        expected = TF.resize(expected, [16, 16], interpolation=InterpolationMode.NEAREST)
        assert torch.equal(item["object_mask"], TF.pil_to_tensor(expected)), item["id"]
        inside = (item["object_mask"] >= 128).expand(3, -1, -1)
        assert torch.allclose(x[inside], item["image"].float()[inside] / 255, atol=1e-6)
        assert torch.all(x[~inside] == 0.5)
        grey_pixels += int((~inside).sum())
        object_pixels += int(inside.sum())
    assert grey_pixels > 0 and object_pixels > 0
    assert adam.GRAY_MASK_DEVIATION in rec["deviations"]
    assert "background grayed to 0.5" in rec["input"]["train"]


def test_gray_head_has_its_own_cache_key_and_record(hub, gray_fitted, fitted):
    rec = gray_fitted.probe_record
    ordinary = fitted[1].probe_record
    assert rec["key"] != ordinary["key"]
    assert rec["recipe"]["background"]["gray"] == 0.5
    assert rec["recipe"]["background"]["mask_column"] == "object_mask"
    assert rec["epochs"] == 20 == adam.GRAY_HEAD_EPOCHS  # the authors' fg_only head
    assert len(rec["heldout_accuracy_by_epoch"]) == 20
    assert "background" not in ordinary["recipe"] and ordinary["epochs"] == 10
    assert rec["train_data"]["variant"] == "ordinary" and rec["normalise"] is False
    assert "background grayed to 0.5" in probe.probe_note(rec)
    # In the grey head's cache folder the ordinary head is fitted as its own entry (the
    # same as elsewhere), and the grey head is reused only as itself.
    cache = Path(rec["cache_path"]).parent
    here = fit(hub, cache)
    assert not here.probe_record["reused"] and here.probe_record["key"] == ordinary["key"]
    assert sorted(p.name for p in cache.iterdir()) == sorted([rec["key"], ordinary["key"]])
    again = fit(hub, cache, gray_background=0.5)
    assert again.probe_record["reused"] and again.probe_record["key"] == rec["key"]
    assert torch.equal(again.model.head.linear.weight, gray_fitted.model.head.linear.weight)
    darker = probe.head_settings(ADAM, SPEC, 0.25, None)
    assert darker["background"]["gray"] == 0.25 and darker["epochs"] == 20


def test_gray_head_options_are_checked():
    with pytest.raises(ValueError, match="finetuner.py"):
        probe.head_settings("linear-probe-v1", SPEC, 0.5, None)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        probe.head_settings(ADAM, SPEC, 1.5, None)
    with pytest.raises(ValueError, match="epochs"):
        probe.head_settings(ADAM, SPEC, 0.5, 0)
    assert probe.head_settings(ADAM, SPEC, None, 3)["epochs"] == 3
