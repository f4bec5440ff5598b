"""PUG: ImageNet (one folder: hf_bgbench/benchmarks/pug_imagenet/) against its authors' rule,
on the small table of tests/pug_fixture.py in the exact layout the Hub serves.

The authors' number is worked out here their way, independently of the package: every image
centre-cropped to 256, resized to (224, 224), the 1000-way argmax looked up in a table built
as their run_pug_imagenet builds it (classes in sorted order, an index set to each class that
lists it, so the later one keeps it; anything else: 999, never a label). The spread across
worlds, its paired interval and the share of assets the world changes are recomputed from
the per-image predictions.
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import torch
from PIL import Image

from hf_bgbench.benchmarks import get_benchmark
from hf_bgbench.benchmarks.pug_imagenet.download import cached_pug_imagenet
from hf_bgbench.benchmarks.pug_imagenet.labels import (
    imagenet_to_pug,
    pug_classes,
    shared_indices,
)
from hf_bgbench.benchmarks.pug_imagenet.rows import (
    PugTableError,
    factor_defaults,
    row_ids,
    variant_mask,
)
from hf_bgbench.cli import main
from hf_bgbench.data.sources import resolve_source
from hf_bgbench.metrics import wilson_interval
from tests.pug_fixture import WORLDS, pug_rows, write_pug

SPEC = "pug-imagenet"


@pytest.fixture(scope="module")
def pug(tmp_path_factory, shared_data) -> Path:
    return write_pug(tmp_path_factory.mktemp("pug"), shared_data)


@pytest.fixture(scope="module")
def scored(pug, tmp_path_factory) -> Path:
    """The bundled classifier's run on the fixture (the main command, as a user runs it)."""
    out = tmp_path_factory.mktemp("scored") / "out"
    argv = ["evaluate", "tf_efficientnet_lite0", "--benchmark", SPEC, "--data", str(pug)]
    assert main([*argv, "--output", str(out), "--quiet", "--workers", "0", "--device", "cpu"]) == 0
    return out


def authors_table() -> dict[int, int]:
    """run_pug_imagenet's inverse map: classes in sorted order, later ones overwrite."""
    table = {}
    for counter, c in enumerate(sorted(pug_classes(), key=lambda c: c.authors_name)):
        for index in c.imagenet:
            table[index] = counter
    return table


def authors_predictions(pug: Path) -> pd.DataFrame:
    """Every image of the worlds rows scored the authors' way, one by one."""
    import torchvision.transforms as T

    from hf_bgbench.models import load_classifier

    model = load_classifier("tf_efficientnet_lite0", device="cpu").model.eval()
    transform = T.Compose(
        [T.CenterCrop(256), T.Resize((224, 224)), T.ToTensor(), T.Normalize([0.5] * 3, [0.5] * 3)]
    )
    frame = pq.read_table(next((pug / "data").glob("*.parquet"))).to_pandas()
    label = {c.authors_name: c.label for c in pug_classes()}
    table, rows = authors_table(), []
    worlds = frame[(frame["camera_yaw"] == 0) & (frame["scene_light"] == "Default")]
    for _, row in worlds.iterrows():
        image = Image.open(io.BytesIO(row["image"]["bytes"])).convert("RGB")
        with torch.no_grad():
            logits = model(transform(image)[None])[0]
        top2 = logits.topk(2).values
        pred = table.get(int(logits.argmax()), 999)
        rows.append(
            {
                "id": f"worlds/{row['world_name']}/{row['character_name']}",
                "world": row["world_name"],
                "asset": row["character_name"],
                "right": pred == label[row["character_label"]],
                "pred": pred,
                "margin": float(top2[0] - top2[1]),
            }
        )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- classes and map


def test_the_151_classes_and_the_authors_map():
    classes = pug_classes()
    assert len(classes) == 151
    assert [c.authors_name for c in classes] == sorted(c.authors_name for c in classes)
    assert sum(len(c.imagenet) == 1 for c in classes) == 138
    assert sum(len(c.imagenet) > 1 for c in classes) == 13
    names = get_benchmark(SPEC).classes
    table = imagenet_to_pug()
    assert all(names[table[i]] == "wolf" for i in (269, 270, 271, 272))  # a multi-index class
    assert table[0] == -1 and table[999] == -1  # tench, toilet tissue: outside, always wrong
    assert shared_indices() == {841: (names.index("shirt"), names.index("sweatshirt"))}
    assert names[table[841]] == "sweatshirt"  # the authors' code: the later class keeps it
    assert {i: table[i] for i in authors_table()} == authors_table()
    assert names[next(c.label for c in classes if c.authors_name == "Kangarou")] == "kangaroo"


