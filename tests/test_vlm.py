"""Generative VLMs scored by named rules, offline, on tiny random models of four
architectures: the cached likelihood equals one full forward per class, the letter rule and
its rotations, the open-answer matcher, and runs whose recorded prompt, class strings and
score reproduce every per-image choice outside bgbench."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from PIL import Image

from hf_bgbench.cli import main
from hf_bgbench.models import load_classifier
from hf_bgbench.models.vlm import NO_ANSWER, VlmSettings
from hf_bgbench.models.vlm.answers import match_answer
from hf_bgbench.models.zero_shot import ClassNames
from tests.vlm_fixtures import ARCHITECTURES, WRITERS, reference_likelihood

IN9 = ClassNames(
    ("dog", "bird", "vehicle", "reptile", "carnivore", "insect", "instrument", "primate", "fish"),
    "IN-9's classes",
)


@pytest.fixture(scope="module")
def vlms(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("vlms")
    return {name: write(root / name) for name, write in WRITERS.items()}


def _images(n: int = 3, size: int = 40) -> torch.Tensor:
    return torch.rand(n, 3, size, size, generator=torch.Generator().manual_seed(1))


@pytest.mark.parametrize("architecture", ARCHITECTURES)
def test_folder_size_is_under_a_megabyte(vlms, architecture):
    assert sum(f.stat().st_size for f in vlms[architecture].iterdir()) < 1_000_000


@pytest.mark.parametrize(
    "architecture, score", [(a, "mean") for a in ARCHITECTURES] + [("qwen2_vl", "sum")]
)
def test_cached_likelihood_equals_one_full_forward_per_class(vlms, architecture, score):
    settings = VlmSettings(classes=IN9, score=score)
    clf = load_classifier(str(vlms[architecture]), vlm=settings, device="cpu")
    images = _images()
    with torch.inference_mode():
        got = clf.logits(images)
    record = clf.vlm
    assert record["choices"] == [
        "Dog",
        "Bird",
        "Vehicle",
        "Reptile",
        "Carnivore",
        "Insect",
        "Instrument",
        "Primate",
        "Fish",
    ]
    assert "What type of object is in this photo?" in record["prompt"]
    expected = reference_likelihood(
        vlms[architecture],
        record["prompt"],
        record["choices"],
        score,
        images,
        record["add_special_tokens"],
    )
    assert torch.allclose(got, expected, atol=1e-4), (got - expected).abs().max()
    recorded = torch.tensor(clf.take_extras()["class_scores"])
    assert torch.allclose(recorded, got, atol=1e-5)  # the per-image record (6 decimals)


def test_imagenet_classes_score_all_1000_names_for_the_published_mapping(vlms):
    clf = load_classifier(str(vlms["llava"]), device="cpu")  # the default rule, Python's default
    assert clf.label_space.kind == "imagenet-1k"
    assert clf.vlm["choices"][:2] == ["Tench", "Goldfish"]
    assert clf.vlm["classes_source"].startswith("imagenet (open_clip.IMAGENET_CLASSNAMES")
    with torch.inference_mode():
        assert clf.logits(_images(1)).shape == (1, 1000)


@pytest.mark.parametrize("architecture, written", [("gemma3", False), ("llava", True)])
def test_bos_is_written_once(vlms, architecture, written):
    """A chat template that writes <bos> itself (Gemma 3, SmolVLM) is tokenised without
    the tokenizer's own, so the model sees one <bos>, as it was trained."""
    clf = load_classifier(str(vlms[architecture]), vlm=VlmSettings(classes=IN9), device="cpu")
    assert clf.vlm["add_special_tokens"] is written
    backend = clf.model.backend
    ids = backend.inputs(_images(1), clf.vlm["prompt"])["input_ids"][0].tolist()
    bos = backend.processor.tokenizer.bos_token_id
    assert ids.count(bos) == 1 and ids[0] == bos


def test_paligemma_prompt_is_formatted_by_its_processor(vlms):
    clf = load_classifier(str(vlms["paligemma"]), vlm=VlmSettings(classes=IN9), device="cpu")
    assert clf.vlm["chat_template_sha256"] is None
    assert clf.vlm["prompt"].startswith("<image>What type of object")


def _letter_picks(folder: Path, prompts: list[str], letters: list[int], images) -> list[list[int]]:
    """Per image, the letter each prompt's next-token logits pick among ``letters``."""
    from transformers import AutoModelForImageTextToText, AutoProcessor

    model = AutoModelForImageTextToText.from_pretrained(folder).eval()
    processor = AutoProcessor.from_pretrained(folder)
    picks = []
    for image in images:
        row = []
        for prompt in prompts:
            inputs = processor(images=[image], text=[prompt], return_tensors="pt", do_rescale=False)
            with torch.no_grad():
                logits = model(**inputs).logits[0, -1]
            row.append(int(logits[letters].argmax()))
        picks.append(row)
    return picks


