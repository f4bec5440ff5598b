"""`bgbench build imagenet-e --runs N` (the paper's numbers are means over 5 runs): one
complete build per seed in OUTPUT/run-<seed>/, and `bgbench evaluate --data OUTPUT` scoring
every run with the mean and spread over them, checked against each run scored alone."""

from __future__ import annotations

import hashlib
import json
import statistics
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from datasets import load_dataset
from PIL import Image

from hf_bgbench.benchmarks import get_benchmark
from hf_bgbench.benchmarks.imagenet_e.fidelity import data_deviations
from hf_bgbench.cli import main
from hf_bgbench.data.hub import card_configs, read_card_metadata
from hf_bgbench.data.sources import resolve_source
from hf_bgbench.labels import imagenet_label_space, imagenet_wnid_index
from hf_bgbench.metrics import wilson_interval
from hf_bgbench.tasks.evaluate import evaluate_model
from tests.in9_fixture import _Preprocessing
from tests.synthetic_scenes import class_wnids, scene

IMAGENET_E = get_benchmark("imagenet-e")
CLASSES = 4  # synthetic scenes of the first four IN-9 classes' ImageNet wnids, 2 photos each
EDITS = ("original", "bg_random", "bg_texture", "size_0.05", "position", "rotation")
RANDOM_EDITS = ("bg_random", "bg_texture", "position", "rotation")
SEED, RUNS = 3, ("run-3", "run-4")


def _object_colour(label: int) -> np.ndarray:
    """The object colour of tests.synthetic_scenes.scene for ``label``."""
    hue = np.array(
        [(label * 37) % 256, (label * 91 + 60) % 256, (label * 53 + 120) % 256], np.float32
    )
    return 255 - 0.55 * hue - 40


class ObjectColourIsClass:
    """Predicts the class whose object colour is nearest the image centre's colour: right
    when the object covers the centre, a guess when an edit moved it away."""

    def __init__(self) -> None:
        self.model = torch.nn.Identity()
        self.model_id = self.resolved = "object-colour-is-class"
        self.preprocessing = _Preprocessing()
        self.label_space = imagenet_label_space()
        self.fingerprint = hashlib.sha256(b"object-colour-is-class").hexdigest()[:16]
        index = imagenet_wnid_index()
        self.targets = torch.tensor([index[w] for w in class_wnids()[:CLASSES]])
        self.colours = torch.tensor(np.stack([_object_colour(y) for y in range(CLASSES)]))

    def to(self, device):
        return self

    def logits(self, x: torch.Tensor) -> torch.Tensor:
        centre = x[:, :, 100:124, 100:124].float().mean(dim=(2, 3)) * 255
        nearest = torch.cdist(centre, self.colours.float()).argmin(dim=1)
        out = torch.zeros(len(x), 1000)
        out[torch.arange(len(x)), self.targets[nearest]] = 10.0
        return out


def _write_photos(root: Path) -> tuple[Path, Path]:
    images, masks = root / "images", root / "masks"
    masks.mkdir(parents=True)
    for label, wnid in enumerate(class_wnids()[:CLASSES]):
        (images / wnid).mkdir(parents=True)
        for k in range(2):
            rgb, truth, _ = scene(label, k)
            Image.fromarray(rgb).save(images / wnid / f"{wnid}_{k}.JPEG", quality=95)
            Image.fromarray(truth.astype(np.uint8) * 255).save(masks / f"{wnid}_{k}.png")
    return images, masks


def _build(photos: tuple[Path, Path], out: Path, *more: str) -> list[str]:
    images, masks = photos
    args = ["build", "imagenet-e", "--images", str(images), "--masks", str(masks)]
    args += ["--output", str(out), "--edits", ",".join(EDITS), "--size", "96"]
    # the object-paste recipe: these tests are about runs, and on 8 toy photos the default
    # whole-photo recipe makes runs that the toy model happens to score alike
    args += ["--size-method", "object", "--blend", "poisson"]
    return [*args, "--workers", "1", "--quiet", *more]


@pytest.fixture(scope="module")
def photos(tmp_path_factory) -> tuple[Path, Path]:
    return _write_photos(tmp_path_factory.mktemp("runs_photos"))