# --------------------------------------------------------------------------- rows from the columns


def _meta(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame([{k: v for k, v in r.items() if k != "image"} for r in rows])


def test_variants_are_chosen_from_the_columns(shared_data):
    meta = _meta(pug_rows(shared_data))
    defaults = factor_defaults(meta)
    assert defaults["camera_yaw"] == 0 and defaults["scene_light"] == "Default"
    worlds = meta[variant_mask(meta, "worlds", defaults)]
    assert len(worlds) == 9 * len(WORLDS)  # every asset once in every world
    assert (worlds.groupby("character_name")["world_name"].nunique() == len(WORLDS)).all()
    yaw = meta[variant_mask(meta, "camera_yaw", defaults)]
    assert sorted(set(yaw["camera_yaw"])) == [30.0, 90.0] and len(yaw) == 18
    assert not variant_mask(meta, "object_scale", defaults).any()
    assert row_ids(yaw.head(1), "camera_yaw") == ["camera_yaw/30/Great_white_shark_00"]


def test_a_table_without_a_default_is_refused():
    meta = _meta(
        [
            {**r, "scene_light": s}
            for r, s in zip([{"camera_yaw": 0.0}] * 2, ("A", "B"), strict=True)
        ]
    )
    for column in (
        "camera_pitch",
        "camera_roll",
        "character_rotation_pitch",
        "character_rotation_yaw",
        "character_rotation_roll",
        "character_scale",
        "character_texture",
    ):
        meta[column] = 0
    with pytest.raises(PugTableError, match="'scene_light' has no default value"):
        factor_defaults(meta)


# --------------------------------------------------------------------------- the authors' number


def test_per_world_accuracy_is_the_authors_rule_image_by_image(pug, scored):
    ours = pd.read_parquet(scored / "predictions" / "worlds.parquet").set_index("id")
    theirs = authors_predictions(pug).set_index("id")
    assert sorted(ours.index) == sorted(theirs.index)
    clear = theirs[theirs["margin"] > 1e-3].index  # a near tie may fall either way
    assert len(clear) >= len(theirs) - 2
    assert (
        (ours.loc[clear, "pred"] == ours.loc[clear, "label"]) == theirs.loc[clear, "right"]
    ).all()
    doc = json.loads((scored / "results.json").read_text())
    levels = doc["levels/worlds"]
    for world, group in theirs.groupby("world"):
        assert levels[world]["n"] == len(group)
        assert levels[world]["accuracy"] == pytest.approx(group["right"].mean())
        right = int(group["right"].sum())
        assert levels[world]["ci95"] == pytest.approx(list(wilson_interval(right, len(group))))
    accuracy = theirs.groupby("world")["right"].mean()
    assert doc["spread/worlds"] == pytest.approx(accuracy.max() - accuracy.min())
    assert doc["worst/worlds_level"] == accuracy.idxmin()
    assert doc["protocol"]["name"] == "pug-imagenet"
    assert "centre crop 256 + stretch 224x224" in doc["preprocessing"]["applied"]


def test_the_spread_interval_resamples_assets_and_the_changed_share(scored):
    doc = json.loads((scored / "results.json").read_text())
    frame = pd.read_parquet(scored / "predictions" / "worlds.parquet")
    parts = frame["id"].str.split("/", n=2, expand=True)
    frame["world"], frame["asset"] = parts[1], parts[2]
    frame["right"] = frame["pred"] == frame["label"]
    right = frame.pivot(index="asset", columns="world", values="right").astype(float)
    rng = np.random.default_rng(0)  # the documented seed, 1000 resamples over assets
    draws = rng.integers(0, len(right), size=(1000, len(right)))
    spreads = [np.ptp(right.to_numpy()[d].mean(axis=0)) for d in draws]
    low, high = np.quantile(spreads, [0.025, 0.975])
    assert doc["spread/worlds_ci95"] == pytest.approx([low, high], abs=1e-9)
    assert low <= doc["spread/worlds"] <= high
    changed = frame.groupby("asset")["pred"].nunique().gt(1)
    assert doc["changed/worlds"] == pytest.approx(changed.mean())
    assert doc["changed/worlds_ci95"] == pytest.approx(
        list(wilson_interval(int(changed.sum()), len(changed)))
    )


def test_the_shirt_images_the_authors_map_never_counts_right_are_said(scored):
    doc = json.loads((scored / "results.json").read_text())
    assert doc["map_collisions"]["shirt"]["images"] == len(WORLDS)
    md = (scored / "results.md").read_text()
    assert "never right on a shirt image" in md and "counted right, they would raise" in md


def test_results_and_report_name_the_worlds_and_the_assumed_defaults(scored):
    md = (scored / "results.md").read_text()
    assert "Accuracy per world (worlds), worst first:" in md
    assert "each factor's default is the value most rows hold" in md
    assert (scored / "worlds.png").is_file()
    doc = json.loads((scored / "results.json").read_text())
    assert doc["variants"]["camera_yaw"]["n"] == 18 and "levels/camera_yaw" in doc


# --------------------------------------------------------------------------- every form of the data


def test_save_to_disk_and_tarball_copies_give_the_same_rows(pug, tmp_path):
    import datasets

    spec = get_benchmark(SPEC)
    hub = resolve_source(str(pug), spec)
    table = datasets.load_dataset(
        "parquet",
        data_files=str(pug / "data" / "*.parquet"),
        split="train",
        cache_dir=str(tmp_path / "cache"),
    )
    table.save_to_disk(str(tmp_path / "saved"))
    saved = resolve_source(str(tmp_path / "saved"), spec)
    tarball = tmp_path / "tarball"
    (tarball / "Worlds").mkdir(parents=True)
    frame = table.to_pandas()
    names = []
    for n, image in enumerate(frame["image"]):
        name = f"Worlds/{n:03d}.png"
        (tarball / name).write_bytes(image["bytes"])
        names.append(name)
    frame.drop(columns=["image"]).assign(filename=names).to_csv(
        tarball / "labels_pug_imagenet.csv", index=False
    )
    from_tarball = resolve_source(str(tarball), spec)
    assert hub.kind == saved.kind == from_tarball.kind == "pug-imagenet"
    for variant in ("worlds", "camera_yaw", "scene_light"):
        ids = [sorted(r.load(variant)["id"]) for r in (hub, saved, from_tarball)]
        assert ids[0] == ids[1] == ids[2]
    labels = [sorted(r.load("worlds")["label"]) for r in (hub, saved, from_tarball)]
    assert labels[0] == labels[1] == labels[2]


def test_the_hub_dataset_is_read_from_the_cache_offline(pug, tmp_path, monkeypatch):
    import huggingface_hub.constants as hub_constants

    repo = tmp_path / "hub" / "datasets--facebook--PUG_ImageNet"
    shutil.copytree(pug, repo / "snapshots" / ("d" * 40))
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("d" * 40)
    monkeypatch.setattr(hub_constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    assert cached_pug_imagenet() is not None
    spec = get_benchmark(SPEC)
    reader = resolve_source("facebook/PUG_ImageNet", spec, hub_only=True)
    assert reader.kind == "pug-imagenet" and reader.revision() == "d" * 40
    assert "worlds" in reader.variants


def test_a_download_of_some_variants_fetches_only_their_shards(tmp_path, monkeypatch, shared_data):
    """The factor columns of every shard read first; only the factor rows' shard fetched;
    the whole table's defaults recorded, so the partial snapshot gives the same rows as the
    whole table (alone, its camera_yaw values tie: no default) and is named a departure."""
    import huggingface_hub.constants as hub_constants

    from hf_bgbench.benchmarks.pug_imagenet.shards import plan_shards, record_defaults

    whole = write_pug(tmp_path / "whole", shared_data, shards=2)
    files = sorted(p.relative_to(whole).as_posix() for p in (whole / "data").glob("*.parquet"))
    sizes = {f: (whole / f).stat().st_size for f in files}
    commit = "f" * 40
    plan = plan_shards(["camera_yaw"], commit, sizes, lambda p: open(whole / p, "rb"), False)
    assert plan.shards == ("data/train-00001-of-00002.parquet",) and plan.every == 2
    assert plan.rows == {"camera_yaw": 18} and plan.size < plan.total
    monkeypatch.setenv("HF_BGBENCH_CACHE", str(tmp_path / "bgbench"))
    snapshot = tmp_path / "hub" / "datasets--facebook--PUG_ImageNet" / "snapshots" / commit
    (snapshot / "data").mkdir(parents=True)
    shutil.copy(whole / plan.shards[0], snapshot / plan.shards[0])
    (snapshot.parent.parent / "refs").mkdir()
    (snapshot.parent.parent / "refs" / "main").write_text(commit)
    monkeypatch.setattr(hub_constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    spec = get_benchmark(SPEC)
    with pytest.raises(PugTableError, match="'camera_yaw' has no default value"):
        resolve_source(str(snapshot), spec)
    record_defaults(plan)
    partial = resolve_source("facebook/PUG_ImageNet", spec, hub_only=True)
    assert partial.variants == ("camera_yaw", "scene_light")
    full = resolve_source(str(whole), spec)
    assert sorted(partial.load("camera_yaw")["id"]) == sorted(full.load("camera_yaw")["id"])
    assert "1 of the table's 2 shards" in partial.partial()
    from hf_bgbench.tasks.evaluate import evaluate_model

    doc = evaluate_model(
        "tf_efficientnet_lite0",
        benchmark=SPEC,
        data="facebook/PUG_ImageNet",
        progress=False,
        num_workers=0,
        device="cpu",
        use_cache=False,
    )
    assert not doc["protocol"]["published"]
    assert any("a partial download" in d for d in doc["protocol"]["departures"])
    # the record damaged on disk (one digit changed, the same size) is said and not used
    from hf_bgbench.benchmarks.pug_imagenet.shards import defaults_file, recorded_defaults

    path = defaults_file(commit)
    text = path.read_text()
    assert '"shards": 2' in text
    path.write_text(text.replace('"shards": 2', '"shards": 3'))
    assert recorded_defaults(commit) is None
    path.write_bytes(b"\xff" * len(text))
    assert recorded_defaults(commit) is None


def test_the_hub_dataset_not_cached_offline_says_how_to_get_it(tmp_path, monkeypatch, capsys):
    import huggingface_hub.constants as hub_constants

    monkeypatch.setattr(hub_constants, "HF_HUB_CACHE", str(tmp_path / "empty"))
    argv = ["evaluate", "tf_efficientnet_lite0", "--benchmark", SPEC, "--quiet"]
    assert main([*argv, "--data", "facebook/PUG_ImageNet"]) == 2
    err = capsys.readouterr().err
    assert "bgbench download pug-imagenet" in err and "Traceback" not in err


def test_published_scores_say_the_data_licence(scored, tmp_path):
    from hf_bgbench.report.results_dataset import dataset_card, results_plan

    _, configs = results_plan(scored)
    card = dataset_card(configs)
    assert "PUG: ImageNet's images are CC-BY-NC 4.0" in card and "never the images" in card
    assert "CC-BY-NC" not in dataset_card([{"config_name": "m__in9", "data_files": []}])


def test_listed_with_its_variants(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert SPEC in out


def test_the_space_shows_the_licence_and_offers_the_allow_listed_hub_dataset(monkeypatch):
    from hf_bgbench.space.page.tab_score import benchmark_note
    from hf_bgbench.space.settings import allowed, offered_benchmarks

    note = benchmark_note(get_benchmark(SPEC))
    assert "CC-BY-NC 4.0" in note and "not be used to train generative models" in note
    monkeypatch.setenv("BGBENCH_SPACE_DATASETS", "pug-imagenet=facebook/PUG_ImageNet")
    assert offered_benchmarks() == [SPEC]
    assert allowed()[SPEC].is_hub


def test_clip_is_scored_over_the_151_names_with_its_recorded_prompt(pug, hf_clip_folder):
    from hf_bgbench.tasks.evaluate import evaluate_model

    doc = evaluate_model(
        str(hf_clip_folder),
        benchmark=SPEC,
        data=str(pug),
        variants=["worlds"],
        progress=False,
        num_workers=0,
        device="cpu",
        use_cache=False,
    )
    head = doc["zero_shot"]
    assert head["num_classes"] == 151 and head["templates"] == ["a photo of a {}."]
    assert "kangaroo" in head["classnames"] and doc["protocol"]["name"] == SPEC
    assert doc["variants"]["worlds"]["n"] == 36 and doc["spread/worlds"] is not None


def test_max_images_draws_whole_assets_so_worlds_compare_over_the_same_ones():
    from hf_bgbench.benchmarks.pug_imagenet.rows import asset_of
    from hf_bgbench.tasks.evaluate.aligned import drawn_ids

    ids = sorted(f"worlds/W{w}/asset{a:02d}" for w in range(4) for a in range(9))
    kept = drawn_ids(ids, 10, seed=0, stream=1, unit_of=asset_of)
    assert len(kept) == 10  # exactly the cap, as a row draw gives
    worlds = (
        pd.Series([i.split("/")[1] for i in kept]).groupby([asset_of(i) for i in kept]).nunique()
    )
    assert sorted(worlds) == [2, 4, 4]  # two whole assets, the last one cut to the cap
    assert drawn_ids(ids, 10, seed=0, stream=1, unit_of=asset_of) == kept  # seeded
    assert drawn_ids(ids, 99, seed=0, stream=1, unit_of=asset_of) == set(ids)