def test_choice_reads_the_option_letters_and_rotations_must_agree(vlms):
    settings = VlmSettings(protocol="choice", circular=3, classes=IN9)
    clf = load_classifier(str(vlms["llava"]), vlm=settings, device="cpu")
    record = clf.vlm
    assert record["letters"] == list("ABCDEFGHI")
    assert "A. Dog\nB. Bird" in record["prompts"][0]
    assert "A. Reptile\nB. Carnivore" in record["prompts"][1]  # rotated by 9 / 3 = 3
    images = _images(6)
    with torch.inference_mode():
        scores = clf.logits(images)
    extras = clf.take_extras()
    letters = _letter_picks(vlms["llava"], record["prompts"], record["letter_tokens"], images)
    orders = record["rotation_orders"]
    expected = [[orders[r][i] for r, i in enumerate(row)] for row in letters]
    assert extras["rotation_choices"] == expected
    assert clf.label_space.names[-1] == NO_ANSWER
    for row, picks in zip(scores.argmax(1).tolist(), expected, strict=True):
        assert row == (picks[0] if len(set(picks)) == 1 else len(IN9.names))


def test_choice_without_rotation_is_the_letter_distribution(vlms):
    clf = load_classifier(
        str(vlms["idefics3"]), vlm=VlmSettings(protocol="choice", classes=IN9), device="cpu"
    )
    images = _images(2)
    with torch.inference_mode():
        scores = clf.logits(images)
    assert scores.shape == (2, 9)  # no abstaining column: one reading always answers
    assert torch.allclose(scores.exp().sum(1), torch.ones(2), atol=1e-5)
    picks = _letter_picks(vlms["idefics3"], clf.vlm["prompts"], clf.vlm["letter_tokens"], images)
    assert scores.argmax(1).tolist() == [row[0] for row in picks]


SYNONYMS = (("dog", "golden retriever", "hot dog"), ("cat", "tabby"), ("fish", "goldfish"))


@pytest.mark.parametrize(
    "answer, expected",
    [
        ("Dog", 0),
        ("A golden retriever.", 0),
        ("dogs", 0),  # a regular plural
        ("Fishes!", 2),
        ("It is a tabby cat", 1),
        ("A dog chasing a cat", None),  # two classes named: no answer
        ("a category of things", None),  # 'cat' only inside a word
        ("I cannot tell", None),
        ("", None),
        ("goldfish", 2),  # 'fish' is not a whole word of it; 'goldfish' is a phrase
    ],
)
def test_open_answer_matching(answer, expected):
    assert match_answer(answer, SYNONYMS) == expected


def _jpeg_tensor(path: Path) -> torch.Tensor:
    image = np.asarray(Image.open(path).convert("RGB"), dtype=np.float32) / 255.0
    return torch.from_numpy(image).permute(2, 0, 1)


def _evaluate(model: Path, release: Path, out: Path, *extra: str) -> dict:
    argv = ["evaluate", str(model), "--benchmark", "in9", "--data", str(release)]
    argv += ["--output", str(out), "--device", "cpu", "--quiet", "--workers", "0", *extra]
    assert main(argv) == 0
    return json.loads((out / "results.json").read_text())


def test_evaluate_choices_equal_a_reference_from_the_recorded_rule(vlms, in9_release, tmp_path):
    doc = _evaluate(vlms["qwen2_vl"], in9_release, tmp_path / "out", "--variants", "original")
    vlm = doc["vlm"]
    assert vlm["protocol"] == "likelihood" and vlm["score"] == "mean"
    assert vlm["dtype"] == "float32" and vlm["classes_source"].startswith("benchmark")
    assert any("generative VLM, likelihood rule" in d for d in doc["protocol"]["departures"])
    frame = pd.read_parquet(tmp_path / "out" / "predictions" / "original.parquet")
    files = {p.stem: p for p in in9_release.glob("bg_challenge/original/val/*/*.JPEG")}
    images = torch.stack([_jpeg_tensor(files[i]) for i in frame["id"]])
    expected = reference_likelihood(
        vlms["qwen2_vl"], vlm["prompt"], vlm["choices"], vlm["score"], images, True
    )
    assert frame["pred_model"].tolist() == expected.argmax(1).tolist()
    got = torch.tensor(np.stack(frame["class_scores"].to_list())).float()
    assert torch.allclose(got, expected, atol=1e-4)


def test_open_rule_records_each_answer_and_counts_no_answer(vlms, in9_release, tmp_path, capsys):
    doc = _evaluate(
        vlms["llava"],
        in9_release,
        tmp_path / "out",
        "--vlm-protocol",
        "open",
        "--variants",
        "original",
        "--vlm-max-new-tokens",
        "4",
    )
    vlm = doc["vlm"]
    assert vlm["generation"] == {"do_sample": False, "num_beams": 1, "max_new_tokens": 4}
    assert "chihuahua" in vlm["synonyms"][0] and "WordNet" in vlm["synonyms_source"]
    assert "hot dog" in vlm["blockers"]
    frame = pd.read_parquet(tmp_path / "out" / "predictions" / "original.parquet")
    matched = [match_answer(a, vlm["synonyms"], vlm["blockers"]) for a in frame["answer"]]
    assert frame["pred_model"].tolist() == [9 if m is None else m for m in matched]
    unanswered = sum(m is None for m in matched)
    assert doc["unanswered"] == {"original": {"unanswered": unanswered, "n": len(frame)}}
    assert (frame["pred"][[m is None for m in matched]] == -1).all()  # counted as wrong
    # and said where the accuracies are printed (before: only in results.md)
    printed = capsys.readouterr().out
    assert f"No answer (counted as wrong, never guessed): original {unanswered} of" in printed


