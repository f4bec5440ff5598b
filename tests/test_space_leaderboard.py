"""The Space's leaderboard: rows of a dataset folder, deduplicated, full runs only."""

from __future__ import annotations

import json

import pytest

from hf_bgbench.space.views.leaderboard import (
    ROWS_FILE,
    NotEligible,
    append_result,
    published_rows,
    read_rows,
    table,
)


def _doc(
    gap: float = 0.07,
    *,
    model: str = "m/x",
    version: str = "0.1.0",
    protocol: str = "in9-paper",
    scored=("original", "mixed_same", "mixed_rand"),
    **extra,
):
    return {
        "schema_version": "2.0",
        "task": "evaluate",
        "model": model,
        "model_resolved": f"hf-hub:{model}",
        "benchmark": "in9",
        "data": {
            "kind": "hub-folder",
            "location": "/srv/in9",
            "variants": ["original", "mixed_same", "mixed_rand"],
            "fingerprint": "f" * 20,
        },
        "variants": {v: {"accuracy": 0.9} for v in scored},
        "protocol": {"name": protocol, "settings": {}, "deviations": []},
        "hf_bgbench_version": version,
        "created": "2025-01-02T03:04:05+00:00",
        "label_protocol": "published",
        **extra,
        "report": {
            "scores": [
                {
                    "key": "bg_gap",
                    "label": "BG-GAP (…)",
                    "short": "BG-GAP",
                    "value": gap,
                    "unit": "pts",
                    "ci95": [gap - 0.011, gap + 0.012],
                    "n": 4050,
                    "headline": True,
                },
                {
                    "key": "accuracy/original",
                    "label": "original",
                    "short": "",
                    "value": 0.9,
                    "unit": "%",
                    "ci95": [0.891, 0.909],
                    "n": 4050,
                    "config": "original",
                },
            ],
            "tables": [],
            "figures": [],
        },
    }


def _board(tmp_path, **filters):
    headers, rows = table(read_rows(tmp_path), benchmark="in9", task="evaluate", **filters)
    return [dict(zip(headers, r, strict=True)) for r in rows]


def test_append_keeps_the_headline_scores(tmp_path):
    row = append_result(tmp_path, _doc(), "in9-local")
    # the benchmark's report headlines (original, mixed_same, mixed_rand, BG-GAP) present
    assert row["scores"] == {"original": 90.0, "BG-GAP": 7.0}
    assert row["intervals"]["BG-GAP"] == [5.9, 8.2] and row["units"]["BG-GAP"] == "pts"
    assert row["source"] == "measured" and row["dataset"] == "in9-local"
    assert row["protocol"] == "in9-paper"
    assert read_rows(tmp_path) == [json.loads(json.dumps(row))]
    lines = (tmp_path / ROWS_FILE).read_text().splitlines()
    assert len(lines) == 1  # JSON lines: datasets.load_dataset("json", data_files=...)


def test_one_row_per_model_dataset_and_protocol(tmp_path):
    append_result(tmp_path, _doc(0.07), "in9")
    append_result(tmp_path, _doc(0.05), "in9")  # same model, dataset, protocol: replaced
    append_result(tmp_path, _doc(0.04, version="0.2.0"), "in9")  # a newer version too
    assert [r["scores"]["BG-GAP"] for r in read_rows(tmp_path)] == [4.0]
    append_result(tmp_path, _doc(0.03, model="m/y"), "in9")
    append_result(tmp_path, _doc(0.02), "in9-local")
    append_result(tmp_path, _doc(0.01, protocol="bgbench-v1"), "in9")
    assert len(read_rows(tmp_path)) == 4
    # a run on some of the variants cannot add a row of its own (nor pad the board)
    with pytest.raises(NotEligible, match="it scored 2 of the 3 variants the dataset holds"):
        append_result(tmp_path, _doc(0.0, scored=("original", "mixed_rand")), "in9")
    assert len(read_rows(tmp_path)) == 4
    keys = [(r["model"], r["dataset"], r["protocol"]) for r in read_rows(tmp_path)]
    assert len(set(keys)) == len(keys)


