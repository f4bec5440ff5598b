"""Hub evaluation results that the Hub accepts, rank the right way round and never credit the
wrong dataset: the leaderboard tasks each spec declares, the ``eval.yaml`` a build publishes
and the ``.eval_results`` a report writes -- on a local build (no entry), and on a folder that
is byte for byte a published revision (entries that parse back), offline.

The report runs once, on a Hub-layout conversion of the synthetic IN-9 (tests/in9_fixture.py);
whether its numbers may be entries is decided when its files are written, so the same run is
written again with the spec declaring that folder's files a published revision."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from huggingface_hub import parse_eval_result_entries

from hf_bgbench.benchmarks import all_specs, get_benchmark
from hf_bgbench.cli import main
from hf_bgbench.hub.eval_yaml import eval_yaml
from hf_bgbench.hub.published import DOWNLOAD_METADATA, content_fingerprint, credit
from hf_bgbench.report.card import run_report, write_report_files
from hf_bgbench.spec import Headline
from tests.hub_spec import eval_results_problems, eval_yaml_problems
from tests.in9_fixture import EXPECTED_ACCURACY, EXPECTED_BG_GAP, ColourRuleClassifier
from tests.test_toy_benchmark import TOY

REVISION = "5f" * 20
QUIET = {"progress": False, "num_workers": 0}


@pytest.fixture(scope="module")
def hub_folder(in9_release, tmp_path_factory) -> Path:
    """The synthetic IN-9 in the Hub's layout, as `hf download bgbench/in9 --local-dir`
    leaves it: huggingface_hub's record of the commit each file came from."""
    out = tmp_path_factory.mktemp("hub") / "in9"
    assert main(["convert", "in9-release", str(in9_release), str(out)]) == 0
    meta = out / DOWNLOAD_METADATA
    meta.mkdir(parents=True)
    (meta / "README.md.metadata").write_text(f"{REVISION}\n{'e' * 40}\n1764000000.0\n")
    return out


@pytest.fixture(scope="module")
def local_report(hub_folder, tmp_path_factory):
    """The report of the folder while no published revision is known (a local build)."""
    out = tmp_path_factory.mktemp("report")
    doc = run_report(
        ColourRuleClassifier(), out, data={"in9": str(hub_folder)}, benchmarks=["in9"], **QUIET
    )
    return doc, out


@pytest.fixture
def published_in9(hub_folder, monkeypatch):
    """IN-9's spec as it will read once published (the folder's files are revision
    REVISION's), as the report's eval-results step sees it. The registry itself is left
    alone: re-registering would change its order, and with it the default benchmark."""
    import hf_bgbench.report.eval_results as eval_results

    spec = get_benchmark("in9")
    published = dataclasses.replace(
        spec, hub_published=True, published_revisions={REVISION: content_fingerprint(hub_folder)}
    )
    monkeypatch.setattr(
        eval_results,
        "get_benchmark",
        lambda name: published if name == "in9" else get_benchmark(name),
    )
    return published


def _specs_with_the_toy():
    return [*all_specs(), TOY]


def test_leaderboard_tasks_are_higher_is_better_and_name_config_and_split():
    declared = 0
    for spec in _specs_with_the_toy():
        for h in spec.leaderboard:
            assert h.reliance != 1, f"{spec.name}: {h.key} ranks the most reliant model first"
        if spec.leaderboard:
            declared += 1
            doc = eval_yaml(spec)
            assert eval_yaml_problems(doc, spec.variants) == [], spec.name
            assert all("higher is better" in t["description"] for t in doc["tasks"])
    assert declared >= 4  # in9, rival10, imagenet-e, watermark
    ids = {t["id"] for t in eval_yaml(get_benchmark("in9"))["tasks"]}
    assert ids == {
        "accuracy_original",
        "accuracy_mixed_same",
        "accuracy_mixed_rand",
        "challenge_accuracy",
    }
    assert "bg_gap" not in ids
    imagenet_e = {t["id"] for t in eval_yaml(get_benchmark("imagenet-e"))["tasks"]}
    assert "mean_edit_accuracy" in imagenet_e and "accuracy_size_0.05" in imagenet_e
    assert not any(t.startswith(("mean_da", "da_")) for t in imagenet_e)
    assert {t["id"] for t in eval_yaml(get_benchmark("rival10"))["tasks"]} == {"rfs"}


@pytest.mark.parametrize(
    "headline, message",
    [
        (Headline("evaluate", "blue_lift", "lift", "pts", 1), "higher means more reliance"),
        (Headline("noise", "rfs", "RFS", "", -1), "does not run"),
        (Headline("evaluate", "accuracy/sepia", "x", "%", -1), "config 'sepia'"),
    ],
)
def test_a_spec_cannot_declare_a_bad_leaderboard_task(headline, message):
    with pytest.raises(ValueError, match=message):
        dataclasses.replace(TOY, leaderboard=(headline,))


def test_a_local_build_writes_no_entry_and_says_why(local_report):
    doc, out = local_report
    assert not (out / ".eval_results").exists() and doc["eval_results"] == []
    reasons = {w["task"]: w for w in doc["eval_results_withheld"]}
    assert set(reasons) == {"evaluate", "challenge"}
    assert "a local folder" in reasons["evaluate"]["reason"]
    assert "bgbench/in9 is not published on the Hub yet" in reasons["evaluate"]["instead"]
    md = (out / "report.md").read_text()
    assert "### Hub evaluation results" in md
    assert "- not written for in9 evaluate: scored on a local folder" in md
    # the numbers themselves are all still in the report
    gap = next(r for r in doc["headlines"] if r["key"] == "bg_gap")
    assert gap["value"] == pytest.approx(100 * EXPECTED_BG_GAP)


