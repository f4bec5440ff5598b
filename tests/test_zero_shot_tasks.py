"""Every task runs on a zero-shot model and records its head.

Tiny randomly initialised CLIPs (tests/clip_fixtures.py: open_clip and transformers, 64x64
input, patch 16, so a 4x4 grid and a class token) on the synthetic IN-9 of
tests/in9_fixture.py and the RIVAL10 fixture of tests/rival10_fixture.py. ``evaluate`` itself
is covered by tests/test_zero_shot.py. To keep the text side cheap, the heads take one
template (a file), and the transformers CLIP the benchmark's own class names; the text
embeddings of the open_clip head over ImageNet's 1000 classes are computed once (the module's
first load) and read from the cache by every later task.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import torch

from hf_bgbench.benchmarks import get_benchmark
from hf_bgbench.cli import main
from hf_bgbench.models import load_classifier
from hf_bgbench.tasks.attribution import run_attribution
from hf_bgbench.tasks.evaluate import evaluate_model
from hf_bgbench.tasks.graying import run_graying
from hf_bgbench.tasks.noise import run_noise
from hf_bgbench.tasks.run_model import zero_shot_classnames
from tests.clip_fixtures import TEMPLATE

QUIET = {"progress": False, "num_workers": 0, "device": "cpu"}
CLI_QUIET = ["--workers", "0", "--device", "cpu", "--quiet"]
RESIZED = "resized 224x224 -> 64x64"  # IN-9's images, to the tiny towers' fixed input
# the Grad-CAM layer of a CLIP ViT: its last block's first norm, the class token dropped
OPEN_CLIP_LAYER = "tower.transformer.resblocks.1.ln_1"
HF_CLIP_LAYER = "tower.model.vision_model.encoder.layers.1.layer_norm1"


@pytest.fixture(scope="module")
def clip(open_clip_folder, one_template):
    """The open_clip CLIP as every task below loads it (its text embeddings cached here)."""
    return load_classifier(str(open_clip_folder), templates=one_template, progress=False)


@pytest.fixture(scope="module")
def rival10(tmp_path_factory) -> Path:
    from tests.rival10_fixture import write_rival10_release

    return write_rival10_release(tmp_path_factory.mktemp("rival10"))


def assert_head(doc: dict, clf, num_classes: int = 1000) -> None:
    """The results record the zero-shot head that scored them: the loaded model's."""
    z, loaded = doc["zero_shot"], clf.zero_shot.record()
    assert {k: v for k, v in z.items() if k != "logit_scale"} == {
        k: v for k, v in loaded.items() if k != "logit_scale"
    }
    assert z["logit_scale"] == pytest.approx(loaded["logit_scale"])
    assert (z["num_classes"], z["num_templates"], z["templates"]) == (num_classes, 1, [TEMPLATE])
    assert doc["label_protocol"].startswith(f"zero-shot head: {num_classes} class names")
    assert "probe" not in doc


# --------------------------------------------------------------------------- the tasks


def test_challenge(clip, open_clip_folder, one_template, in9_release, tmp_path):
    out = tmp_path / "out"
    argv = ["challenge", str(open_clip_folder), "--data", str(in9_release), "--output", str(out)]
    argv += ["--max-foregrounds", "3", "--max-backgrounds", "3", "--no-cache"]
    assert main([*argv, "--templates", one_template, *CLI_QUIET]) == 0
    doc = json.loads((out / "challenge.json").read_text())
    assert_head(doc, clip)
    assert (doc["n_foregrounds"], doc["n_backgrounds"]) == (3, 3)
    assert 0.0 <= doc["challenge_accuracy"] <= 1.0
    assert any(d.startswith(RESIZED) for d in doc["protocol_deviations"])