def test_a_run_of_the_variants_the_headline_reads_is_ranked(tmp_path):
    """The Space ticks the variants BG-GAP reads (original, mixed_same, mixed_rand) by
    default: such a run on a dataset of all eight ranks with the same BG-GAP as a run of all
    eight; one without mixed_same cannot."""
    every = ["original", "only_bg_b", "only_bg_t", "no_fg", "only_fg", "mixed_same"]
    every += ["mixed_rand", "mixed_next"]
    doc = _doc(0.05)
    doc["data"]["variants"] = every
    append_result(tmp_path, doc, "in9")
    (row,) = read_rows(tmp_path)
    assert row["scores"]["BG-GAP"] == 5.0
    partial = _doc(0.05, scored=("original", "mixed_rand", "only_fg"), model="m/z")
    partial["data"]["variants"] = every
    with pytest.raises(NotEligible, match=r"it scored 3 of the 8 variants .*\(mixed_same left"):
        append_result(tmp_path, partial, "in9")


def test_the_label_protocol_is_part_of_the_protocol(tmp_path):
    append_result(tmp_path, _doc(), "in9")
    append_result(tmp_path, _doc(label_protocol="restricted to in9 classes"), "in9")
    assert sorted(r["protocol"] for r in read_rows(tmp_path)) == [
        "in9-paper",
        "in9-paper (restricted to in9 classes)",
    ]


@pytest.mark.parametrize(
    "extra",
    [
        {"subset": {"max_foregrounds": 100, "max_backgrounds": None}},
        {"max_images": 200},
        {"max_images": 3, "image_ids": ["a", "b", "c"]},  # the cap drew 3 of more
        {"max_images": 3, "image_ids": ["a", "b"], "skipped": [{"id": "c"}]},
        {"mismatched_ids": {"dropped": 3}},
    ],
)
def test_subset_runs_are_refused(tmp_path, extra):
    with pytest.raises(NotEligible, match="Not added to the leaderboard"):
        append_result(tmp_path, _doc(**extra), "in9")
    assert read_rows(tmp_path) == []


@pytest.mark.parametrize(
    "extra",
    [
        {"subset": {"seed": 0, "max_foregrounds": None, "max_backgrounds": None}},
        # a cap above the data's size drew every image: the full data was scored
        {"max_images": 200, "image_ids": [f"i{k}" for k in range(63)]},
        {
            "subset": {
                "seed": 0,
                "max_foregrounds": 100,
                "max_backgrounds": 200,
                "foreground_ids": ["a"] * 18,
                "background_ids": ["b"] * 18,
            },
            "skipped": {"foregrounds": [], "backgrounds": []},
        },
        {"subset": {"seed": 0, "max_images": 200, "ids": ["a"] * 63}},
    ],
)
def test_uncapped_runs_are_accepted(tmp_path, extra):
    assert append_result(tmp_path, _doc(**extra), "in9")["model"] == "m/x"


def test_published_numbers_are_shown_and_marked(tmp_path):
    append_result(tmp_path, _doc(), "in9")
    rows = _board(tmp_path)
    published = [r for r in rows if r["source"] == "published"]
    assert {
        r["model"]: r["BG-GAP (pts)"]
        for r in published
        if r["model"]
        in (
            "VGG16-BN",
            "ResNet-50",
            "ResNet-152",
        )
    } == {"VGG16-BN": "10.2", "ResNet-50": "7.3", "ResNet-152": "5.8"}
    (measured,) = [r for r in rows if r["source"] == "measured"]
    # one decimal like the published rows, the 95% interval beside, units in the headers
    assert measured["model"] == "m/x" and measured["BG-GAP (pts)"] == "7.0 [5.9, 8.2]"
    assert measured["original (%)"] == "90.0 [89.1, 90.9]"
    assert all(r["protocol"] for r in published)
    # best first: the smallest gap (least background reliance) on top
    gaps = [float(r["BG-GAP (pts)"].split()[0]) for r in rows if r["BG-GAP (pts)"]]
    assert gaps == sorted(gaps)
    challenge = [r for r in published_rows() if r["task"] == "challenge"]
    assert challenge[0]["scores"]["Challenge accuracy"] == 22.3


def test_the_board_fits_a_page(tmp_path):
    """One benchmark and task at a time: a handful of columns, none of them server facts,
    the key ones first (the model, then its scores: what a phone shows before scrolling)."""
    append_result(tmp_path, _doc(), "in9")
    headers, _ = table(read_rows(tmp_path), benchmark="in9", task="evaluate")
    assert headers[:2] == ["model", "BG-GAP (pts)"]  # the number the board ranks by
    assert all(h.endswith(")") for h in headers[2:-3])  # the other scores, with units
    assert headers[-3:] == ["source", "dataset", "protocol"]
    assert len(headers) <= 9
    assert "data_fingerprint" not in headers and "hf_bgbench_version" not in headers