@pytest.mark.slow
def test_a_vlm_runs_through_challenge_noise_report_and_compare(vlms, in9_release, tmp_path):
    model = str(vlms["llava"])
    common = ["--benchmark", "in9", "--data", str(in9_release), "--device", "cpu", "--quiet"]
    for task in ("challenge", "noise"):
        assert main([task, model, *common, "--output", str(tmp_path / task)]) == 0
        doc = json.loads(next((tmp_path / task).glob("*.json")).read_text())
        assert doc["vlm"]["protocol"] == "likelihood"
    report = ["report", model, "--benchmarks", "in9", "--data", f"in9={in9_release}"]
    report += ["--device", "cpu", "--quiet", "--challenge-foregrounds", "3"]
    assert main([*report, "--output", str(tmp_path / "report")]) == 0
    _evaluate(vlms["llava"], in9_release, tmp_path / "vlm")
    _evaluate(Path("tf_efficientnet_lite0"), in9_release, tmp_path / "lite0")
    out = tmp_path / "compare"
    argv = ["compare", str(tmp_path / "vlm"), str(tmp_path / "lite0"), "--output", str(out)]
    assert main(argv) == 0
    assert "BG-GAP" in (out / "compare.md").read_text()


def test_table_gives_a_row_per_rule_named_by_it(vlms, in9_release, tmp_path):
    variants = ["--variants", "original", "mixed_same", "mixed_rand"]
    _evaluate(vlms["llava"], in9_release, tmp_path / "a", *variants)
    _evaluate(vlms["llava"], in9_release, tmp_path / "b", *variants, "--vlm-protocol", "choice")
    out = tmp_path / "table"
    assert main(["table", str(tmp_path / "a"), str(tmp_path / "b"), "--output", str(out)]) == 0
    table = (out / "table.md").read_text()
    model = str(vlms["llava"])
    assert f"| {model} (VLM likelihood/mean) |" in table
    assert f"| {model} (VLM choice/x1) |" in table
    assert "generative VLM, choice rule" in table  # the rule is a footnote


def test_circular_accuracy_and_each_rotations_own(vlms, in9_release, tmp_path):
    doc = _evaluate(
        vlms["llava"],
        in9_release,
        tmp_path / "out",
        "--vlm-protocol",
        "choice",
        "--circular",
        "3",
        "--variants",
        "original",
    )
    frame = pd.read_parquet(tmp_path / "out" / "predictions" / "original.parquet")
    picks = np.stack(frame["rotation_choices"].to_list())  # IN-9's classes in label order
    labels = frame["label"].to_numpy()[:, None]
    expected = [round(100 * float(a), 4) for a in (picks == labels).mean(axis=0)]
    assert doc["rotation_accuracy"] == {"original": expected}
    every = float((picks == labels).all(axis=1).mean())
    accuracy = next(s for s in doc["report"]["scores"] if s["key"] == "accuracy/original")
    assert accuracy["value"] == pytest.approx(every)
    assert doc["vlm"]["rotations"] == 3 and len(doc["vlm"]["prompts"]) == 3


def test_images_and_class_strings_split_across_passes_score_the_same(vlms, monkeypatch):
    from hf_bgbench.models.vlm.backends import hf_transformers as head

    clf = load_classifier(str(vlms["llava"]), vlm=VlmSettings(classes=IN9), device="cpu")
    images = _images(3)
    with torch.inference_mode():
        whole = clf.logits(images)
        monkeypatch.setattr(head, "IMAGES_PER_PASS", 2)  # passes of 2 and 1 images
        monkeypatch.setattr(head, "SEQUENCES_PER_PASS", 3)  # 1 or 3 class strings a pass
        split = clf.logits(images)
    assert torch.allclose(whole, split, atol=1e-5)


@pytest.mark.parametrize("protocol", ["likelihood", "choice"])
def test_prompts_of_unequal_length_are_scored_one_by_one_the_same(vlms, monkeypatch, protocol):
    from hf_bgbench.models.vlm.backends import hf_transformers as head

    clf = load_classifier(
        str(vlms["qwen2_vl"]), vlm=VlmSettings(protocol=protocol, classes=IN9), device="cpu"
    )
    images = _images(3)
    with torch.inference_mode():
        batched = clf.logits(images)
        monkeypatch.setattr(head, "_padded", lambda inputs, n: n > 1)  # as if padded
        one_by_one = clf.logits(images)
    assert torch.allclose(batched, one_by_one, atol=1e-5)
