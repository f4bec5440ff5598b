"""The report card (``bgbench report``), the sampled challenge and ``bgbench compare``, on the
synthetic IN-9 of tests/in9_fixture.py, whose numbers are worked out by hand there, and on
hand-written per-image files."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest
import yaml
from huggingface_hub import parse_eval_result_entries

from hf_bgbench.benchmarks import get_benchmark
from hf_bgbench.cli import main
from hf_bgbench.hub.eval_yaml import eval_yaml
from hf_bgbench.metrics.intervals import wilson_interval
from hf_bgbench.report.card import ReportError, parse_data_pairs, run_report
from hf_bgbench.report.compare import CompareError, compare_runs, verdict
from hf_bgbench.report.hub import card_with_section
from hf_bgbench.tasks.challenge import run_challenge
from tests.in9_fixture import EXPECTED_ACCURACY, EXPECTED_BG_GAP, ColourRuleClassifier

QUIET = {"progress": False, "num_workers": 0}


@pytest.fixture(scope="module")
def in9_report(in9_release, tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    doc = run_report(
        ColourRuleClassifier(),
        out,
        data={"in9": str(in9_release)},
        benchmarks=["in9", "watermark"],
        **QUIET,
    )
    return doc, out


def _row(doc, key):
    return next(r for r in doc["headlines"] if r["key"] == key)


def test_report_headlines_are_the_tasks_numbers(in9_report):
    doc, out = in9_report
    assert doc["schema_version"] == "report-1.0"
    assert _row(doc, "accuracy/original")["value"] == pytest.approx(
        100 * EXPECTED_ACCURACY["original"]
    )
    gap = _row(doc, "bg_gap")
    assert gap["value"] == pytest.approx(100 * EXPECTED_BG_GAP) and gap["unit"] == "pts"
    assert gap["ci95"][0] <= gap["value"] <= gap["ci95"][1] and gap["n"] == 18
    assert _row(doc, "challenge_accuracy")["value"] == pytest.approx(50.0)  # 9 of 18, by hand
    # published rows beside it: the five IN-9 models of the authors' table
    assert sorted(p["value"] for p in gap["published"]) == [0.2, 5.8, 7.3, 10.2, 14.2]
    # every task's results document is embedded, and its folder written
    bench = next(b for b in doc["benchmarks"] if b["name"] == "in9")
    assert set(bench["tasks"]) == {"evaluate", "challenge"}
    assert (out / "in9" / "evaluate" / "results.json").is_file()
    assert (out / "in9" / "challenge" / "challenge.json").is_file()
    saved = json.loads((out / "report.json").read_text())
    assert saved["headlines"][3]["value"] == pytest.approx(gap["value"])


def test_a_benchmark_without_data_is_listed_with_its_fetch_command(in9_report):
    doc, out = in9_report
    other = next(b for b in doc["benchmarks"] if b["name"] == "watermark")
    assert other["status"] == "not run" and "bgbench build watermark" in other["command"]
    md = (out / "report.md").read_text()
    assert "### Not run" in md and "bgbench build watermark" in md
    # only the command in code type, the words after it outside (before: the whole
    # "bgbench build watermark ... (then --data watermark=PATH)" as one command to paste)
    assert "Fetch it: `bgbench build watermark ...` (then --data watermark=PATH)." in md
    assert _row(doc, "watermark_gap")["status"] == "not run"
    # fixed: its rows filled the headline table and the figure with "not run"
    table = md.split("### ")[0]
    assert "not run" not in table and "ImageNet-W" not in table


def test_report_markdown_table_and_figure(in9_report):
    doc, out = in9_report
    md = (out / "report.md").read_text()
    assert f"| IN-9 | BG-GAP (pts) ↓ | {100 * EXPECTED_BG_GAP:.1f} [" in md
    assert "0.2 – 14.2 (5 models)" in md  # the published range beside it
    assert "`resnet50.tv_in1k`" in md  # the exact tag that reproduces the published weights
    assert "![Background-reliance profile](reliance_profile.png)" in md
    assert (out / "reliance_profile.png").stat().st_size > 10_000
    # the versions the numbers depend on: in report.json and in the section's first lines
    from importlib.metadata import version

    assert doc["software"]["torch"] == version("torch")
    assert f"Software: Python {doc['software']['python']}, torch {version('torch')}, " in md


def test_a_local_report_writes_no_eval_results(in9_report):
    doc, out = in9_report
    assert doc["eval_results"] == [] and not (out / ".eval_results").exists()
    md = (out / "report.md").read_text()
    assert "- not written for in9 evaluate: scored on release data at" in md
    assert "not the published bgbench/in9" in md


def test_eval_yaml_declares_the_leaderboard_tasks():
    declared = eval_yaml(get_benchmark("in9"))
    assert declared["evaluation_framework"] == "hf-bgbench"
    ids = [t["id"] for t in declared["tasks"]]
    assert ids == [h.eval_task_id for h in get_benchmark("in9").leaderboard]
    assert declared["tasks"][2]["config"] == "mixed_rand"
    assert {t["split"] for t in declared["tasks"]} == {"test"}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sampled_challenge_interval_covers_the_exact_value(in9_release, seed):
    exact = run_challenge(ColourRuleClassifier(), in9_release, use_cache=False, **QUIET)
    sampled = run_challenge(
        ColourRuleClassifier(), in9_release, max_foregrounds=8, seed=seed, use_cache=False, **QUIET
    )
    assert sampled["n_foregrounds"] == 8 and sampled["n_backgrounds"] == 18  # every background
    lo, hi = sampled["challenge_accuracy_ci95"]
    assert lo <= exact["challenge_accuracy"] == 0.5 <= hi
    k = round(sampled["challenge_accuracy"] * 8)
    assert (lo, hi) == pytest.approx(wilson_interval(k, 8))


def _evaluate_run(folder, model, same, rand, fingerprint="fp", protocol="in9-paper"):
    """A hand-written evaluate run: correctness per image on mixed_same and mixed_rand."""
    (folder / "predictions").mkdir(parents=True)
    ids = [f"img{i}" for i in range(len(same))]
    for variant, correct in (("mixed_same", same), ("mixed_rand", rand)):
        pd.DataFrame({"id": ids, "label": 0, "pred": [0 if c else 1 for c in correct]}).to_parquet(
            folder / "predictions" / f"{variant}.parquet"
        )
    doc = {
        "schema_version": "2.0",
        "task": "evaluate",
        "benchmark": "in9",
        "model": model,
        "variants": {"mixed_same": {}, "mixed_rand": {}},
        "data": {"fingerprint": fingerprint},
        "protocol": {"name": protocol},
        "report": {"scores": []},
    }
    (folder / "results.json").write_text(json.dumps(doc))
    return folder


def test_compare_gives_paired_differences_and_a_verdict(tmp_path):
    a = _evaluate_run(tmp_path / "a", "A", [1, 1, 1, 1, 1, 1, 1, 1], [1, 1, 0, 0, 0, 0, 1, 1])
    b = _evaluate_run(tmp_path / "b", "B", [1, 1, 1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1, 1, 1])
    doc = compare_runs(a, b)
    rows = {r["key"]: r for r in doc["rows"]}
    gap = rows["bg_gap"]
    # A's gap 4/8 = 50 pts, B's 0: the difference 50 pts, over the 8 shared images
    assert (gap["a"], gap["b"], gap["difference"], gap["n"]) == (50.0, 0.0, 50.0, 8)
    assert 0 < gap["ci95"][0] <= 50.0 <= gap["ci95"][1] <= 100.0
    assert gap["verdict"].startswith("A relies on backgrounds more than B: BG-GAP +50.0 pts")
    # both right on every image: resampling cannot vary the difference, so no interval (it
    # was a zero-width [+0.0, +0.0]) and a verdict that says so
    # one variant's accuracy is no measure of reliance (a weaker model scores lower on every
    # variant): it says lower or higher, never "relies on backgrounds"
    rand = rows["accuracy/mixed_rand"]
    assert rand["verdict"].startswith("A scores lower than B: mixed_rand -50.0 pts")
    same = rows["accuracy/mixed_same"]
    assert same["ci95"] is None and same["verdict"].startswith("no interval: mixed_same +0.0")
    assert "every image has the same value" in same["verdict"]
    main(["compare", str(a), str(b), "--output", str(tmp_path / "cmp")])
    assert (
        "| in9 | evaluate | BG-GAP | 50.0 | 0.0 | +50.0 ["
        in (tmp_path / "cmp/compare.md").read_text()
    )


def test_compare_refuses_different_data_or_protocols(tmp_path):
    a = _evaluate_run(tmp_path / "a", "A", [1, 0], [1, 0])
    other_data = _evaluate_run(tmp_path / "b", "B", [1, 0], [1, 0], fingerprint="other")
    with pytest.raises(CompareError, match="differ in data fingerprint: 'fp' .A. vs 'other'"):
        compare_runs(a, other_data)
    other_protocol = _evaluate_run(tmp_path / "c", "C", [1, 0], [1, 0], protocol="bgbench-v1")
    with pytest.raises(CompareError, match="differ in protocol"):
        compare_runs(a, other_protocol)


def test_compare_of_different_variants_compares_the_shared_ones(in9_release, tmp_path):
    """Two runs on one folder with different --variants: the data fingerprints differ only
    because they cover different variants; the note names the difference and the shared
    variants are compared (their scores alone: BG-GAP needs mixed_same, scored by A only)."""
    from hf_bgbench.tasks.evaluate import evaluate_model

    runs = {}
    for name, variants in (
        ("a", ["original", "mixed_rand", "mixed_same"]),
        ("b", ["original", "mixed_rand", "only_fg"]),
    ):
        evaluate_model(
            ColourRuleClassifier(),
            data=in9_release,
            variants=variants,
            output_dir=tmp_path / name,
            use_cache=False,
            **QUIET,
        )
        runs[name] = json.loads((tmp_path / name / "results.json").read_text())
    assert runs["a"]["data"]["fingerprint"] != runs["b"]["data"]["fingerprint"]
    doc = compare_runs(tmp_path / "a", tmp_path / "b")
    (note,) = doc["notes"]
    assert "A alone scored mixed_same; B alone only_fg" in note
    assert "the shared variants original, mixed_rand" in note
    assert {r["key"] for r in doc["rows"]} == {"accuracy/original", "accuracy/mixed_rand"}
    # the same runs with the data gone: the variant difference named, and how to compare
    hand_a = _evaluate_run(tmp_path / "ha", "A", [1, 0], [1, 0])
    hand_b = _evaluate_run(tmp_path / "hb", "B", [1, 0], [1, 0], fingerprint="other")
    doc_b = json.loads((hand_b / "results.json").read_text())
    doc_b["variants"] = {"mixed_rand": {}, "only_fg": {}}
    (hand_b / "results.json").write_text(json.dumps(doc_b))
    with pytest.raises(CompareError, match="scored different variants .A alone scored mixed_same"):
        compare_runs(hand_a, hand_b)
    with pytest.raises(CompareError, match="Re-run both with --variants mixed_rand"):
        compare_runs(hand_a, hand_b)


def test_forest_plot_rows_in_one_unit_share_one_axis(tmp_path):
    """compare.png: every score in points on one x axis (a 2-point difference as long in
    each row), iRFS on its own; a withheld interval drawn as a point."""
    from hf_bgbench.report.compare import RIGHT_OF_ZERO, draw_compare

    def row(label, unit, difference, ci, reliance=0):
        return {
            "benchmark": "in9",
            "label": label,
            "unit": unit,
            "difference": difference,
            "ci95": ci,
            "headline": True,
            "reliance": reliance,
        }

    doc = {
        "a": {"model": "A"},
        "b": {"model": "B"},
        "rows": [
            row("BG-GAP", "pts", 1.0, [-2.0, 4.0], reliance=1),
            row("original", "%", 10.0, [5.0, 30.0]),
            row("mixed_rand", "%", 0.0, None),
            row("mean iRFS", "", 0.02, [-0.01, 0.05]),
        ],
    }
    ranges = draw_compare(doc, tmp_path / "compare.png")
    assert set(ranges) == {"pts", "value"}  # one panel per unit, not per row
    assert ranges["pts"] == pytest.approx((-30 * 1.15, 30 * 1.15))  # the widest row decides
    assert ranges["value"] == pytest.approx((-0.05 * 1.15, 0.05 * 1.15))
    assert (tmp_path / "compare.png").stat().st_size > 5_000
    # each row says which side of 0 is which: BG-GAP's right is A leaning more
    assert RIGHT_OF_ZERO[1] == "right of 0: A leans more on the background"


def test_verdict_directions():
    row = {
        "label": "Challenge accuracy",
        "unit": "%",
        "reliance": -1,
        "difference": 5.0,
        "ci95": [1.0, 9.0],
        "n": 40,
    }
    assert verdict(row).startswith("A relies on backgrounds less than B")
    assert verdict({**row, "ci95": [-1.0, 9.0]}).startswith("no clear difference")


@pytest.mark.parametrize(
    "pairs, message",
    [
        (["in9"], "give BENCHMARK=PATH_OR_HUB_ID"),
        (["nope=./x"], "unknown benchmark 'nope'"),
        (["in9=a", "in9=b"], "names in9 twice"),
    ],
)
def test_bad_data_pairs(pairs, message):
    with pytest.raises(ReportError, match=message):
        parse_data_pairs(pairs)


def test_card_section_replaces_an_earlier_report():
    first = card_with_section("# My model\n", "## Background reliance\nold")
    second = card_with_section(first, "## Background reliance\nnew")
    assert second.count("Background reliance") == 1 and "new" in second and "old" not in second
    assert second.startswith("# My model\n")


def _as_if_on_the_hub(out, tmp_path):
    """A copy of the report whose IN-9 scores read as run on the Hub dataset itself, its
    files written again (so .eval_results/ holds the entries)."""
    import shutil

    from hf_bgbench.report.card import write_report_files

    folder = tmp_path / "hub_report"
    shutil.copytree(out, folder)
    doc = json.loads((folder / "report.json").read_text())
    for bench in doc["benchmarks"]:
        for entry in bench["tasks"].values():
            if entry.get("results"):
                entry["results"]["data"] = {"kind": "hub", "location": bench["hub_repo"]}
    write_report_files(doc, folder)
    return folder


def test_push_refuses_scores_on_other_data(in9_report):
    from hf_bgbench.report.hub import push_report

    with pytest.raises(ReportError, match="not all scores of the published Hub datasets") as e:
        push_report(in9_report[1], "someone/model")
    assert "in9 evaluate: scored on release data at" in str(e.value)


def test_push_offline_gives_the_clear_hub_error(in9_report, tmp_path, monkeypatch):
    from huggingface_hub import constants

    from hf_bgbench.hub.errors import HubUnreachableError
    from hf_bgbench.report.hub import push_report

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(HubUnreachableError, match="HF_HUB_OFFLINE is set"):
        push_report(_as_if_on_the_hub(in9_report[1], tmp_path), "someone/model")


@pytest.fixture
def hub_http(monkeypatch):
    """huggingface_hub's real code path, stubbed at the HTTP boundary only: no README on the
    Hub yet, every pre-upload answered "regular", every commit accepted (a PR when asked).
    Yields the requests sent."""
    import huggingface_hub
    from huggingface_hub import constants
    from huggingface_hub.utils._http import default_client_factory

    httpx = pytest.importorskip("httpx2")
    sent = []

    def handler(request):
        sent.append(request)
        path = request.url.path
        if path.endswith("/README.md"):
            return httpx.Response(404, headers={"X-Error-Code": "EntryNotFound"})
        if "/preupload/" in path:
            files = json.loads(request.content)["files"]
            answer = [
                {"path": f["path"], "uploadMode": "regular", "shouldIgnore": False} for f in files
            ]
            return httpx.Response(200, json={"files": answer})
        if "/commit/" in path:
            pr = request.url.params.get("create_pr") == "1"
            return httpx.Response(
                200,
                json={
                    "commitUrl": "https://huggingface.co/someone/x/commit/abc",
                    "commitOid": "a" * 40,
                    "pullRequestUrl": "https://huggingface.co/someone/x/discussions/1"
                    if pr
                    else None,
                },
            )
        if path.endswith("/repos/create"):
            return httpx.Response(200, json={"url": "https://huggingface.co/datasets/someone/x"})
        return httpx.Response(200, json={})

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    huggingface_hub.set_client_factory(lambda: httpx.Client(transport=httpx.MockTransport(handler)))
    yield sent
    huggingface_hub.set_client_factory(default_client_factory)


def _committed_files(sent):
    commit = next(r for r in sent if "/commit/" in r.url.path)
    lines = [json.loads(line) for line in commit.content.decode().splitlines()]
    return commit, {x["value"]["path"]: x["value"] for x in lines if x["key"] == "file"}


def test_push_opens_a_pull_request_with_the_eval_results(in9_report, tmp_path, hub_http):
    import base64

    from hf_bgbench.report.hub import push_report

    url = push_report(_as_if_on_the_hub(in9_report[1], tmp_path), "someone/model")
    assert url == "https://huggingface.co/someone/x/discussions/1"
    commit, files = _committed_files(hub_http)
    assert commit.url.params.get("create_pr") == "1"
    assert {".eval_results/in9.yaml", "README.md", "bgbench/reliance_profile.png"} <= set(files)
    entries = parse_eval_result_entries(
        yaml.safe_load(base64.b64decode(files[".eval_results/in9.yaml"]["content"]))
    )
    assert {e.task_id for e in entries} == {
        "accuracy_original",
        "accuracy_mixed_same",
        "accuracy_mixed_rand",
        "challenge_accuracy",
    }
    card = base64.b64decode(files["README.md"]["content"]).decode()
    assert "<!-- hf_bgbench report: start -->" in card and "bgbench/reliance_profile.png" in card


def test_publish_results_uploads_runs_and_configs(in9_report, hub_http):
    import base64

    from hf_bgbench.report.results_dataset import publish_results

    publish_results(in9_report[1], "someone/results")
    commit, files = _committed_files(hub_http)
    assert "/api/datasets/someone/results/commit/" in commit.url.path
    assert "runs/colour-rule-imagenet-1k/in9/challenge/vulnerable.parquet" in files
    card = base64.b64decode(files["README.md"]["content"]).decode()
    assert "config_name: colour-rule-imagenet-1k__in9" in card


def test_list_references_names_sources_and_tags(capsys):
    assert main(["list", "--references"]) == 0
    out = capsys.readouterr().out
    assert "ResNet-50 [challenge]: Challenge accuracy 22.3, Clean acc. 95.6" in out
    assert "weights: resnet50.tv_in1k" in out  # not timm's default resnet50 weights
    assert "Mean DA 15.72" in out and "source: Li et al. 2023" in out


def test_publish_results_plan_has_one_config_per_model_and_benchmark(in9_report):
    from hf_bgbench.report.results_dataset import dataset_card, results_plan

    plan, configs = results_plan(in9_report[1])
    paths = [p for p, _ in plan]
    base = "runs/colour-rule-imagenet-1k/in9"
    assert f"{base}/evaluate/results.json" in paths
    assert f"{base}/evaluate/predictions/mixed_rand.parquet" in paths
    assert f"{base}/challenge/vulnerable.parquet" in paths
    assert "runs/colour-rule-imagenet-1k/report.json" in paths
    assert [c["config_name"] for c in configs] == ["colour-rule-imagenet-1k__in9"]
    splits = {f["split"]: f["path"] for f in configs[0]["data_files"]}
    assert splits["mixed_rand"] == f"{base}/evaluate/predictions/mixed_rand.parquet"
    assert splits["challenge"] == f"{base}/challenge/vulnerable.parquet"
    # a second model's push keeps the first one's config in the card
    other = [{"config_name": "other__in9", "data_files": [{"split": "original", "path": "x"}]}]
    card = dataset_card(other, dataset_card(configs))
    names = [c["config_name"] for c in yaml.safe_load(card.split("---")[1])["configs"]]
    assert names == ["colour-rule-imagenet-1k__in9", "other__in9"]


def _published_in_the_hub_cache(report_folder, tmp_path, monkeypatch):
    """What `publish-results` pushed, as the Hub's cache holds it (offline), in the layout the
    Hub serves: datasets--someone--bgbench-results/{refs/main, snapshots/<sha>/runs/...}."""
    import shutil

    from huggingface_hub import constants

    from hf_bgbench.report.results_dataset import results_plan

    cache, sha = tmp_path / "hub", "c" * 40
    repo = cache / "datasets--someone--bgbench-results"
    for path, local in results_plan(report_folder)[0]:
        target = repo / "snapshots" / sha / path
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(local, target)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(sha)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))


def test_compare_reads_a_published_run_by_its_hub_address(in9_report, tmp_path, monkeypatch):
    """A run published with publish-results, read back by its hf:// address."""
    _published_in_the_hub_cache(in9_report[1], tmp_path, monkeypatch)
    address = "hf://datasets/someone/bgbench-results/runs/colour-rule-imagenet-1k/in9/evaluate"
    doc = compare_runs(address, in9_report[1] / "in9" / "evaluate")
    gap = next(r for r in doc["rows"] if r["key"] == "bg_gap")
    # the same run twice: every difference 0, which resampling cannot vary -> no interval
    assert gap["difference"] == 0.0 and gap["ci95"] is None and gap["n"] == 18
    with pytest.raises(Exception, match="not in the local Hub cache|has no folder"):
        compare_runs("hf://datasets/someone/absent/runs/x/in9/evaluate", address)