def test_each_row_links_to_its_report_and_files(tmp_path):
    """A run's row keeps its results document and report beside the rows and links to them
    (served by the Space); a published row links to its paper; a row pushed to a Hub
    dataset whose files are not here links to the Hub's copy."""
    from pathlib import Path

    from hf_bgbench.space.views.leaderboard import row_links

    # a whole results document (the pinned one of tests/test_golden_documents.py)
    doc = json.loads((Path(__file__).parent / "golden/evaluate/results.json").read_text())
    row = append_result(tmp_path, doc, "in9-local")
    kept = tmp_path / row["files"]
    assert json.loads((kept / "evaluate.json").read_text())["model"] == doc["model"]
    report = (kept / "evaluate.md").read_text()
    # the figures stay with the run: no image link that would be broken here
    assert "BG-GAP" in report and not [x for x in report.splitlines() if x.startswith("![")]
    headers, rows = table(
        read_rows(tmp_path),
        benchmark="in9",
        task="evaluate",
        links=lambda r: row_links(r, tmp_path),
    )
    board = [dict(zip(headers, r, strict=True)) for r in rows]
    (measured,) = [r for r in board if r["source"] == "measured"]
    assert measured["model"] == doc["model"]
    assert f"[report](/gradio_api/file={kept.resolve()}/evaluate.md)" in measured["results"]
    assert f"[JSON](/gradio_api/file={kept.resolve()}/evaluate.json)" in measured["results"]
    published = [r for r in board if r["source"] == "published"]
    assert published and all(
        r["results"] == "[paper](https://arxiv.org/abs/2006.09994)" for r in published
    )
    elsewhere = row_links(dict(row), tmp_path / "gone", "me/board")
    assert (
        f"https://huggingface.co/datasets/me/board/blob/main/{row['files']}/evaluate.md"
        in elsewhere
    )


def test_a_row_pushed_to_the_hub_takes_its_files_in_the_same_commit(tmp_path, monkeypatch):
    """With a Hub dataset for the board, the rows and the new row's report and results file
    go up in one commit, so the Hub's rows never link to files it does not hold yet."""
    from pathlib import Path

    from huggingface_hub import HfApi

    from hf_bgbench.space.checks import model_weights
    from hf_bgbench.space.views import leaderboard

    commits = []
    monkeypatch.setattr(model_weights, "hub_offline", lambda: False)
    monkeypatch.setattr(leaderboard, "pull", lambda folder, repo: False)
    monkeypatch.setattr(HfApi, "create_repo", lambda self, *a, **k: None)
    monkeypatch.setattr(
        HfApi, "create_commit", lambda self, repo, ops, **k: commits.append((repo, ops, k))
    )
    doc = json.loads((Path(__file__).parent / "golden/evaluate/results.json").read_text())
    row = append_result(tmp_path, doc, "in9-local", "me/board")
    ((repo, ops, options),) = commits
    assert repo == "me/board" and options["repo_type"] == "dataset"
    assert [op.path_in_repo for op in ops] == [
        "rows.jsonl",
        f"{row['files']}/evaluate.json",
        f"{row['files']}/evaluate.md",
    ]


def test_published_rows_take_extra_keys(monkeypatch):
    """A benchmark's reference rows may carry more keys (a source, a timm tag): ignored."""
    from hf_bgbench.space.views import leaderboard

    class Spec:
        name = "in9"
        published_results = [
            {
                "model": "X",
                "task": "evaluate",
                "dataset": "d",
                "scores": {"BG-GAP": 1.0},
                "source": "a paper",
                "timm_tag": "x.tv_in1k",
            }
        ]

        def protocol_for(self, task):
            raise ValueError("none")

    monkeypatch.setattr("hf_bgbench.benchmarks.all_specs", lambda: [Spec()])
    (row,) = leaderboard.published_rows()
    assert row["source"] == "published" and row["reference"] == "a paper"
    assert row["scores"] == {"BG-GAP": 1.0} and row["protocol"] == ""


def test_filters(tmp_path):
    append_result(tmp_path, _doc(model="m/x"), "in9")
    append_result(tmp_path, _doc(model="m/y"), "in9")
    _, rows = table(read_rows(tmp_path), model="Y", published=False)
    assert [r[0] for r in rows] == ["m/y"]
    _, rows = table(read_rows(tmp_path), task="challenge")
    assert [r[0] for r in rows] == ["ResNet-50", "ResNet-50 (trained on IN-9L)", 'always "dog"']