def test_noise(clip, open_clip_folder, one_template, in9_release):
    doc = run_noise(
        str(open_clip_folder),
        str(in9_release),
        levels=[60],
        trials=1,
        max_images=4,
        templates=one_template,
        **QUIET,
    )
    assert_head(doc, clip)
    assert doc["n_images"] == 4 and -1.0 <= doc["rfs"] <= 1.0


@pytest.mark.parametrize(
    ("folder", "layer", "classes"),
    [
        ("open_clip_folder", OPEN_CLIP_LAYER, "imagenet"),
        ("hf_clip_folder", HF_CLIP_LAYER, "benchmark"),  # 9 prompts: a cheap text side
    ],
)
def test_saliency_finds_the_clip_layer(
    folder, layer, classes, one_template, in9_release, tmp_path, request
):
    """No --target-layer: the CLIP ViT's last block's first norm, as tokens, the class token
    dropped, on the 4x4 grid of the 64x64 input that IN-9's images are resized to."""
    path = str(request.getfixturevalue(folder))
    out = tmp_path / "out"
    argv = ["saliency", path, "--data", str(in9_release), "--output", str(out)]
    argv += ["--max-images", "4", "--gallery", "0", "--zero-shot-classes", classes]
    assert main([*argv, "--templates", one_template, *CLI_QUIET]) == 0
    doc = json.loads((out / "saliency.json").read_text())
    assert doc["target_layer"] == {
        "name": layer,
        "layout": "tokens",
        "auto": True,
        "prefix_tokens": 1,
        "grid": [4, 4],
    }
    clf = load_classifier(
        path,
        classnames=zero_shot_classnames(classes, get_benchmark("in9")),
        templates=one_template,
        progress=False,
    )
    assert_head(doc, clf, 1000 if classes == "imagenet" else 9)
    assert doc["n_images"] == 4


def test_graying(clip, open_clip_folder, one_template, in9_release):
    doc = run_graying(
        str(open_clip_folder), str(in9_release), max_images=4, templates=one_template, **QUIET
    )
    assert_head(doc, clip)
    assert doc["n_images"] == 4
    # scored through its own (zero-shot) classes: there is no linear head to re-fit
    assert any("no head to re-fit" in d for d in doc["protocol_deviations"])


def test_attribution_explains_the_image_embedding(clip, open_clip_folder, one_template, rival10):
    """The features attributed are the image tower's embedding (16 dimensions), explained
    at the same layer as saliency."""
    doc = run_attribution(
        str(open_clip_folder),
        str(rival10),
        benchmark="rival10",
        label_map="imagenet",
        max_images=6,
        max_features=2,
        top_k=1,
        gallery=0,
        templates=one_template,
        **QUIET,
    )
    assert_head(doc, clip)
    assert doc["feature_dim"] == 16  # tests/clip_fixtures.py: embed_dim
    assert doc["target_layer"]["name"] == OPEN_CLIP_LAYER
    assert doc["target_layer"]["layout"] == "tokens" and doc["target_layer"]["grid"] == [4, 4]


def test_linear_probe_on_the_image_tower(clip, open_clip_folder, one_template, rival10):
    """--label-map probe: a linear head on the CLIP's image embedding (the record names the
    features probed); the text head plays no part, so it is neither built nor recorded."""
    doc = evaluate_model(
        str(open_clip_folder),
        benchmark="rival10",
        data=str(rival10),
        label_map="probe",
        protocol="bgbench-v1",  # the L-BFGS head: fast on 20 train images
        templates=one_template,
        use_cache=False,
        **QUIET,
    )
    probe = doc["probe"]
    assert probe["features"] == clip.features_source
    assert "image tower's embedding" in probe["features"]
    tower = load_classifier(str(open_clip_folder), classnames=None)  # the image tower alone
    assert tower.zero_shot is None and tower.label_space.num_classes == 0
    assert probe["feature_dim"] == 16 and probe["base_fingerprint"] == tower.fingerprint
    assert doc["label_protocol"].startswith("linear probe")
    assert doc["model_label_space"] == "rival10" and "zero_shot" not in doc


