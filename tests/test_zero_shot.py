"""Zero-shot models (CLIP, SigLIP, open_clip): loaded by what their files say, scored with
CLIP's recipe from open_clip, predictions equal the libraries' own, recorded to reproduce.

Tiny randomly initialised models, built here and written the way each library publishes them
(tests/clip_fixtures.py); nothing is downloaded."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from hf_bgbench.cli import main
from hf_bgbench.models import load_classifier
from hf_bgbench.models.zero_shot import ZeroShotError, prompts_for
from tests.clip_fixtures import (
    SIZE,
    TEMPLATE,
    as_hub_cache,
    write_transformers_siglip,
)


def _photos(n: int = 12, size: tuple[int, int] = (SIZE, SIZE), seed: int = 0) -> list[Image.Image]:
    rng = np.random.default_rng(seed)
    return [
        Image.fromarray(rng.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8))
        for _ in range(n)
    ]


def _predict(clf, images: list[Image.Image]) -> torch.Tensor:
    transform = clf.preprocessing.full_transform()
    with torch.inference_mode():
        return clf.logits(torch.stack([transform(im) for im in images])).argmax(1).cpu()


# --------------------------------------------------------------------------- the recipe


def test_open_clip_predictions_equal_build_zero_shot_classifier(open_clip_folder):
    """Our head and open_clip's own (build_zero_shot_classifier + encode_image, its own
    preprocess) give the same class for every image (photos larger than the input: resize
    and centre crop included)."""
    import open_clip

    clf = load_classifier(str(open_clip_folder), templates="simple", progress=False)
    assert clf.source == "open_clip" and clf.label_space.kind == "imagenet-1k"
    model, _, preprocess = open_clip.create_model_and_transforms(f"local-dir:{open_clip_folder}")
    tokenizer = open_clip.get_tokenizer(f"local-dir:{open_clip_folder}")
    weights = open_clip.build_zero_shot_classifier(
        model.eval(),
        tokenizer,
        open_clip.IMAGENET_CLASSNAMES,
        open_clip.SIMPLE_IMAGENET_TEMPLATES,
    )
    images = _photos(16, size=(97, 80))
    with torch.no_grad():
        feats = model.encode_image(torch.stack([preprocess(im) for im in images]), normalize=True)
    reference = (feats @ weights).argmax(1)
    assert torch.equal(_predict(clf, images), reference)
    record = clf.zero_shot.record()
    assert record["num_templates"] == len(open_clip.SIMPLE_IMAGENET_TEMPLATES)
    assert record["templates"][0] == open_clip.SIMPLE_IMAGENET_TEMPLATES[0]("{}")
    assert record["classnames"] == list(open_clip.IMAGENET_CLASSNAMES)
    torch.testing.assert_close(clf.model.class_embeddings.cpu(), weights)


@pytest.fixture(scope="module")
def hf_siglip_folder(tmp_path_factory) -> Path:
    return write_transformers_siglip(tmp_path_factory.mktemp("siglip") / "tiny-siglip")


@pytest.mark.parametrize("folder", ["hf_clip_folder", "hf_siglip_folder"])
def test_transformers_predictions_equal_the_zero_shot_pipeline(folder, one_template, request):
    """A transformers CLIP or SigLIP (save_pretrained, CLIP's real BPE vocabulary) scored
    through bgbench and through transformers' own zero-shot-image-classification pipeline,
    with the same 1000 class names and the one template, predicts the same class for every
    image (SigLIP: prompts padded to the full length, its logit bias recorded)."""
    import open_clip
    from transformers import pipeline

    folder = request.getfixturevalue(folder)
    clf = load_classifier(str(folder), templates=str(one_template), progress=False)
    assert clf.source == "transformers" and clf.label_space.kind == "imagenet-1k"
    record = clf.zero_shot.record()
    assert record["templates"] == [TEMPLATE]
    assert record["logit_bias"] == (pytest.approx(-3.0) if "siglip" in folder.name else None)
    names = list(open_clip.IMAGENET_CLASSNAMES)
    pipe = pipeline("zero-shot-image-classification", model=str(folder))
    images = _photos(4)  # the pipeline embeds the 1000 prompts again for every image
    ours = _predict(clf, images).tolist()
    for image, predicted in zip(images, ours, strict=True):
        top = pipe(image, candidate_labels=names, hypothesis_template=TEMPLATE)[0]["label"]
        assert names[predicted] == top


def test_open_clip_text_tower_cut_at_the_longest_prompt_equals_the_full_context(
    open_clip_folder,
):
    """open_clip pads every prompt to 77 tokens; a causal text tower read at the end-of-text
    token gives the same embedding from the tokens up to the longest prompt's end."""
    import open_clip

    from hf_bgbench.models.open_clip_models import text_encoder

    model, _, _ = open_clip.create_model_and_transforms(f"local-dir:{open_clip_folder}")
    tokenizer = open_clip.get_tokenizer(f"local-dir:{open_clip_folder}")
    encode, how = text_encoder(model.eval(), tokenizer)
    tokens = tokenizer(
        [t(c) for c in ("tench", "great white shark") for t in open_clip.OPENAI_IMAGENET_TEMPLATES]
    )
    assert how == "cut-padding" and int((tokens != 0).sum(1).max()) < tokens.shape[1]
    with torch.no_grad():
        torch.testing.assert_close(encode(tokens), model.encode_text(tokens))
    clf = load_classifier(str(open_clip_folder), templates="simple", progress=False)
    assert clf.zero_shot.record()["text_tokenizer"].endswith("/cut-padding")


def test_text_embeddings_are_cached_and_keyed_by_the_prompts(open_clip_folder, tmp_path):
    first = load_classifier(str(open_clip_folder), templates="simple", progress=False)
    again = load_classifier(str(open_clip_folder), templates="simple", progress=False)
    assert again.zero_shot.cached and again.fingerprint == first.fingerprint
    (tmp_path / "t.txt").write_text("a test-only photo of a {}.\n")  # no other test's prompt
    other = load_classifier(str(open_clip_folder), templates=str(tmp_path / "t.txt"))
    assert not other.zero_shot.cached
    assert other.zero_shot.embeddings_sha256 != first.zero_shot.embeddings_sha256
    assert other.fingerprint != first.fingerprint  # a cached prediction never crosses prompts


def test_a_damaged_text_embedding_cache_is_made_again(
    open_clip_folder, tmp_path, monkeypatch, caplog
):
    """Bytes of the cached embeddings changed, the file's size and header kept: the digest
    written with them tells, so the head is computed again (the same embeddings), saying so."""
    monkeypatch.setenv("HF_BGBENCH_CACHE", str(tmp_path / "cache"))
    first = load_classifier(str(open_clip_folder), templates="simple", progress=False)
    (cached,) = (tmp_path / "cache" / "text_embeddings").glob("*.safetensors")
    data = bytearray(cached.read_bytes())
    data[-64:] = bytes(64)  # the last 16 float32 values zeroed
    cached.write_bytes(bytes(data))
    with caplog.at_level("WARNING"):
        again = load_classifier(str(open_clip_folder), templates="simple", progress=False)
    assert "text-embedding cache at " in caplog.text and "digest does not match" in caplog.text
    assert not again.zero_shot.cached
    assert again.zero_shot.embeddings_sha256 == first.zero_shot.embeddings_sha256
    third = load_classifier(str(open_clip_folder), templates="simple", progress=False)
    assert third.zero_shot.cached  # rewritten whole


def test_a_text_head_whose_cache_cannot_be_written_is_used_anyway(
    open_clip_folder, tmp_path, monkeypatch, caplog
):
    """The cache root is a file: the head is computed and used (not thrown away after the
    text step), and the run says it could not be kept."""
    root = tmp_path / "a_file"
    root.write_text("not a folder")
    monkeypatch.setenv("HF_BGBENCH_CACHE", str(root))
    with caplog.at_level("WARNING"):
        clf = load_classifier(str(open_clip_folder), templates="simple", progress=False)
    assert clf.zero_shot is not None and not clf.zero_shot.cached
    assert "text-embedding cache " in caplog.text and "the head is used, not kept" in caplog.text


def test_open_clip_hub_repo_recognised_by_its_files(open_clip_folder, tmp_path, monkeypatch):
    """A Hub repo in open_clip's layout, read offline from the local Hub cache: recognised as
    open_clip by its files (no prefix), the same weights as the folder, the commit recorded."""
    from huggingface_hub import constants

    cache = tmp_path / "hub"
    as_hub_cache(open_clip_folder, cache, "someone/tiny-open-clip", commit="b" * 40)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    hub = load_classifier("someone/tiny-open-clip", templates="simple", progress=False)
    folder = load_classifier(str(open_clip_folder), templates="simple", progress=False)
    assert hub.source == "open_clip" and hub.resolved.endswith("@" + "b" * 40)
    images = _photos(6)
    assert torch.equal(_predict(hub, images), _predict(folder, images))
    same = load_classifier("open_clip:hf-hub:someone/tiny-open-clip", templates="simple")
    assert same.resolved == hub.resolved


def test_transformers_hub_repo_recognised_as_zero_shot(hf_clip_folder, tmp_path, monkeypatch):
    from huggingface_hub import constants

    cache = tmp_path / "hub"
    as_hub_cache(hf_clip_folder, cache, "someone/tiny-clip")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    clf = load_classifier("someone/tiny-clip", templates="simple", progress=False)
    assert clf.zero_shot is not None and clf.label_space.num_classes == 1000


def test_benchmark_classes_protocol_and_class_list_checks():
    from hf_bgbench.benchmarks import get_benchmark

    names = list(get_benchmark("in9").label_space.names)
    prompts = prompts_for(names, "simple")
    assert prompts.classnames == tuple(names)
    with pytest.raises(ZeroShotError, match="is empty"):
        prompts_for([], "simple")
    with pytest.raises(ZeroShotError, match=r"names 'Dog' twice \(classes 0 and 2\)"):
        prompts_for(["dog", "cat", "Dog"], "simple")
    with pytest.raises(ZeroShotError, match="has no \\{\\} where the class name goes"):
        prompts_for("imagenet", ["a photo of a dog."])
    with pytest.raises(ZeroShotError, match="not a format string"):
        prompts_for("imagenet", ["a {0} {1}"])
    # CLIP's published ImageNet names repeat two names: kept as published, recorded
    assert prompts_for().classnames.count("missile") == 2


# --------------------------------------------------------------------------- Grad-CAM layer


@pytest.mark.parametrize(
    ("folder", "layer"),
    [
        ("open_clip_folder", "tower.transformer.resblocks.1.ln_1"),
        ("hf_clip_folder", "tower.model.vision_model.encoder.layers.1.layer_norm1"),
    ],
)
def test_grad_cam_layer_of_a_clip_vit(folder, layer, request):
    """The last block's first norm, the class token dropped, a 4x4 patch grid: without
    --target-layer, in both libraries."""
    from hf_bgbench.inference.cam import choose_target_layer

    clf = load_classifier(str(request.getfixturevalue(folder)), templates="simple")
    blank = torch.zeros(1, 3, SIZE, SIZE)
    choice = choose_target_layer(clf.model, lambda: clf.logits(blank), hint=clf.cam_layer)
    assert choice.describe() == {
        "name": layer,
        "layout": "tokens",
        "auto": True,
        "prefix_tokens": 1,
        "grid": [4, 4],
    }


# --------------------------------------------------------------------------- end to end


def test_evaluate_a_clip_prints_bg_gap_and_records_its_head(
    open_clip_folder, in9_release, tmp_path, capsys
):
    """`bgbench evaluate <open_clip folder>` with no extra flag: BG-GAP printed; the per-image
    predictions equal an independent computation of CLIP's recipe from the class names and
    templates the run recorded."""
    import open_clip
    import pandas as pd

    out = tmp_path / "out"
    argv = ["evaluate", str(open_clip_folder), "--data", str(in9_release), "--output", str(out)]
    assert (
        main(
            [
                *argv,
                "--variants",
                "original",
                "mixed_same",
                "mixed_rand",
                "--quiet",
                "--workers",
                "0",
                "--templates",
                "simple",
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "BG-GAP" in printed and "zero-shot head: 1000 class names" in printed
    doc = json.loads((out / "results.json").read_text())
    z = doc["zero_shot"]
    assert z["num_templates"] == 7 and doc["label_protocol"].startswith("zero-shot head")
    assert "bg_gap" in doc and doc["model_label_space"] == "imagenet-1k"
    # independently: open_clip's model and recipe over the recorded names and templates
    model, _, _ = open_clip.create_model_and_transforms(f"local-dir:{open_clip_folder}")
    tokenizer = open_clip.get_tokenizer(f"local-dir:{open_clip_folder}")
    weights = open_clip.build_zero_shot_classifier(
        model.eval(), tokenizer, z["classnames"], z["templates"]
    )
    from hf_bgbench.benchmarks import get_benchmark
    from hf_bgbench.data.sources import resolve_source

    reader = resolve_source(str(in9_release), get_benchmark("in9"))
    pre = load_classifier(str(open_clip_folder), templates="simple").preprocessing
    for variant in ("original", "mixed_rand"):
        table = pd.read_parquet(next((out / "predictions").glob(f"{variant}*.parquet")))
        ds = reader.load(variant)
        transform = pre.precropped_transform()
        batch = torch.stack([transform(row["image"]) for row in ds])
        with torch.no_grad():
            feats = model.encode_image(batch, normalize=True)
        by_id = dict(zip(ds["id"], (feats @ weights).argmax(1).tolist(), strict=True))
        assert table["pred_model"].tolist() == [by_id[i] for i in table["id"]]


def test_a_template_file_saved_with_a_bom_gives_the_templates_without_it(tmp_path):
    from hf_bgbench.models.vlm import read_prompt
    from hf_bgbench.models.zero_shot import prompts_for

    (tmp_path / "t.txt").write_text("\ufeffa photo of a {}.\nart of the {}.\n", encoding="utf-8")
    assert prompts_for(["dog"], str(tmp_path / "t.txt")).templates == (
        "a photo of a {}.",
        "art of the {}.",
    )
    (tmp_path / "q.txt").write_text("\ufeffWhat is it?\n", encoding="utf-8")
    assert read_prompt(str(tmp_path / "q.txt"))[0] == "What is it?"
