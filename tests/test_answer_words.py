"""The words an open answer may use for a class: the shipped tables give the verdict a careful
annotator gives to everyday answers on IN-9 (snake is a reptile, a hot dog is no dog,
"amphibian" names no IN-9 class); a tiny VLM that always answers "Snake" has every IN-9 image
answered reptile; the table builder follows its stated rules on a WordNet written here."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from hf_bgbench.benchmarks import all_specs, get_benchmark
from hf_bgbench.cli import main
from hf_bgbench.models.vlm.answer_words import TABLES, WordNet, answer_table, read_table
from hf_bgbench.models.vlm.answers import match_answer
from hf_bgbench.tasks.run_model import class_members, class_synonyms

# (answer, the IN-9 class a careful annotator reads in it; None: no IN-9 class, or two)
EVERYDAY_ANSWERS = [
    ("Snake", "reptile"),
    ("Snakes", "reptile"),
    ("A snake.", "reptile"),
    ("lizard", "reptile"),
    ("turtle", "reptile"),
    ("crocodile", "reptile"),
    ("alligator", "reptile"),
    ("iguana", "reptile"),
    ("Monkey", "primate"),
    ("ape", "primate"),
    ("gorilla", "primate"),
    ("chimpanzee", "primate"),
    ("lemur", "primate"),
    ("baboon", "primate"),
    ("wolf", "carnivore"),
    ("wolves", "carnivore"),
    ("fox", "carnivore"),
    ("cat", "carnivore"),
    ("a tabby cat", "carnivore"),
    ("lion", "carnivore"),
    ("tiger", "carnivore"),
    ("bear", "carnivore"),
    ("a brown bear", "carnivore"),
    ("leopard", "carnivore"),
    ("dog", "dog"),
    ("Dogs", "dog"),
    ("puppy", "dog"),
    ("a golden retriever", "dog"),
    ("beagle", "dog"),
    ("guitar", "instrument"),
    ("violin", "instrument"),
    ("piano", "instrument"),
    ("drum", "instrument"),
    ("trumpet", "instrument"),
    ("an accordion", "instrument"),
    ("car", "vehicle"),
    ("a red car", "vehicle"),
    ("truck", "vehicle"),
    ("bicycle", "vehicle"),
    ("motorcycle", "vehicle"),
    ("shark", "fish"),
    ("tiger shark", "fish"),  # a fish, not a tiger
    ("goldfish", "fish"),
    ("catfish", "fish"),
    ("butterfly", "insect"),
    ("butterflies", "insect"),
    ("bee", "insect"),
    ("beetle", "insect"),
    ("ant", "insect"),
    ("parrot", "bird"),
    ("eagle", "bird"),
    ("owl", "bird"),
    ("duck", "bird"),
    ("penguin", "bird"),
    ("chicken", "bird"),
    ("Reptile", "reptile"),
    ("vehicle", "vehicle"),
    # no IN-9 class
    ("hot dog", None),  # food
    ("prairie dog", None),  # a rodent
    ("amphibian", None),  # the animal, or an aircraft: not IN-9's amphibious vehicle
    ("frog", None),
    ("spider", None),  # an arachnid, not an insect
    ("horse", None),
    ("hamster", None),
    ("animal", None),
    ("mammal", None),
    ("canine", None),  # a dog, or any canid: two classes
    ("a dog and a cat", None),
    ("a cat or a dog", None),
    ("I don't know", None),
    ("", None),
]


def test_everyday_answers_get_an_annotators_verdict():
    spec = get_benchmark("in9")
    synonyms, blockers, source = class_synonyms(spec)
    assert "WordNet 3.0" in source and "in9.json" in source
    assert len(EVERYDAY_ANSWERS) >= 60
    wrong = []
    for answer, expected in EVERYDAY_ANSWERS:
        k = match_answer(answer, synonyms, blockers)
        got = None if k is None else spec.classes[k]
        if got != expected:
            wrong.append(f"{answer!r}: {got} (want {expected})")
    assert not wrong, "\n".join(wrong)


def test_every_benchmark_mapped_to_imagenet_has_its_table():
    index = json.loads((TABLES / "index.json").read_text())
    mapped = {s.name for s in all_specs() if class_members(s) is not None}
    assert set(index) == mapped
    for name in mapped:  # each holds the benchmark's classes, its own name among the phrases
        spec = get_benchmark(name)
        table = read_table(name, spec.classes)
        assert len(table.classes) == spec.num_classes
    assert (TABLES / "WORDNET_LICENSE").read_text().startswith("WordNet Release 3.0")


# A WordNet written here: entity > animal > {reptile > {snake > viper, lizard},
# carnivore > {canine > {dog > puppy, wolf}}}, artifact > {vehicle > car, sweater}; food > frank
_SYNSETS = {
    # offset: (lexicographer file, lemmas, hypernyms)
    "00000001": ("03", ["entity"], []),
    "00000002": ("05", ["animal"], ["00000001"]),
    "00000003": ("05", ["reptile"], ["00000002"]),
    "00000004": ("05", ["snake", "serpent"], ["00000003"]),
    "00000005": ("05", ["viper"], ["00000004"]),
    "00000006": ("05", ["lizard"], ["00000003"]),
    "00000007": ("05", ["carnivore"], ["00000002"]),
    "00000008": ("05", ["canine", "canid"], ["00000007"]),
    "00000009": ("05", ["dog"], ["00000008"]),
    "00000010": ("05", ["puppy"], ["00000009"]),
    "00000011": ("05", ["wolf"], ["00000008"]),
    "00000012": ("06", ["artifact"], ["00000001"]),
    "00000013": ("06", ["car", "auto"], ["00000012"]),
    "00000014": ("06", ["turtleneck", "snake"], ["00000012"]),  # another kind: no rival
    "00000015": ("13", ["frank", "hot_dog", "dog"], ["00000001"]),
    "00000016": ("05", ["puppy_dog"], ["00000009"]),
    "00000017": ("05", ["amphibian"], ["00000002"]),
    "00000018": ("05", ["viper_amphibian"], ["00000005"]),
}
# word: senses in frequency order, how many were seen in tagged corpora
_WORDS = {
    "snake": (["00000004", "00000014"], 1),
    "dog": (["00000009", "00000015"], 1),
    "canine": (["00000008"], 0),
    "lizard": (["00000006", "00000017"], 0),  # untagged, a rival animal sense: not a reptile
}


def _write_wordnet(folder: Path) -> Path:
    folder.mkdir()
    lines = []
    for offset, (lex, lemmas, hypernyms) in _SYNSETS.items():
        words = " ".join(f"{w} 0" for w in lemmas)
        pointers = " ".join(f"@ {h} n 0000" for h in hypernyms)
        lines.append(
            f"{offset} {lex} n {len(lemmas):02x} {words} {len(hypernyms):03d} {pointers} | gloss"
        )
    (folder / "data.noun").write_text("  licence header line\n" + "\n".join(lines) + "\n")
    index = {w: s for w, s in _WORDS.items()}
    for offset, (_, lemmas, _) in _SYNSETS.items():
        for lemma in lemmas:
            index.setdefault(lemma, ([offset], 1))
    rows = [f"{w} n {len(s)} 1 @ {len(s)} {t} {' '.join(s)}" for w, (s, t) in sorted(index.items())]
    (folder / "index.noun").write_text("\n".join(rows) + "\n")
    (folder / "noun.exc").write_text("wolves wolf\n")
    return folder


def test_the_table_builder_follows_its_rules(tmp_path):
    net = WordNet.read(_write_wordnet(tmp_path / "wn"))
    # IN-9-like: "reptile" = {viper, lizard}; "dog" = {puppy, puppy dog}; "carnivore" = {wolf}
    members = [["n00000005", "n00000006"], ["n00000010", "n00000016"], ["n00000011"]]
    table = answer_table(["reptile", "dog", "carnivore"], members, net)
    assert table["roots"] == ["n00000003", "n00000009", "n00000011"]  # lowest common hypernyms
    reptile, dog, carnivore = (set(c) for c in table["classes"])
    assert {"snake", "serpent", "viper"} <= reptile  # below the root, a tagged sense
    assert "lizard" not in reptile  # never tagged, and also an animal no class holds
    assert {"dog", "puppy", "puppy dog"} <= dog  # "dog" the food is not the sense meant
    assert {"wolf", "wolves", "carnivore"} <= carnivore  # the class's own name, a plural
    assert "canine" not in set().union(reptile, dog, carnivore)  # above the dog class's root
    assert "hot dog" in table["blockers"] and "viper amphibian" not in table["blockers"]
    synonyms = [sorted(c) for c in (reptile, dog, carnivore)]
    assert match_answer("a hot dog", synonyms, table["blockers"]) is None
    assert match_answer("a snake", synonyms, table["blockers"]) == 0
    assert match_answer("Puppy dogs!", synonyms, table["blockers"]) == 1


def test_a_class_whose_hypernym_is_far_wider_keeps_its_members_as_roots(tmp_path):
    """PUG-like: "pet" = {puppy, viper} meets at "animal", which holds another class's member
    (wolf) and more unmapped ImageNet classes than pet has members: each member is a root, so
    "lizard" or "snake" never answers pet. With no unmapped class under it, animal stays."""
    net = WordNet.read(_write_wordnet(tmp_path / "wn"))
    members = [["n00000010", "n00000005"], ["n00000011"]]
    imagenet = ["n00000004", "n00000005", "n00000006", "n00000009", "n00000010", "n00000011"]
    table = answer_table(["pet", "wolf"], members, net, imagenet)
    assert table["roots"] == [["n00000010", "n00000005"], "n00000011"]
    pet = set(table["classes"][0])
    assert {"pet", "puppy", "viper"} <= pet and not {"lizard", "snake", "dog"} & pet
    assert answer_table(["pet", "wolf"], members, net)["roots"][0] == "n00000002"


@pytest.mark.slow  # a tiny VLM scored on the synthetic IN-9
def test_a_model_that_always_answers_snake_answers_reptile_on_every_image(in9_hub, tmp_path):
    from tests.vlm_fixtures import steer_answers, write_llava

    model = steer_answers(write_llava(tmp_path / "llava"), ["Snake"], first_bias=100.0)
    out = tmp_path / "out"
    argv = ["evaluate", str(model), "--benchmark", "in9", "--data", str(in9_hub)]
    argv += ["--vlm-protocol", "open", "--variants", "original", "mixed_rand"]
    assert main([*argv, "--output", str(out), "--device", "cpu", "--quiet"]) == 0
    doc = json.loads((out / "results.json").read_text())
    for variant in ("original", "mixed_rand"):
        frame = pd.read_parquet(out / "predictions" / f"{variant}.parquet")
        assert set(frame["answer"]) == {"Snake"}
        assert set(frame["pred_model"]) == {get_benchmark("in9").classes.index("reptile")}
        assert doc["unanswered"][variant]["unanswered"] == 0
    assert doc["vlm"]["blockers"] and "WordNet 3.0" in doc["vlm"]["synonyms_source"]
    card = (out / "results_model_index.yaml").read_text()  # every output names the rule
    assert "vlm_rule: open" in card and "vlm_unanswered: 0 of 18" in card
    page = (out / "results.md").read_text()  # paste-ready: the counts and the words defined
    assert "No answer (counted as wrong, never guessed): original 0 of 18, mixed_rand 0 of" in page
    assert "Variants: original = the image, unmodified" in page