# --------------------------------------------------------------------------- label maps


def _predictions(folder: Path, variant: str) -> pd.DataFrame:
    return pd.read_parquet(next((folder / "predictions").glob(f"{variant}*.parquet")))


def test_label_map_model_scores_the_zero_shot_head_not_a_probe(
    clip, open_clip_folder, one_template, rival10, tmp_path
):
    """RIVAL10's protocol is a linear probe; --label-map model scores the CLIP through its
    zero-shot head over ImageNet's classes, mapped (never a probe or a fresh head): the
    per-image predictions are the loaded zero-shot classifier's."""
    from hf_bgbench.data.sources import resolve_source
    from hf_bgbench.inference.geometry import Stretch
    from hf_bgbench.inference.model_step import ModelStep

    out = tmp_path / "out"
    argv = ["evaluate", str(open_clip_folder), "--benchmark", "rival10", "--data", str(rival10)]
    argv += ["--label-map", "model", "--output", str(out), "--templates", one_template]
    assert main([*argv, *CLI_QUIET]) == 0
    doc = json.loads((out / "results.json").read_text())
    assert_head(doc, clip)
    assert doc["model_label_space"] == "imagenet-1k"
    assert any("--label-map model" in d for d in doc["protocol_deviations"])
    table = _predictions(out, "ordinary")
    test = resolve_source(str(rival10), get_benchmark("rival10")).load("ordinary", split="test")
    stretch = Stretch((64, 64))  # the paper's 224x224 stretch, at the model's 64x64 input
    batch = torch.stack([stretch(row["image"]) for row in test])
    by_id = dict(zip(test["id"], ModelStep(clip).logits(batch).argmax(1).tolist(), strict=True))
    assert table["pred_model"].tolist() == [by_id[i] for i in table["id"]]


def test_benchmark_classes_head_speaks_the_benchmark(
    hf_clip_folder, one_template, in9_release, tmp_path
):
    """--zero-shot-classes benchmark under --label-map model: a head over IN-9's own nine
    class names (label space in9, recorded), its predictions those of transformers' own
    CLIP features with those nine prompts."""
    from transformers import CLIPModel, CLIPTokenizer

    from hf_bgbench.data.sources import resolve_source

    names = list(get_benchmark("in9").classes)
    doc = evaluate_model(
        str(hf_clip_folder),
        benchmark="in9",
        data=str(in9_release),
        variants=["original"],
        label_map="model",
        zero_shot_classes="benchmark",
        templates=one_template,
        use_cache=False,
        output_dir=tmp_path / "out",
        **QUIET,
    )
    assert doc["model_label_space"] == "in9"
    assert doc["zero_shot"]["classnames"] == names and doc["zero_shot"]["num_templates"] == 1
    assert doc["zero_shot"]["classnames_source"] == "benchmark (IN-9's own 9 classes)"
    assert doc["label_protocol"].startswith("zero-shot head: 9 class names")
    # independently: transformers' CLIP, the nine prompts, cosine similarity
    model = CLIPModel.from_pretrained(hf_clip_folder).eval()
    tokenizer = CLIPTokenizer.from_pretrained(hf_clip_folder)
    pre = load_classifier(
        str(hf_clip_folder), classnames=names, templates=one_template, progress=False
    ).preprocessing
    ds = resolve_source(str(in9_release), get_benchmark("in9")).load("original")
    pixels = torch.stack([pre.precropped_transform()(row["image"]) for row in ds])
    prompts = tokenizer([TEMPLATE.format(n) for n in names], padding=True, return_tensors="pt")
    with torch.no_grad():
        text = torch.nn.functional.normalize(_tensor(model.get_text_features(**prompts)), dim=-1)
        image = torch.nn.functional.normalize(_tensor(model.get_image_features(pixels)), dim=-1)
    expected = dict(zip(ds["id"], (image @ text.T).argmax(1).tolist(), strict=True))
    table = _predictions(tmp_path / "out", "original")
    assert table["pred_model"].tolist() == [expected[i] for i in table["id"]]
    assert (table["pred"] == table["pred_model"]).all()  # its classes are IN-9's, unmapped