@pytest.fixture(scope="module")
def built(photos, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "e"
    assert main(_build(photos, out, "--seed", str(SEED), "--runs", "2")) == 0
    return out


def _shard_bytes(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*.parquet"))}


def _column_bytes(folder: Path, edit: str, column: str) -> list[bytes]:
    ds = load_dataset(str(folder), edit, split="test")
    return [cell["bytes"] for cell in ds.data.column(column).to_pylist()]


def test_one_complete_build_per_seed_and_the_seeds_recorded(built):
    meta = read_card_metadata(built)
    assert "configs" not in meta  # the parent is no build of its own
    build = meta["bgbench_build"]
    assert build["seeds"] == [3, 4] and build["runs"] == list(RUNS)
    assert build["kind"] == "cpu" and build["comparable_to_published"] is False
    assert {p.name for p in built.iterdir() if p.is_dir()} == set(RUNS)  # work cache gone
    report = json.loads((built / "build_report.json").read_text())
    assert report["parameters"]["runs"] == 2 and report["parameters"]["seeds"] == [3, 4]
    assert {n: r["seed"] for n, r in report["runs"].items()} == {"run-3": 3, "run-4": 4}
    assert report["kept"] == 2 * CLASSES
    for name, seed in zip(RUNS, (3, 4), strict=True):
        run = built / name
        assert card_configs(run) == list(EDITS)
        assert read_card_metadata(run)["bgbench_build"]["seed"] == seed
        assert json.loads((run / "build_report.json").read_text())["parameters"]["seed"] == seed
        for edit in EDITS:  # load_dataset reads a run as any build
            ds = load_dataset(str(run), edit, split="test")
            assert len(ds) == 2 * CLASSES
            assert {json.loads(p)["seed"] for p in ds["edit_params"]} == {seed}
    text = (built / "README.md").read_text()
    assert "| `run-3/` | 3 |" in text and "| `run-4/` | 4 |" in text


def test_random_edits_differ_between_runs_and_the_original_does_not(built):
    first, second = (built / n for n in RUNS)
    for column in ("image", "mask"):
        assert _column_bytes(first, "original", column) == _column_bytes(second, "original", column)
        # not drawn at random: the same in every run
        assert _column_bytes(first, "size_0.05", column) == _column_bytes(
            second, "size_0.05", column
        )
    ids = load_dataset(str(first), "original", split="test")["id"]
    for edit in RANDOM_EDITS:
        a = load_dataset(str(first), edit, split="test")
        b = load_dataset(str(second), edit, split="test")
        assert a["id"] == b["id"] == ids
        images_a = _column_bytes(first, edit, "image")
        images_b = _column_bytes(second, edit, "image")
        assert images_a != images_b, edit
        params = [
            (json.loads(p), json.loads(q))
            for p, q in zip(a["edit_params"], b["edit_params"], strict=True)
        ]
        drawn = {"bg_random": "background_id", "bg_texture": "texture", "rotation": "angle"}
        if edit in drawn:
            assert any(p[drawn[edit]] != q[drawn[edit]] for p, q in params), edit
        if edit == "position":
            assert any((p["dx"], p["dy"]) != (q["dx"], q["dy"]) for p, q in params)


def test_a_run_is_byte_for_byte_the_one_seed_build(photos, built, tmp_path):
    single = tmp_path / "seed4"
    assert main(_build(photos, single, "--seed", "4")) == 0
    assert _shard_bytes(single) == _shard_bytes(built / "run-4")
    assert not any(p.is_dir() and p.name.startswith("run-") for p in single.iterdir())
    assert "seeds" not in read_card_metadata(single)["bgbench_build"]
    # resumed as it is; other runs are other options
    assert main(_build(photos, built, "--seed", str(SEED), "--runs", "2")) == 0
    assert main(_build(photos, built, "--seed", str(SEED), "--runs", "3")) == 2


def test_an_interrupted_run_is_resumed(photos, built, tmp_path):
    out = tmp_path / "e"
    args = _build(photos, out, "--seed", str(SEED), "--runs", "2")
    assert main(args) == 0
    next((out / "run-4" / "data" / "position").glob("*.parquet")).unlink()
    (out / "build_report.json").unlink()
    assert main(args) == 0
    assert _shard_bytes(out) == _shard_bytes(built)


def test_data_deviations_name_the_runs(built):
    found = " | ".join(data_deviations(IMAGENET_E, resolve_source(built, IMAGENET_E)))
    assert "this is 2 seeded build(s) (seed(s) 3, 4), scored as the mean over these 2 runs" in found
    one = " | ".join(data_deviations(IMAGENET_E, resolve_source(built / "run-4", IMAGENET_E)))
    assert "this is 1 seeded build(s) (seed(s) 4); the paper's" in one


def _evaluate(data: Path, out: Path | None = None, cache: Path | None = None) -> dict:
    return evaluate_model(
        ObjectColourIsClass(),
        benchmark="imagenet-e",
        data=data,
        output_dir=out,
        cache_dir=cache,
        use_cache=cache is not None,
        num_workers=0,
        progress=False,
    )


def test_evaluate_scores_every_run_with_mean_and_spread(built, tmp_path):
    out, cache = tmp_path / "out", tmp_path / "cache"
    # through the prediction cache: the runs' same-named configs must never share an entry
    doc = _evaluate(built, out, cache)
    assert doc["computed_images"] == 2 * len(EDITS) * 2 * CLASSES
    again = _evaluate(built, None, cache)
    assert again["reused_images"] == doc["computed_images"] and again["runs"] == doc["runs"]
    alone = {name: _evaluate(built / name) for name in RUNS}  # each run scored as one build
    assert all("runs" not in d for d in alone.values())  # one build: as before
    runs = doc["runs"]
    assert runs["count"] == 2 and runs["names"] == list(RUNS) and runs["std_ddof"] == 1
    keys = ["mean_da", "mean_edit_accuracy", *(f"accuracy/{e}" for e in EDITS)]
    keys += [f"da/{e}" for e in EDITS[1:]]
    assert set(runs["mean"]) == set(keys)

    def single(name: str, key: str) -> float:
        d = alone[name]
        return d["variants"][key.split("/")[1]]["accuracy"] if key.startswith("acc") else d[key]

    for key in keys:
        values = [single(name, key) for name in RUNS]
        for name, value in zip(RUNS, values, strict=True):
            assert runs["per_run"][name][key] == pytest.approx(value), (name, key)
        assert runs["mean"][key] == pytest.approx(statistics.fmean(values)), key
        assert runs["std"][key] == pytest.approx(np.std(values, ddof=1)), key
        assert runs["min"][key] == pytest.approx(min(values)) and runs["max"][key] == max(values)
        # the top-level numbers pool the runs (equal sizes): the mean over runs
        top = doc["variants"][key[9:]]["accuracy"] if key.startswith("acc") else doc[key]
        assert top == pytest.approx(runs["mean"][key]), key
    assert any(runs["std"][k] > 0 for k in keys)  # the runs really differ
    assert runs["std"]["accuracy/original"] == 0  # the same images in every run
    # n counts images (2 per class), not image x run rows: the runs re-measure the same photos
    assert doc["variants"]["original"]["n"] == 2 * CLASSES
    assert doc["variants"]["original"]["n_measurements"] == 2 * 2 * CLASSES

    # by hand, from the predictions written: each image once per run, ids kept apart
    frame = pd.read_parquet(out / "predictions" / "position.parquet")
    assert sorted(frame["run"].unique()) == list(RUNS)
    original = pd.read_parquet(out / "predictions" / "original.parquet")
    for name in RUNS:
        part, ref = frame[frame["run"] == name], original[original["run"] == name]
        assert part["id"].str.startswith(f"{name}/").all() and len(part) == 2 * CLASSES
        by_hand = (ref["pred"] == ref["label"]).mean() - (part["pred"] == part["label"]).mean()
        assert runs["per_run"][name]["da/position"] == pytest.approx(by_hand)

    assert doc["data"]["kind"] == "imagenet-e-runs" and doc["data"]["runs"] == list(RUNS)
    assert any("scored as the mean over these 2 runs" in d for d in doc["protocol_deviations"])
    md = (out / "results.md").read_text()
    assert "Mean and spread over 2 runs" in md and "da/position" in md
    saved = json.loads((out / "results.json").read_text())
    assert saved["runs"]["per_run"]["run-4"]["mean_da"] == pytest.approx(
        runs["per_run"]["run-4"]["mean_da"]
    )


def _image_bootstrap(values: np.ndarray) -> list[float] | None:
    """The package's bootstrap over images (seed 0, 1000 resamples) by hand, or None where
    resampling cannot vary the values."""
    if len(values) < 2 or np.all(values == values[0]):
        return None
    rng = np.random.default_rng(0)
    idx = rng.integers(0, len(values), size=(1000, len(values)))
    return list(np.quantile(values[idx].mean(axis=1), [0.025, 0.975]))


def test_runs_intervals_resample_images_not_image_x_run(built, tmp_path):
    """Two runs of the same 8 photos: every interval is a bootstrap over the 8 images (each
    image's runs averaged), so repeating a byte-identical variant cannot narrow it."""
    out = tmp_path / "out"
    doc = _evaluate(built, out)
    original = pd.read_parquet(out / "predictions" / "original.parquet")
    position = pd.read_parquet(out / "predictions" / "position.parquet")
    for frame in (original, position):
        frame["image"] = [i.split("/", 1)[1] for i in frame["id"]]
        frame["right"] = (frame["pred"] == frame["label"]).astype(float)
    # original is the same in both runs: each image right in both or in neither, so its
    # interval is one run's Wilson interval over the 8 images, as if it were scored once
    per_image = original.groupby("image")["right"].mean()
    assert len(per_image) == 2 * CLASSES
    one_run = original[original["run"] == RUNS[0]].set_index("image")["right"]
    assert per_image.to_numpy() == pytest.approx(one_run[per_image.index].to_numpy())
    right = int(per_image.sum())
    expected = list(wilson_interval(right, 2 * CLASSES))
    assert doc["variants"]["original"]["accuracy_ci95"] == pytest.approx(expected)
    assert expected != pytest.approx(list(wilson_interval(2 * right, 4 * CLASSES)))
    # position differs between runs: a share per image, bootstrapped over images
    moved = position.groupby("image")["right"].mean()
    expected = _image_bootstrap(moved.to_numpy())
    if not np.isin(moved, (0, 1)).all():
        got = doc["variants"]["position"]["accuracy_ci95"]
        assert got == (None if expected is None else pytest.approx(expected))
    # the gap: each image's difference averaged over its runs, then a bootstrap over images
    merged = original.merge(position, on=["id", "image", "run"], suffixes=("_o", "_p"))
    diff = (merged["right_o"] - merged["right_p"]).groupby(merged["image"]).mean()
    expected = _image_bootstrap(diff.to_numpy())
    got = doc["da/position_ci95"]
    assert got == (None if expected is None else pytest.approx(expected, abs=1e-12))
    assert doc["da/position"] == pytest.approx(diff.mean())
    (gap,) = [s for s in doc["report"]["scores"] if s["key"] == "da/position"]
    assert gap["n"] == 2 * CLASSES
    notes = " ".join(doc["report"]["notes"])
    assert f"the same {2 * CLASSES} images" in notes and "resample images" in notes


def test_mean_da_sentence_counts_what_was_scored(built):
    """Data with five edits, one of them scored: the deviation names 1 edit averaged, the one
    scored, not what the data holds."""
    doc = evaluate_model(
        ObjectColourIsClass(),
        benchmark="imagenet-e",
        data=built / RUNS[0],
        variants=["original", "position"],
        use_cache=False,
        num_workers=0,
        progress=False,
    )
    (said,) = [d for d in doc["protocol_deviations"] if d.startswith("mean DA averages")]
    assert said.startswith("mean DA averages the 1 of its 10 variants scored (position)")
    assert doc["mean_da_variants"] == ["position"]
    assert not any("averages 4" in d or "averages 5" in d for d in doc["protocol_deviations"])


def test_a_missing_run_fails_clearly(built, tmp_path, capsys):
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "README.md").write_text((built / "README.md").read_text())
    (broken / "run-3").mkdir()
    argv = ["evaluate", "tf_efficientnet_lite0", "--benchmark", "imagenet-e"]
    out = tmp_path / "out"  # never the default bgbench_results/ in the checkout
    assert main([*argv, "--data", str(broken), "--output", str(out), "--quiet"]) == 2
    assert not out.exists()  # a failed run leaves no empty --output folder
    assert "lists the run 'run-3'" in capsys.readouterr().err