def test_table_reads_a_published_run_by_its_hub_address(in9_report, tmp_path, monkeypatch):
    from hf_bgbench.report.table import model_table, table_markdown

    _published_in_the_hub_cache(in9_report[1], tmp_path, monkeypatch)
    address = "hf://datasets/someone/bgbench-results/runs/colour-rule-imagenet-1k/in9/evaluate"
    published = model_table([address])
    assert published["benchmarks"][0]["rows"][0]["runs"] == {"evaluate": address}
    local = model_table([str(in9_report[1] / "in9" / "evaluate")])
    assert table_markdown(published) == table_markdown(local)
    assert "| colour-rule-imagenet-1k | " in table_markdown(local)


def test_a_number_through_a_head_that_did_not_learn_is_flagged():
    from hf_bgbench.report.headlines import headline_rows
    from hf_bgbench.report.markdown import report_markdown

    spec = get_benchmark("rival10")
    warning = "The linear head did not learn: its held-out accuracy is 0.0% (chance 10.0%)."
    doc = {
        "protocol": {"name": "rival10-paper", "deviations": [warning]},
        "warnings": [warning],
        "report": {"scores": [{"key": "rfs", "value": -0.4, "ci95": [-0.41, -0.39], "n": 18}]},
    }
    rows = headline_rows(spec, {"noise": doc})
    assert rows[0]["warnings"] == [warning]
    report = {
        "hf_bgbench_version": "x",
        "model": "m",
        "created": "2026-11-23",
        "seed": 0,
        "headlines": rows,
        "benchmarks": [],
        "references": [],
    }
    md = report_markdown(report)
    assert "| RIVAL10 | RFS ↑ | -0.400 [-0.410, -0.390] ⚠ |" in md
    assert "### ⚠ Numbers that may mean nothing" in md and "RIVAL10 RFS: The linear head" in md