def _tensor(out) -> torch.Tensor:
    """transformers 5 returns a model output from get_*_features; 4 a tensor."""
    return out if isinstance(out, torch.Tensor) else out.pooler_output


# --------------------------------------------------------------------------- report, compare


@pytest.fixture(scope="module")
def clip_report(clip, open_clip_folder, one_template, in9_release, tmp_path_factory) -> Path:
    """`bgbench report` of the open_clip CLIP on IN-9 (a sample of 2 challenge foregrounds),
    with the one template of the `clip` fixture (--templates; its text embeddings cached)."""
    out = tmp_path_factory.mktemp("clip_report") / "report"
    argv = ["report", str(open_clip_folder), "--data", f"in9={in9_release}", "--benchmarks"]
    argv += ["in9", "--challenge-foregrounds", "2", "--output", str(out), *CLI_QUIET]
    assert main([*argv, "--templates", one_template]) == 0
    return out


def test_report_card_of_a_clip_names_its_head(clip, clip_report, one_template):
    doc = json.loads((clip_report / "report.json").read_text())
    (bench,) = doc["benchmarks"]
    assert set(bench["tasks"]) == {"evaluate", "challenge"}
    for entry in bench["tasks"].values():
        assert entry["status"] == "run"
        z = entry["results"]["zero_shot"]
        assert z["templates_source"] == "file templates.txt" and z["templates"] == [TEMPLATE]
        assert z["text_embeddings_sha256"] == clip.zero_shot.embeddings_sha256
    assert all(r["status"] == "run" for r in doc["headlines"])
    head = "zero-shot head: 1000 class names (imagenet) x 1 templates (file templates.txt)"
    assert f"### Zero-shot head\n\n- IN-9: {head}" in (clip_report / "report.md").read_text()
    # a local build and a templates file: neither is the published benchmark and protocol
    assert not (clip_report / ".eval_results").exists()
    (withheld, *_) = [w for w in doc["eval_results_withheld"] if w["task"] == "evaluate"]
    assert withheld["reason"].startswith("scored on ")
    departures = bench["tasks"]["evaluate"]["results"]["protocol"]["departures"]
    assert departures[0] == f"a zero-shot head with --templates {one_template}"
    assert departures[1].startswith("resized 224x224 -> 64x64")  # the tiny CLIP's own size
    sampled = bench["tasks"]["challenge"]["results"]["protocol"]["departures"]
    assert "a seeded subset: 2 of 18 foregrounds (--max-foregrounds)" in sampled


def test_report_zero_shot_options_reach_every_task(
    clip, open_clip_folder, one_template, in9_release, tmp_path
):
    """run_report's --templates / --zero-shot-classes: every task's head is made with them
    (and the model's up-front check too); a model with a trained head refuses them before
    any task runs."""
    from hf_bgbench.models.errors import ModelLoadError
    from hf_bgbench.report.card import run_report

    doc = run_report(
        str(open_clip_folder),
        tmp_path / "report",
        data={"in9": str(in9_release)},
        benchmarks=["in9"],
        challenge_foregrounds=1,
        task_options={"evaluate": {"variants": ["original"]}},
        templates=one_template,
        **QUIET,
    )
    for entry in doc["benchmarks"][0]["tasks"].values():
        z = entry["results"]["zero_shot"]
        assert z["templates_source"] == "file templates.txt"
        assert z["text_embeddings_sha256"] == clip.zero_shot.embeddings_sha256
    with pytest.raises(ModelLoadError, match="apply only to zero-shot models"):
        run_report(
            "tf_efficientnet_lite0",
            tmp_path / "refused",
            data={"in9": str(in9_release)},
            benchmarks=["in9"],
            templates="simple",
            **QUIET,
        )
    assert not (tmp_path / "refused" / "in9").exists()