def _challenge_doc(**extra):
    doc = _doc(**extra)
    doc["task"] = "challenge"
    doc["report"]["scores"] = [
        {"key": "challenge_accuracy", "label": "Challenge accuracy", "value": 0.25,
         "unit": "%", "ci95": [0.2, 0.3], "n": 18, "headline": True},
        {"key": "accuracy", "label": "Clean accuracy (only_fg)", "short": "Clean acc.",
         "value": 0.9, "unit": "%", "n": 18},
    ]  # fmt: skip
    return doc


def test_the_challenge_board_shows_clean_accuracy_as_the_paper_prints_it(tmp_path):
    headers, rows = table([], benchmark="in9", task="challenge")
    board = [dict(zip(headers, r, strict=True)) for r in rows]
    assert {r["model"]: r["Clean acc."] for r in board if r["Clean acc."]} == {
        "ResNet-50": "95.6",  # as the paper prints it, not 95.600
        "ResNet-50 (trained on IN-9L)": "96.4",
    }
    # a measured run fills the column the published rows give, in the same unit
    append_result(tmp_path, _challenge_doc(), "in9-local")
    headers, rows = table(read_rows(tmp_path), benchmark="in9", task="challenge")
    board = [dict(zip(headers, r, strict=True)) for r in rows]
    (measured,) = [r for r in board if r["source"] == "measured"]
    assert measured["Clean acc. (%)"] == "90.0" and measured["Challenge accuracy (%)"]
    assert {r["Clean acc. (%)"] for r in board if r["model"] == "ResNet-50"} == {"95.6"}


def _hub_doc(gap: float, model: str):
    """A run on the benchmark's published Hub dataset (its 4,050 images per variant)."""
    from hf_bgbench.benchmarks import get_benchmark

    doc = _doc(gap, model=model)
    doc["data"] = {**doc["data"], "kind": "hub", "location": get_benchmark("in9").hub_repo}
    return doc


def test_runs_on_a_local_sample_are_never_ranked_with_the_published_benchmark(tmp_path):
    """A run on a local copy or sample has its own table -- with its image count and data
    fingerprint -- and never sits in one ranking with the published full-benchmark rows."""
    sample = _doc(0.01, model="m/sample")  # a local folder: smaller gap, better rank
    for score in sample["report"]["scores"]:
        score["n"] = 18
    append_result(tmp_path, sample, "in9-local")
    append_result(tmp_path, _hub_doc(0.09, "m/full"), "in9")
    rows = read_rows(tmp_path)
    headers, values = table(rows, benchmark="in9", task="evaluate", scope="benchmark")
    full = [dict(zip(headers, r, strict=True)) for r in values]
    assert "m/sample" not in {r["model"] for r in full}
    assert "m/full" in {r["model"] for r in full}
    assert {r["source"] for r in full} == {"published", "measured"}
    assert "images" not in headers
    headers, values = table(rows, benchmark="in9", task="evaluate", scope="other")
    (other,) = [dict(zip(headers, r, strict=True)) for r in values]
    assert other["model"] == "m/sample" and other["source"] == "measured"
    assert other["images"] == "18" and other["data fingerprint"] == "f" * 12
    assert other["dataset"] == "in9-local"
    # a row written before runs recorded what they scored is not taken for the benchmark
    old = {k: v for k, v in rows[1].items() if k != "scored"}
    _, values = table([old], benchmark="in9", task="evaluate", scope="benchmark", published=False)
    assert values == []


def test_a_number_is_rounded_once_as_the_report_rounds_it(tmp_path):
    """74.049 % is 74.0 in the report; stored to two decimals first (74.05) it became 74.1 on
    the board."""
    from hf_bgbench.formatting import interval, number

    doc = _doc()
    original = doc["report"]["scores"][1]
    original["value"], original["ci95"] = 0.80749, [0.74049, 0.86049]
    append_result(tmp_path, doc, "in9-local")
    row = next(r for r in _board(tmp_path) if "m/x" in map(str, r.values()))
    cell = next(v for k, v in row.items() if k.startswith("original"))
    assert cell == f"{number(0.80749, '%')} {interval([0.74049, 0.86049], '%')}"
    assert cell == "80.7 [74.0, 86.0]"