def test_space_report_reads_the_allow_list_at_the_space_caps(tmp_path):
    from hf_bgbench.space.checks.allowlist import AllowedDataset
    from hf_bgbench.space.views.report_card import report_caps, report_data

    allowed = [
        AllowedDataset("in9-local", str(tmp_path), "in9"),
        AllowedDataset("in9-other", "/elsewhere", "in9"),
    ]
    assert report_data(allowed) == {"in9": str(tmp_path)}  # the first of each benchmark
    caps = report_caps(["in9"])
    assert caps["challenge"] == {"max_foregrounds": 50, "max_backgrounds": 200}
    assert caps["evaluate"] == {}  # every variant, every image


def test_the_space_leaderboard_reads_a_results_dataset_by_id(in9_report, tmp_path, monkeypatch):
    from hf_bgbench.space.views.leaderboard import results_repo_rows, table

    _published_in_the_hub_cache(in9_report[1], tmp_path, monkeypatch)
    monkeypatch.setenv("BGBENCH_RESULTS_REPOS", "someone/bgbench-results")
    rows = results_repo_rows()
    assert {(r["task"], r["source"]) for r in rows} == {
        ("evaluate", "results someone/bgbench-results"),
        ("challenge", "results someone/bgbench-results"),
    }
    evaluate = next(r for r in rows if r["task"] == "evaluate")
    assert evaluate["scores"]["BG-GAP"] == pytest.approx(100 * EXPECTED_BG_GAP, abs=0.01)
    assert evaluate["dataset"].startswith("local-")  # never credited to bgbench/in9
    headers, shown = table(rows, benchmark="in9", task="evaluate", published=True)
    assert any(row[0] == "colour-rule-imagenet-1k" for row in shown)
    monkeypatch.setenv("BGBENCH_RESULTS_REPOS", "someone/absent")
    assert results_repo_rows() == []  # not cached, offline: no rows, no error