def test_the_published_folder_gets_entries_the_hub_keeps(local_report, published_in9, tmp_path):
    doc = json.loads(json.dumps(local_report[0]))
    names = write_report_files(doc, tmp_path)
    assert names == [".eval_results/in9.yaml"] and doc["eval_results_withheld"] == []
    text = (tmp_path / ".eval_results" / "in9.yaml").read_text()
    assert eval_results_problems(text) == []
    assert "date: '20" in text  # quoted: YAML would read an unquoted date as a timestamp
    entries = {e.task_id: e for e in parse_eval_result_entries(yaml.safe_load(text))}
    assert set(entries) == {h.eval_task_id for h in published_in9.leaderboard}
    original = entries["accuracy_original"]
    assert original.dataset_id == "bgbench/in9" and original.dataset_revision == REVISION
    assert type(original.value) is float
    assert original.value == pytest.approx(round(100 * EXPECTED_ACCURACY["original"], 4))
    assert entries["challenge_accuracy"].value == pytest.approx(50.0)  # 9 of 18, by hand
    # the gap is context in every entry's notes, with n, interval and protocol
    notes = entries["accuracy_mixed_rand"].notes
    assert f"BG-GAP {100 * EXPECTED_BG_GAP:.2f} pts (lower = less reliance)" in notes
    assert "n=18" in notes and "95% CI [" in notes and "protocol in9-paper" in notes
    assert "config mixed_rand" in notes
    md = (tmp_path / "report.md").read_text()
    assert "- written: `.eval_results/in9.yaml`" in md and "not written" not in md


def test_not_the_published_protocol_is_withheld(local_report, published_in9, tmp_path):
    doc = json.loads(json.dumps(local_report[0]))
    bench = next(b for b in doc["benchmarks"] if b["name"] == "in9")
    protocol = bench["tasks"]["challenge"]["results"]["protocol"]
    protocol.update(published=False, departures=["a seeded subset: 8 of 18 foregrounds"])
    write_report_files(doc, tmp_path)
    entries = yaml.safe_load((tmp_path / ".eval_results" / "in9.yaml").read_text())
    assert "challenge_accuracy" not in {e["dataset"]["task_id"] for e in entries}
    (withheld,) = doc["eval_results_withheld"]
    assert withheld["task"] == "challenge" and "8 of 18 foregrounds" in withheld["reason"]


def test_a_changed_file_is_not_the_published_revision(hub_folder, published_in9, tmp_path):
    changed = tmp_path / "in9"
    shutil.copytree(hub_folder, changed)
    shard = next((changed / "data" / "mixed_rand").glob("*.parquet"))
    table = pq.read_table(shard)
    pq.write_table(table.slice(0, len(table) - 1), shard)
    verdict = credit(published_in9, {"kind": "hub-folder", "location": str(changed)})
    assert not verdict.credited
    assert f"recorded revision {REVISION}" in verdict.reason
    assert "match no published revision of bgbench/in9" in verdict.reason
    same = credit(published_in9, {"kind": "hub-folder", "location": str(hub_folder)})
    assert same.credited and same.revision == REVISION


def test_the_hub_dataset_is_credited_at_the_revision_loaded(tmp_path, monkeypatch):
    from huggingface_hub import constants

    from hf_bgbench.data.hub import HubDataset

    spec = get_benchmark("in9")
    repo = tmp_path / "datasets--bgbench--in9"
    (repo / "snapshots" / REVISION).mkdir(parents=True)
    (repo / "snapshots" / REVISION / "README.md").write_text("---\n---\n")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(REVISION)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path))
    assert HubDataset("bgbench/in9", spec.variants, spec).revision() == REVISION
    hub = credit(spec, {"kind": "hub", "location": "bgbench/in9", "revision": REVISION})
    assert hub.credited and hub.revision == REVISION
    fork = credit(spec, {"kind": "hub", "location": "acme/in9"})
    assert not fork.credited and "not the published bgbench/in9" in fork.reason
    photos = credit(spec, {"kind": "photo-folder", "location": "/photos"})
    assert not photos.credited


def test_the_framework_entry_to_propose_is_the_one_documented():
    from hf_bgbench.hub.eval_yaml import EVALUATION_FRAMEWORK, FRAMEWORK_ENTRY

    doc = (Path(__file__).resolve().parents[1] / "docs" / "hub_benchmark.md").read_text()
    entry = doc.split("```ts", 1)[1].split("```", 1)[0]
    assert f'"{EVALUATION_FRAMEWORK}": {{' in entry
    for key in ("name", "description", "url"):
        assert f'"{FRAMEWORK_ENTRY[key]}"' in entry, key


def test_a_run_records_how_it_departs_from_the_published_protocol(in9_release):
    """What keeps a number off a leaderboard is recorded by the run itself, from the options
    it actually used; the default run records none."""
    from hf_bgbench.tasks.evaluate import evaluate_model

    def protocol(**options):
        doc = evaluate_model(
            ColourRuleClassifier(),
            benchmark="in9",
            data=in9_release,
            variants=["original"],
            use_cache=False,
            **QUIET,
            **options,
        )
        return doc["protocol"]

    published = protocol()
    assert published["published"] is True and published["departures"] == []
    restricted = protocol(restrict_to_benchmark=True)
    assert restricted["published"] is False
    assert restricted["departures"] == [
        "argmax restricted to the benchmark's classes (--restrict-to-benchmark-classes)"
    ]