def test_compare_a_clip_with_a_supervised_model_on_the_same_images(
    clip, open_clip_folder, one_template, in9_release, tmp_path
):
    """`bgbench compare` of the CLIP's evaluate run against a supervised ImageNet model's
    (a tiny random timm ResNet saved with save_for_hf) on the same IN-9 images: paired over
    all 18 of each variant, each side's head named."""
    import timm
    from timm.models import save_for_hf

    torch.manual_seed(0)
    supervised = tmp_path / "tiny-resnet"
    save_for_hf(timm.create_model("test_resnet", pretrained=False).eval(), str(supervised))
    runs: dict[str, Path] = {}
    for name, model, extra in [
        ("clip", str(open_clip_folder), ["--templates", one_template]),
        ("supervised", str(supervised), []),
    ]:
        runs[name] = tmp_path / f"{name}-run"
        argv = ["evaluate", model, "--data", str(in9_release), "--output", str(runs[name])]
        argv += ["--variants", "original", "mixed_same", "mixed_rand", *extra]
        assert main([*argv, *CLI_QUIET]) == 0
    out = tmp_path / "compare"
    assert main(["compare", str(runs["clip"]), str(runs["supervised"]), "--output", str(out)]) == 0
    doc = json.loads((out / "compare.json").read_text())
    rows = {r["key"]: r for r in doc["rows"]}
    assert {"bg_gap", "accuracy/original", "accuracy/mixed_rand"} <= set(rows)
    assert all(r["n"] == 18 and r["n_only_a"] == r["n_only_b"] == 0 for r in rows.values())
    assert doc["a"]["zero_shot"] == [
        "zero-shot head: 1000 class names (imagenet) x 1 templates (file templates.txt), "
        f"CLIP's recipe ({clip.zero_shot.library}); text embeddings sha256 "
        f"{clip.zero_shot.embeddings_sha256[:12]}"
    ]
    assert doc["b"]["zero_shot"] == []
    assert "A (" in (out / "compare.md").read_text()
    assert "is scored through a zero-shot head" in (out / "compare.md").read_text()


# --------------------------------------------------------------------------- every benchmark


def _imagenet_e(tmp: Path) -> Path:
    from hf_bgbench.benchmarks.imagenet_e.convert import convert_imagenet_e_release
    from tests.test_imagenet_e import _write_release

    out = tmp / "imagenet-e"
    convert_imagenet_e_release(
        _write_release(tmp / "release"), out, progress=False, spec=get_benchmark("imagenet-e")
    )
    return out


def _watermark(tmp: Path) -> Path:
    from tests.test_watermark_benchmark import write_photos

    out = tmp / "built"
    argv = ["build", "watermark", "--images", str(write_photos(tmp / "images"))]
    assert main([*argv, "--output", str(out), "--quiet", "--workers", "1"]) == 0
    return out


@pytest.mark.parametrize(
    ("benchmark", "build", "key"),
    [("imagenet-e", _imagenet_e, "mean_da"), ("watermark", _watermark, None)],
)
def test_every_benchmark_scores_the_zero_shot_head_through_its_published_mapping(
    clip, open_clip_folder, one_template, benchmark, build, key, tmp_path
):
    """The head covers ImageNet's 1000 classes, so ImageNet-E's and the watermark
    benchmark's published protocols apply unchanged (1000-class argmax, their mapping)."""
    doc = evaluate_model(
        str(open_clip_folder),
        benchmark=benchmark,
        data=str(build(tmp_path)),
        templates=one_template,
        use_cache=False,
        **QUIET,
    )
    assert_head(doc, clip)
    assert doc["model_label_space"] == "imagenet-1k" and len(doc["variants"]) >= 2
    assert all(v["n"] > 0 for v in doc["variants"].values())
    if key is not None:
        assert key in doc