def test_publish_results_never_publishes_a_path_of_this_machine(in9_report, tmp_path, capsys):
    from hf_bgbench.report.results_dataset import LOCAL_PATH, publishable, results_plan

    folder = in9_report[1]
    data = json.loads((folder / "in9" / "evaluate" / "results.json").read_text())["data"]
    local = data["location"]
    assert local.startswith("/")  # scored from a folder of this machine
    files, removed = publishable(results_plan(folder)[0])
    for path, content in files:
        text = content if isinstance(content, bytes) else content.read_bytes()
        assert local.encode() not in text, path
    assert "runs/colour-rule-imagenet-1k/in9/evaluate/results.json" in removed
    published = dict(files)["runs/colour-rule-imagenet-1k/in9/evaluate/results.json"]
    assert json.loads(published)["data"]["location"] == LOCAL_PATH
    argv = ["publish-results", str(folder), "--repo-id", "someone/results", "--dry-run"]
    assert main(argv) == 0
    said = capsys.readouterr().out
    assert f"path(s) of this machine -> {LOCAL_PATH}" in said and local not in said

    # a run of a model in a local folder cannot be named on the Hub: refused, saying why
    run = tmp_path / "local_model_run"
    shutil.copytree(folder / "in9" / "evaluate", run)
    doc = json.loads((run / "results.json").read_text())
    (run / "results.json").write_text(json.dumps({**doc, "model": "/home/me/my-model"}))
    assert main(["publish-results", str(run), "--repo-id", "someone/results", "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "is a folder on this machine (/home/me/my-model)" in err and "push_to_hub" in err


def test_the_reports_progress_counts_only_the_tasks_that_will_run(in9_release, tmp_path, capsys):
    """A benchmark without data runs no task: the "[i/n]" counter leaves its tasks out of n
    (it read "[2/7]" at the end of a report whose other benchmarks had no data)."""
    from hf_bgbench.benchmarks import get_benchmark

    options = {**QUIET, "progress": True}
    run_report(
        ColourRuleClassifier(),
        tmp_path / "report",
        data={"in9": str(in9_release)},
        benchmarks=["watermark", "in9"],  # the one without data first
        **options,
    )
    counted = [line for line in capsys.readouterr().err.splitlines() if line.startswith("[")]
    n = len(get_benchmark("in9").report_tasks)
    assert [line.split("]")[0] + "]" for line in counted] == [f"[{i}/{n}]" for i in range(1, n + 1)]


def test_a_challenge_sample_is_labelled_a_sample_beside_the_full_set_numbers(in9_release, tmp_path):
    """Fixed: a challenge over a sample of foregrounds sat unlabelled beside the published
    full-set numbers."""
    doc = run_report(
        ColourRuleClassifier(),
        tmp_path / "out",
        data={"in9": str(in9_release)},
        benchmarks=["in9"],
        challenge_foregrounds=5,
        **QUIET,
    )
    row = _row(doc, "challenge_accuracy")
    assert row["sample"] == "5 of 18 foregrounds (--max-foregrounds)"
    assert _row(doc, "bg_gap")["sample"] == ""  # evaluate ran on all of the data
    md = (tmp_path / "out" / "report.md").read_text()
    assert "(a sample: 5 of 18 foregrounds (--max-foregrounds))" in md
