"""ImageNet-D (one folder: hf_bgbench/benchmarks/imagenet_d/) against its authors' rules, on the
tiny release of tests/imagenet_d_fixture.py in the Hub dataset's own layout.

Each protocol's number is worked out here the authors' way, independently of the package:
a classifier's top-1 is right when it is any of its class's ImageNet indices
(evaluate_imagenet_models.py); a CLIP scores the 113 names with "A photo of a {}"
(evaluate_vlm.py), recomputed with transformers' CLIPModel; a VLM's answer to "Choose from the
following list: <truth>, <negative>" is judged as compute_accuracy.py judges it, with answers
naming both or neither left out of the accuracy.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
import torch
import yaml

from hf_bgbench.benchmarks import get_benchmark
from hf_bgbench.benchmarks.imagenet_d.download import cached_imagenet_d
from hf_bgbench.benchmarks.imagenet_d.labels import imagenet_d_classes, imagenet_to_imagenet_d
from hf_bgbench.cli import main
from hf_bgbench.data.sources import resolve_source
from hf_bgbench.models.vlm.answers import pair_verdict
from hf_bgbench.models.vlm.backend import Backend
from hf_bgbench.models.vlm.backends.hf_transformers import TransformersBackend
from hf_bgbench.models.vlm.rules.pair import PairRule
from hf_bgbench.models.vlm.settings import PAIR, PairQuestion, VlmSettings
from hf_bgbench.models.zero_shot import ClassNames
from hf_bgbench.tasks.evaluate import evaluate_model
from tests.imagenet_d_fixture import (
    AUTHORS_MAP,
    AUTHORS_NAME,
    CASES,
    IndexColourClassifier,
    as_hub_cache,
    authors_classifier_accuracy,
    hard_negative,
    image_dir,
    write_imagenet_d,
)

QUIET = {"progress": False, "num_workers": 0, "device": "cpu", "use_cache": False}
SUBSETS = ("background", "texture", "material")


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    return write_imagenet_d(tmp_path_factory.mktemp("imagenet-d"))


def test_classes_and_map_are_the_authors():
    classes = imagenet_d_classes()
    assert len(classes) == 113 and sum(len(c.imagenet) for c in classes) == 125
    by_folder = {c.folder: c for c in classes}
    for folder, indices in AUTHORS_MAP.items():
        assert list(by_folder[folder].imagenet) == indices
        assert by_folder[folder].name == AUTHORS_NAME[folder]
    assert by_folder["coffee_or_french_press"].name == "coffee or french press"
    table = imagenet_to_imagenet_d()
    assert (table >= 0).sum() == 125 and table[0] == -1 and table[765] == by_folder["chair"].label


def test_release_reader_ids_and_hard_negatives(release):
    reader = resolve_source(str(release), get_benchmark("imagenet-d"))
    assert reader.kind == "imagenet-d-release" and reader.variants == SUBSETS
    names = get_benchmark("imagenet-d").classes
    for subset, cases in CASES.items():
        ds = reader.load(subset, columns=("negative",))
        assert ds["id"] == sorted(image_dir(subset, c[0]) for c in cases)
        got = {i: names[n] for i, n in zip(ds["id"], ds["negative"], strict=True)}
        assert got == {image_dir(subset, f): hard_negative(f, t1, t2) for f, _, t1, t2 in cases}


def test_a_file_that_is_no_image_is_counted(release, tmp_path):
    copy = shutil.copytree(release, tmp_path / "ImageNet-D")
    (copy / "texture" / "plate" / "notes.txt").write_text("x")
    doc = evaluate_model(IndexColourClassifier(), benchmark="imagenet-d", data=str(copy), **QUIET)
    assert doc["data"]["skipped"]["texture/test"]["not_an_image"]["count"] == 1
    assert doc["variants"]["texture"]["n"] == 2


def test_cli_prints_accuracy_per_subset_of_the_bundled_classifier(release, tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["evaluate", "tf_efficientnet_lite0", "--benchmark", "imagenet-d", "--data"]
    assert main([*argv, str(release), "--output", str(out), "--quiet", "--workers", "0"]) == 0
    printed = capsys.readouterr().out
    doc = json.loads((out / "results.json").read_text())
    for subset in SUBSETS:
        frame = pd.read_parquet(out / "predictions" / f"{subset}.parquet")
        folders = [i.split("/")[1] for i in frame["id"]]
        right = [p in AUTHORS_MAP[f] for p, f in zip(frame["pred_model"], folders, strict=True)]
        assert doc["variants"][subset]["accuracy"] == pytest.approx(sum(right) / len(right))
        assert subset in printed
    assert doc["protocol"]["name"] == "imagenet-d" and doc["protocol"]["published"]


def test_classifier_by_the_authors_rule(release):
    doc = evaluate_model(
        IndexColourClassifier(), benchmark="imagenet-d", data=str(release), **QUIET
    )
    for subset in SUBSETS:
        assert doc["variants"][subset]["accuracy"] == authors_classifier_accuracy(subset)
    assert doc["protocol"]["departures"] == [] and doc["protocol"]["deviations"] == []


def test_bgbench_protocol_is_named_and_keeps_the_classifier_numbers(release):
    doc = evaluate_model(
        IndexColourClassifier(),
        benchmark="imagenet-d",
        data=str(release),
        protocol="imagenet-d-bgbench",
        **QUIET,
    )
    assert doc["protocol"]["name"] == "imagenet-d-bgbench" and not doc["protocol"]["published"]
    assert doc["variants"]["background"]["accuracy"] == authors_classifier_accuracy("background")


def test_clip_is_scored_over_the_113_names_with_the_authors_prompt(
    release, hf_clip_folder, tmp_path
):
    from PIL import Image
    from transformers import CLIPModel, CLIPProcessor

    out = tmp_path / "out"
    doc = evaluate_model(
        str(hf_clip_folder), benchmark="imagenet-d", data=str(release), output_dir=out, **QUIET
    )
    names = [c.name for c in imagenet_d_classes()]
    assert doc["zero_shot"]["templates"] == ["A photo of a {}"]
    assert doc["zero_shot"]["classnames"] == names
    assert doc["protocol"]["departures"] == []
    model = CLIPModel.from_pretrained(hf_clip_folder).eval()
    processor = CLIPProcessor.from_pretrained(hf_clip_folder)
    text = processor(text=[f"A photo of a {c}" for c in names], return_tensors="pt", padding=True)
    labels = {c.folder: c.label for c in imagenet_d_classes()}
    for subset, cases in CASES.items():
        files = [release / image_dir(subset, f) for f, *_ in cases]
        pixels = processor(images=[Image.open(f) for f in files], return_tensors="pt")
        with torch.no_grad():
            want = model(**text, **pixels).logits_per_image.argmax(1)
        ours = pd.read_parquet(out / "predictions" / f"{subset}.parquet")
        assert ours["pred"].tolist() == want.tolist()  # image by image
        truth = torch.tensor([labels[f] for f, *_ in cases])
        accuracy = (want == truth).float().mean().item()
        assert doc["variants"][subset]["accuracy"] == pytest.approx(accuracy)


def test_drop_against_clean_photos_of_the_same_classes(tmp_path):
    release = write_imagenet_d(tmp_path, clean=True)
    doc = evaluate_model(
        IndexColourClassifier(), benchmark="imagenet-d", data=str(release), **QUIET
    )
    assert doc["variants"]["clean"]["n"] == 5  # the goldfish skipped, and counted
    assert doc["data"]["skipped"]["clean/test"]["outside_benchmark_classes"]["count"] == 1
    # background holds alarm clock, chair, pen, wok: of their clean photos 2 of 3 are right
    assert doc["drop/background"] == pytest.approx(2 / 3 - 1 / 2)
    assert doc["drop/background_n"] == {"clean": 3, "background": 4}
    assert doc["drop/texture"] == pytest.approx(1 - 1 / 2)  # backpack's one photo
    assert doc["drop/material"] == pytest.approx(0.0)  # tie's one photo, and material's 100%
    lo, hi = doc["drop/background_ci95"]
    assert lo < doc["drop/background"] < hi


def test_newcombe_interval_equals_the_published_examples():
    from hf_bgbench.metrics import newcombe_interval

    # Newcombe (1998), Stat. Med. 17:873, Table II, method 10
    assert newcombe_interval(56, 70, 48, 80) == pytest.approx((0.0524, 0.3339), abs=1e-4)
    assert newcombe_interval(9, 10, 3, 10) == pytest.approx((0.1705, 0.8090), abs=1e-4)


# --------------------------------------------------------------------------- the VQA rule

WORDS = {"t shirt": ("t-shirt", "shirt"), "alarm clock": ("clock",)}
OUTER = (("pen", "can opener"), ("plate", "drying rack for plates"))


@pytest.mark.parametrize(
    "answer, truth, negative, verdict",
    [
        ("It is an alarm clock.", "alarm clock", "watch", "true"),
        ("A CLOCK", "alarm clock", "watch", "true"),  # another word, lower-cased
        ("a watch", "alarm clock", "watch", "false"),
        ("a watch or a clock", "alarm clock", "watch", "both"),
        ("I cannot tell", "alarm clock", "watch", "neither"),
        ("pen", "pen", "can opener", "true"),
        ("a can opener", "pen", "can opener", "false"),  # "pen" is inside "opener"
        ("a can opener", "can opener", "pen", "true"),
        ("drying rack for plates", "plate", "drying rack for plates", "false"),
        ("a plate", "drying rack for plates", "plate", "false"),
        ("a t-shirt", "t shirt", "sweater", "true"),
        ("category", "cat", "dog", "true"),  # substrings, as the authors match
    ],
)
def test_pair_verdict_is_the_authors(answer, truth, negative, verdict):
    assert pair_verdict(answer, truth, negative, WORDS, OUTER) == verdict


def test_the_question_decodes_greedily_with_the_authors_token_budget():
    question = PairQuestion("Q {first}, {second}.", max_new_tokens=512)
    names = ClassNames(("a", "b"), "two")
    settings = VlmSettings(protocol=PAIR, classes=names, question=question)
    rule = PairRule(settings, ("a", "b"), Backend())
    (request,) = rule.requests(torch.zeros(1, 3, 8, 8), [{"label": 1, "negative": 0}])
    assert (request.max_new_tokens, request.text) == (512, "Q b, a.")
    assert settings.user_text(pair=("a", "b")) == "Q a, b."


SCRIPT = {  # image -> the answer the scripted model gives
    "background/alarm_clock": "It is an alarm clock.",  # true
    "background/chair": "bench",  # false
    "background/pen": "pen or can opener",  # the negative's name holds the truth's: false
    "background/wok": "A wok.",  # true
    "texture/backpack": "backpack",  # true
    "texture/plate": "plate",  # the rack first, absent; then the plate: true
    "material/t_shirt": "t-shirt",  # another word: true
    "material/tie": "a necklace and a tie",  # both: left out
}


@pytest.mark.parametrize("layout", ["release", "converted"])
def test_vlm_is_asked_the_authors_two_way_question(release, layout, tmp_path, monkeypatch):
    from tests.vlm_fixtures import write_llava

    asked: list[str] = []
    script = dict(SCRIPT)

    def scripted(self, pixels, prompt, max_new_tokens):
        assert max_new_tokens == 512 and len(pixels) == 1
        asked.append(prompt)
        key = next(k for k in script if f"list: {AUTHORS_NAME[k.split('/')[1]]}," in prompt)
        return [script.pop(key)]

    monkeypatch.setattr(TransformersBackend, "_generate", scripted)
    data = release
    if layout == "converted":
        data = tmp_path / "converted"
        assert main(["convert", "imagenet-d", str(release), str(data), "--quiet"]) == 0
    out = tmp_path / "out"
    llava = write_llava(tmp_path / "llava")
    doc = evaluate_model(
        str(llava), benchmark="imagenet-d", data=str(data), output_dir=out, **QUIET
    )
    for subset, cases in CASES.items():
        verdicts = []
        for folder, _, top1, top2 in cases:
            truth, negative = AUTHORS_NAME[folder], hard_negative(folder, top1, top2)
            question = (
                "What is the main object in this image? Choose from the following list: "
                f"{truth}, {negative}."
            )
            assert sum(question in a for a in asked) == 1
            answer = pd.read_parquet(out / "predictions" / f"{subset}.parquet")
            answer = answer.set_index("id").loc[image_dir(subset, folder)]
            verdicts.append(answer["verdict"])
            assert answer["verdict"] == pair_verdict(
                answer["answer"], truth, negative, WORDS, OUTER
            )
        kept = [v for v in verdicts if v in ("true", "false")]
        assert doc["variants"][subset]["accuracy"] == pytest.approx(kept.count("true") / len(kept))
        assert doc["variants"][subset]["n"] == len(kept)
        both, neither = verdicts.count("both"), verdicts.count("neither")
        assert doc["unanswered"][subset] == {
            "unanswered": len(cases) - len(kept),
            "n": len(cases),
            "both": both,
            "neither": neither,
        }
    assert (doc["variants"]["background"]["accuracy"], doc["variants"]["material"]["n"]) == (0.5, 1)
    assert doc["vlm"]["protocol"] == "pair" and doc["vlm"]["rule_source"] == "protocol imagenet-d"
    assert doc["protocol"]["departures"] == []
    assert any("greedily" in d for d in doc["protocol"]["deviations"])
    report = (out / "results.md").read_text()
    said = "left out of the accuracy, as the protocol's authors do): background 0 of 4 (both 0, "
    assert said in report and "material 1 of 2 (both 1, neither 0)" in report
    # the model card names the rule, and both counts where answers were left out
    card = yaml.safe_load((out / "results_model_index.yaml").read_text())["model-index"][0]
    entries = {r["dataset"].get("config"): r["dataset"] for r in card["results"]}
    assert entries["material"]["args"]["vlm_rule"] == "pair"
    assert entries["material"]["args"]["vlm_unanswered"] == "1 of 2"
    assert "answered of 4 images per variant" in entries["material"]["name"]


def test_vlm_under_bgbench_protocol_is_scored_by_the_vlm_options(release, tmp_path):
    from tests.vlm_fixtures import write_llava

    doc = evaluate_model(
        str(write_llava(tmp_path / "llava")),
        benchmark="imagenet-d",
        data=str(release),
        variants=["material"],
        protocol="imagenet-d-bgbench",
        **QUIET,
    )
    assert doc["vlm"]["protocol"] == "likelihood" and len(doc["vlm"]["choices"]) == 113
    assert doc["vlm"]["rule_source"] == "options"
    assert any("likelihood rule" in d for d in doc["protocol"]["departures"])
    assert not any("greedily" in d for d in doc["protocol"]["deviations"])


def test_vlm_that_never_names_one_class_is_refused_plainly(release, tmp_path, monkeypatch):
    from tests.vlm_fixtures import write_llava

    monkeypatch.setattr(
        TransformersBackend, "_generate", lambda self, pixels, prompt, n: ["no idea"] * len(pixels)
    )
    with pytest.raises(ValueError, match="no accuracy to report"):
        evaluate_model(
            str(write_llava(tmp_path / "llava")),
            benchmark="imagenet-d",
            data=str(release),
            variants=["material"],
            **QUIET,
        )


def test_a_vlm_that_never_follows_the_question_is_stopped_early(release, tmp_path, monkeypatch):
    """Fixed: such a run computed every image (26 minutes) before refusing."""
    from hf_bgbench.models.vlm import load
    from tests.vlm_fixtures import write_llava

    asked = []

    def never(self, pixels, prompt, n):
        asked.append(len(pixels))
        return ["no idea"] * len(pixels)

    monkeypatch.setattr(TransformersBackend, "_generate", never)
    monkeypatch.setattr(load, "NO_ANSWER_STOP", 2)
    with pytest.raises(ValueError, match="answered none of 4 images in a row"):
        evaluate_model(
            str(write_llava(tmp_path / "llava")),
            benchmark="imagenet-d",
            data=str(release),
            **QUIET,
        )
    assert sum(asked) == 4  # the first batch (background's 4 images), none of the others


# --------------------------------------------------------------------------- conversion, Hub


def test_convert_validate_and_score_the_converted_copy(release, tmp_path, capsys):
    from tests.imagenet_d_fixture import write_clean

    out, clean = tmp_path / "converted", write_clean(tmp_path / "clean")
    argv = ["convert", "imagenet-d", str(release.parent), str(out), "--clean", str(clean)]
    assert main([*argv, "--quiet"]) == 0
    assert "skipped 1 file(s) of clean: outside_benchmark_classes" in capsys.readouterr().out
    assert main(["validate", str(out)]) == 0
    assert "valid imagenet-d dataset" in capsys.readouterr().out
    card = (out / "README.md").read_text()
    assert "license: mit" in card and "zhang2024imagenet_d" in card
    doc = evaluate_model(IndexColourClassifier(), benchmark="imagenet-d", data=str(out), **QUIET)
    for subset in SUBSETS:
        assert doc["variants"][subset]["accuracy"] == authors_classifier_accuracy(subset)
    assert doc["drop/background"] == pytest.approx(2 / 3 - 1 / 2)
    from_release = evaluate_model(
        IndexColourClassifier(), benchmark="imagenet-d", data=str(release), **QUIET
    )
    assert doc["data"]["fingerprint"] != from_release["data"]["fingerprint"]


def test_the_hub_dataset_is_read_from_the_cache_offline(release, tmp_path, monkeypatch):
    import huggingface_hub.constants as hub_constants

    cache = tmp_path / "hub"
    as_hub_cache(release, cache)
    monkeypatch.setattr(hub_constants, "HF_HUB_CACHE", str(cache))
    assert cached_imagenet_d() is not None
    # --data names the repo; no --data: the cached download
    for data in ("zcs15/ImageNet-D", None):
        doc = evaluate_model(IndexColourClassifier(), benchmark="imagenet-d", data=data, **QUIET)
        assert doc["data"]["revision"] == "c" * 40
        assert doc["variants"]["background"]["accuracy"] == authors_classifier_accuracy(
            "background"
        )
    spec = get_benchmark("imagenet-d")
    assert resolve_source("zcs15/ImageNet-D", spec, hub_only=True).kind == "imagenet-d-release"


def test_the_hub_dataset_not_cached_offline_says_how_to_get_it(tmp_path, monkeypatch, capsys):
    import huggingface_hub.constants as hub_constants

    monkeypatch.setattr(hub_constants, "HF_HUB_CACHE", str(tmp_path / "empty"))
    argv = ["evaluate", "tf_efficientnet_lite0", "--benchmark", "imagenet-d", "--quiet"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "bgbench download imagenet-d" in err and "Traceback" not in err


def test_listed(capsys):
    assert main(["list"]) == 0
    assert "imagenet-d" in capsys.readouterr().out


# --------------------------------------------------------------------------- report, table, compare


def test_report_table_and_compare(tmp_path, capsys):
    release = write_imagenet_d(tmp_path / "data", clean=True)
    folders = {}
    for name, model in (("index", IndexColourClassifier()), ("lite0", "tf_efficientnet_lite0")):
        folders[name] = tmp_path / name
        evaluate_model(
            model, benchmark="imagenet-d", data=str(release), output_dir=folders[name], **QUIET
        )
    report = tmp_path / "report"
    argv = ["report", "tf_efficientnet_lite0", "--benchmarks", "imagenet-d", "--data"]
    assert main([*argv, f"imagenet-d={release}", "--output", str(report), "--quiet"]) == 0
    doc = json.loads((report / "report.json").read_text())
    rows = {h["key"]: h for h in doc["headlines"]}
    lite0 = json.loads((folders["lite0"] / "results.json").read_text())
    drops = {s: lite0[f"drop/{s}"] for s in SUBSETS}
    worst = max(drops, key=drops.get)
    assert rows["drop/"]["which"] == worst and rows["drop/"]["reliance"] == 1
    assert rows["drop/"]["value"] == pytest.approx(100 * drops[worst])
    for subset in SUBSETS:
        assert rows[f"accuracy/{subset}"]["value"] == pytest.approx(
            100 * lite0["variants"][subset]["accuracy"]
        )
    assert (
        main(
            ["table", str(folders["index"]), str(folders["lite0"]), "--output", str(tmp_path / "t")]
        )
        == 0
    )
    table = (tmp_path / "t" / "table.md").read_text()
    assert "| index-colour | 50.0 [" in table  # background, by the authors' rule: 2 of 4
    assert (
        main(
            [
                "compare",
                str(folders["index"]),
                str(folders["lite0"]),
                "--output",
                str(tmp_path / "c"),
            ]
        )
        == 0
    )
    compared = json.loads((tmp_path / "c" / "compare.json").read_text())
    row = next(r for r in compared["rows"] if r["key"] == "accuracy/background")
    assert row["a"] == pytest.approx(50.0) and row["n"] == 4


def test_dataset_script_converts_and_publish_checks_it(release, tmp_path, capsys):
    import runpy

    script = Path(__file__).parents[1] / "dataset_scripts" / "imagenet_d.py"
    convert = runpy.run_path(str(script))["main"]
    assert convert([str(release), str(tmp_path / "out"), "--quiet"]) == 0
    argv = ["publish", str(tmp_path / "out"), "--repo-id", "bgbench/imagenet-d", "--dry-run"]
    assert main([*argv, "--eval-yaml"]) == 0
    said = capsys.readouterr().out
    assert "`bgbench validate` passes (imagenet-d)" in said and "eval.yaml" in said
    tasks = (tmp_path / "out" / "eval.yaml").read_text()
    assert all(f"id: accuracy_{s}" in tasks for s in SUBSETS)


def test_validate_names_a_row_whose_hard_negative_is_its_own_class(release, tmp_path, capsys):
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = tmp_path / "converted"
    assert main(["convert", "imagenet-d", str(release), str(out), "--quiet"]) == 0
    shard = next((out / "data" / "texture").glob("*.parquet"))
    table = pq.read_table(shard)
    own = pa.array(table.column("label").to_pylist(), type=table.schema.field("negative").type)
    pq.write_table(
        table.set_column(table.schema.get_field_index("negative"), "negative", own), shard
    )
    capsys.readouterr()
    assert main(["validate", str(out)]) == 1
    said = capsys.readouterr().out
    assert "texture/test: 2 row(s) have no valid hard negative" in said
