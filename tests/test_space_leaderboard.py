"""The Space's leaderboard: rows of a dataset folder, deduplicated, full runs only."""

from __future__ import annotations

import json

import pytest

from hf_bgbench.space.leaderboard import (
    ROWS_FILE,
    NotEligible,
    append_result,
    data_fingerprint,
    published_rows,
    read_rows,
    table,
)


def _doc(gap: float = 0.07, *, model: str = "m/x", version: str = "0.1.0", **extra):
    return {
        "schema_version": "1.0",
        "task": "evaluate",
        "model": model,
        "model_resolved": f"hf-hub:{model}",
        "benchmark": "in9",
        "data": {"kind": "hub-folder", "location": "/srv/in9", "variants": ["original"]},
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
                    "n": 4050,
                    "headline": True,
                },
                {
                    "key": "accuracy/original",
                    "label": "original",
                    "short": "",
                    "value": 0.9,
                    "unit": "%",
                    "n": 4050,
                },
            ],
            "tables": [],
            "figures": [],
        },
    }


def test_append_keeps_the_headline_scores(tmp_path):
    row = append_result(tmp_path, _doc(), "in9-local")
    assert row["scores"] == {"BG-GAP": 7.0, "original": 90.0}
    assert row["source"] == "measured" and row["dataset"] == "in9-local"
    assert read_rows(tmp_path) == [json.loads(json.dumps(row))]
    lines = (tmp_path / ROWS_FILE).read_text().splitlines()
    assert len(lines) == 1  # JSON lines: datasets.load_dataset("json", data_files=...)


def test_same_key_replaces_the_row_other_keys_add_one(tmp_path):
    append_result(tmp_path, _doc(0.07), "in9")
    append_result(tmp_path, _doc(0.05), "in9")  # same model, data, version: replaced
    assert [r["scores"]["BG-GAP"] for r in read_rows(tmp_path)] == [5.0]
    append_result(tmp_path, _doc(0.04, version="0.2.0"), "in9")
    append_result(tmp_path, _doc(0.03, model="m/y"), "in9")
    other = _doc(0.02)
    other["data"] = {**other["data"], "location": "bgbench/in9"}
    append_result(tmp_path, other, "in9")
    assert len(read_rows(tmp_path)) == 4
    assert data_fingerprint(other) != data_fingerprint(_doc())


@pytest.mark.parametrize(
    "extra",
    [
        {"subset": {"max_foregrounds": 100, "max_backgrounds": None}},
        {"max_images": 200},
        {"mismatched_ids": {"dropped": 3}},
    ],
)
def test_subset_runs_are_refused(tmp_path, extra):
    with pytest.raises(NotEligible, match="Not added to the leaderboard"):
        append_result(tmp_path, _doc(**extra), "in9")
    assert read_rows(tmp_path) == []


def test_uncapped_challenge_is_accepted(tmp_path):
    doc = _doc(subset={"seed": 0, "max_foregrounds": None, "max_backgrounds": None})
    assert append_result(tmp_path, doc, "in9")["model"] == "m/x"


def test_published_numbers_are_shown_and_marked(tmp_path):
    append_result(tmp_path, _doc(), "in9")
    headers, rows = table(read_rows(tmp_path), benchmark="in9", task="evaluate")
    by_model = [dict(zip(headers, r, strict=True)) for r in rows]
    published = [r for r in by_model if r["source"] == "published"]
    assert {r["model"]: r["BG-GAP"] for r in published} == {
        "VGG16-BN": 10.2,
        "ResNet-50": 7.3,
        "ResNet-152": 5.8,
    }
    assert [r["model"] for r in by_model if r["source"] == "measured"] == ["m/x"]
    challenge = [r for r in published_rows() if r["task"] == "challenge"]
    assert challenge[0]["scores"]["Challenge accuracy"] == 22.3


def test_filters(tmp_path):
    append_result(tmp_path, _doc(model="m/x"), "in9")
    append_result(tmp_path, _doc(model="m/y"), "in9")
    _, rows = table(read_rows(tmp_path), model="Y", published=False)
    assert [r[1] for r in rows] == ["m/y"]
    _, rows = table(read_rows(tmp_path), task="challenge")
    assert [r[1] for r in rows] == ["ResNet-50"]
