"""``bgbench table``: many models' headline numbers in one table per benchmark (Markdown,
LaTeX, CSV), over results folders and report folders; runs that cannot share a column are
refused (tests/test_bad_inputs.py has those rows). Synthetic documents: every number in the
table is one written here."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from hf_bgbench.cli import main
from hf_bgbench.formatting import latex_text
from hf_bgbench.render import render_markdown
from hf_bgbench.report.table import model_table, table_latex, table_markdown

DEVIATION = "Inputs normalised with the model's own mean (0.5, 0.5, 0.5)"


def score(key: str, value: float, ci: list[float], n: int) -> dict:
    return {
        "key": key,
        "label": key,
        "short": "",
        "value": value,
        "ci95": ci,
        "n": n,
        "unit": "%",
        "headline": key == "bg_gap",
    }


def evaluate_doc(
    model: str, gap: float, fingerprint: str = "fp-in9", protocol: str = "in9-paper", **extra
) -> dict:
    return {
        "schema_version": "2.0",
        "task": "evaluate",
        "benchmark": "in9",
        "model": model,
        "data": {"fingerprint": fingerprint},
        "protocol": {"name": protocol, "deviations": [DEVIATION]},
        "report": {
            "scores": [
                score("accuracy/original", 0.9, [0.8, 0.95], 40),
                score("accuracy/mixed_same", 0.75, [0.6, 0.85], 40),
                score("accuracy/mixed_rand", 0.75 - gap, [0.5, 0.8], 40),
                score("bg_gap", gap, [gap - 0.05, gap + 0.05], 40),
            ],
            "tables": [],
            "notes": [],
            "figures": [],
        },
        **extra,
    }


def challenge_doc(model: str, accuracy: float) -> dict:
    return {
        "schema_version": "2.0",
        "task": "challenge",
        "benchmark": "in9",
        "model": model,
        "data": {"fingerprint": "fp-challenge"},
        "protocol": {
            "name": "in9-paper",
            "deviations": [],
            "departures": ["a seeded subset: 20 of 63 foregrounds (--max-foregrounds)"],
        },
        "report": {"scores": [score("challenge_accuracy", accuracy, [0.1, 0.3], 20)]},
    }


def write(folder: Path, doc: dict, name: str = "results.json") -> str:
    folder.mkdir(parents=True)
    (folder / name).write_text(json.dumps(doc))
    return str(folder)


def test_two_models_two_tasks_in_one_table_of_every_format(tmp_path, capsys):
    runs = [
        write(tmp_path / "lite0", evaluate_doc("tf_efficientnet_lite0", 0.1)),
        write(tmp_path / "resnet", evaluate_doc("resnet50.a1_in1k", 0.025)),
        write(tmp_path / "lite0_ch", challenge_doc("tf_efficientnet_lite0", 0.2), "c.json"),
    ]
    out = tmp_path / "table"
    assert main(["table", *runs, "--output", str(out)]) == 0
    md = (out / "table.md").read_text()
    assert capsys.readouterr().out.startswith(md)
    # one row per model: lite0's two runs share it; resnet ran no challenge
    assert (
        "| Model | original (%) | mixed_same (%) | mixed_rand (%) | BG-GAP (pts) | "
        "Challenge accuracy (%) |" in md
    )
    assert (
        "| tf_efficientnet_lite0 | 90.0 [80.0, 95.0] | 75.0 [60.0, 85.0] | 65.0 [50.0, 80.0] "
        "| 10.0 [5.0, 15.0] | 20.0 [10.0, 30.0] |" in md
    )
    assert "| resnet50.a1_in1k | 90.0 [80.0, 95.0] | 75.0 [60.0, 85.0] | 72.5 [50.0, 80.0] " in md
    assert md.count("| resnet50.a1_in1k |") == 1 and md.rstrip().count("\n| ") == 3
    # the data of each task, the protocol, the sizes and one footnote for both models
    assert "data evaluate fp-in9, challenge fp-challenge; protocol in9-paper;" in md
    assert "original: n = 40;" in md and "Challenge accuracy: n = 20" in md
    assert f"- tf_efficientnet_lite0, resnet50.a1_in1k: {DEVIATION}" in md
    assert (
        "- tf_efficientnet_lite0: challenge: a seeded subset: 20 of 63 foregrounds "
        "(--max-foregrounds)" in md
    )
    tex = (out / "table.tex").read_text()
    assert r"\begin{tabular}{lrrrrr}" in tex and r"\toprule" in tex
    # the deviation (a) names both models, the challenge subset (b) lite0 alone
    assert r"tf\_efficientnet\_lite0$^{a,b}$ & 90.0 {\scriptsize [80.0, 95.0]}" in tex
    assert r"resnet50.a1\_in1k$^{a}$ & " in tex and r"\end{tabular}" in tex
    assert r"$^{b}$\,challenge: a seeded subset: 20 of 63 foregrounds" in tex
    assert r"& -- \\" in tex  # resnet's missing challenge accuracy
    assert r"2.5 {\scriptsize [$-$2.5, 7.5]}" in tex  # minus signs, not hyphens
    with (out / "table.csv").open() as f:
        lines = list(csv.DictReader(f))
    assert len(lines) == 2 * 5
    gap = next(r for r in lines if r["model"] == "resnet50.a1_in1k" and r["key"] == "bg_gap")
    assert (gap["value"], gap["ci95_low"], gap["ci95_high"], gap["n"]) == (
        "2.5",
        "-2.5",
        "7.5",
        "40",
    )
    assert gap["data_fingerprint"] == "fp-in9" and gap["run"] == runs[1]
    assert gap["model_resolved"] == ""  # these documents name no weights
    missing = next(
        r for r in lines if r["model"] == "resnet50.a1_in1k" and r["task"] == "challenge"
    )
    assert missing["value"] == "" and missing["run"] == ""
    assert json.loads((out / "table.json").read_text())["kind"] == "bgbench-table"
    # the figure: a panel per column side by side, a line per model
    from PIL import Image

    with Image.open(out / "table_in9.png") as figure:
        assert figure.format == "PNG" and figure.width > 3 * figure.height


def test_a_reused_output_folder_keeps_no_figure_of_an_earlier_table(tmp_path):
    out = tmp_path / "table"
    out.mkdir()
    (out / "table_rival10.png").write_bytes(b"an earlier table's RIVAL10 figure")
    (out / "notes.txt").write_text("the user's own file")
    run = write(tmp_path / "lite0", evaluate_doc("tf_efficientnet_lite0", 0.1))
    assert main(["table", run, "--output", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == [
        "notes.txt",
        "table.csv",
        "table.json",
        "table.md",
        "table.tex",
        "table_in9.png",
    ]


def test_a_report_folder_gives_the_rows_of_its_results_folders(tmp_path):
    evaluate, challenge = evaluate_doc("m", 0.1), challenge_doc("m", 0.2)
    report = {
        "schema_version": "1.0",
        "benchmarks": [
            {
                "name": "in9",
                "tasks": {
                    "evaluate": {"folder": "in9/evaluate", "results": evaluate},
                    "challenge": {"folder": "in9/challenge", "results": challenge},
                },
            }
        ],
    }
    from_report = model_table([write(tmp_path / "report", report, "report.json")])
    from_results = model_table(
        [write(tmp_path / "e", evaluate), write(tmp_path / "c", challenge, "c.json")]
    )
    assert table_markdown(from_report) == table_markdown(from_results)
    assert from_report["benchmarks"][0]["rows"][0]["runs"] == {
        "evaluate": f"{tmp_path / 'report'}/in9/evaluate",
        "challenge": f"{tmp_path / 'report'}/in9/challenge",
    }


def test_one_zero_shot_model_with_two_heads_gets_two_named_rows(tmp_path):
    def head(sha: str, names: str) -> dict:
        return {
            "num_classes": 9,
            "classnames_source": names,
            "num_templates": 80,
            "templates_source": "openai_imagenet_templates",
            "library": "open_clip",
            "text_embeddings_sha256": sha,
        }

    model = "openai/clip-vit-base-patch32"
    runs = [
        write(tmp_path / "a", evaluate_doc(model, 0.1, zero_shot=head("a" * 64, "imagenet"))),
        write(tmp_path / "b", evaluate_doc(model, 0.2, zero_shot=head("b" * 64, "benchmark"))),
    ]
    md = table_markdown(model_table(runs))
    assert f"| {model} (zero-shot {'a' * 12}) | " in md
    assert f"| {model} (zero-shot {'b' * 12}) | " in md
    # each head is a footnote of its own row: class names, templates, embeddings
    assert f"- {model} (zero-shot {'a' * 12}): zero-shot head: 9 class names (imagenet)" in md
    only = table_latex(model_table(runs[:1]))
    assert r"openai/clip-vit-base-patch32 (zero-shot)$^{a,b}$ & " in only


def test_the_latex_row_of_results_md_compiles_with_underscores_in_the_model_id():
    doc = evaluate_doc("tf_efficientnet_lite0", 0.1)
    md = render_markdown(doc)
    # fixed: the row gave no intervals; now each beside its value, as `bgbench table` writes
    assert (
        r"tf\_efficientnet\_lite0 & 90.0 {\scriptsize [80.0, 95.0]} & 75.0 {\scriptsize "
        r"[60.0, 85.0]} & 65.0 {\scriptsize [50.0, 80.0]} & 10.0 {\scriptsize [5.0, 15.0]} \\"
    ) in md
    assert latex_text(r"a_b & 5% #1 {x} ~^\ $") == (
        r"a\_b \& 5\% \#1 \{x\} \textasciitilde{}\textasciicircum{}\textbackslash{} \$"
    )


def test_a_number_whose_run_warned_is_marked_in_every_format(tmp_path):
    warning = "The linear head did not learn: its train accuracy is at chance"
    run = write(tmp_path / "r", evaluate_doc("m_1", 0.1, warnings=[warning]))
    out = tmp_path / "t"
    assert main(["table", run, "--output", str(out)]) == 0
    md = (out / "table.md").read_text()
    assert "| m_1 | 90.0 [80.0, 95.0] ⚠ |" in md and f"- m_1: ⚠ evaluate: {warning}" in md
    tex = (out / "table.tex").read_text()
    assert r"m\_1$^{a,b}$ & 90.0$^\dagger$ {\scriptsize [80.0, 95.0]}" in tex
    assert r"$^\dagger$\,the run warned that this number may mean nothing" in tex
    with (out / "table.csv").open() as f:
        assert {line["warnings"] for line in csv.DictReader(f)} == {warning}


def test_one_model_id_with_other_weights_gets_a_row_per_weights(tmp_path):
    """The same Hub id scored before and after its weights changed: two rows, each named
    by the commit it resolved to, never one row mixing the two."""
    model = "timm/resnet50.a1_in1k"
    runs = [
        write(
            tmp_path / f"r{i}",
            evaluate_doc(model, gap, model_resolved=f"hf-hub:{model}@{commit * 40}"),
        )
        for i, (gap, commit) in enumerate([(0.1, "a"), (0.2, "b")])
    ]
    doc = model_table(runs)
    md = table_markdown(doc)
    assert f"| {model} (hf-hub:{model}@{'a' * 40}) | 90.0 [80.0, 95.0] |" in md
    assert f"| {model} (hf-hub:{model}@{'b' * 40}) | 90.0 [80.0, 95.0] |" in md
    single = model_table(runs[:1])
    assert f"| {model} | 90.0 [80.0, 95.0] |" in table_markdown(single)
    assert single["benchmarks"][0]["rows"][0]["model_resolved"] == f"hf-hub:{model}@{'a' * 40}"


@pytest.mark.parametrize("run", ["missing", "empty"])
def test_a_folder_without_results_is_refused(tmp_path, run, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["table", str(tmp_path / run), "--output", str(tmp_path / "t")]) != 0
    err = capsys.readouterr().err
    assert "give a results or report folder" in err or "holds no bgbench results" in err
    assert "Traceback" not in err and not (tmp_path / "t").exists()


class ClosedPipe:
    """A stdout whose reader went away (`bgbench table ... | head -1`)."""

    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")


def test_a_reader_that_stops_early_gets_the_files_and_no_error(tmp_path, monkeypatch, capsys):
    run = write(tmp_path / "lite0", evaluate_doc("tf_efficientnet_lite0", 0.1))
    monkeypatch.setattr("sys.stdout", ClosedPipe())
    assert main(["table", run, "--output", str(tmp_path / "t")]) == 141
    assert capsys.readouterr().err == ""
    assert sorted(p.name for p in (tmp_path / "t").iterdir()) == [
        "table.csv",
        "table.json",
        "table.md",
        "table.tex",
        "table_in9.png",
    ]


def test_the_latex_table_keeps_every_footnote_of_the_markdown_one(tmp_path):
    """Each caveat table.md lists (a zero-shot head, a warning) is in table.tex too, its
    letter on the rows of the models it names; compiled by pdflatex where it is installed."""
    warning = "The linear head did not learn: its train accuracy is at chance"
    head = {
        "num_classes": 9,
        "classnames_source": "benchmark (IN-9's own 9 classes)",
        "num_templates": 7,
        "templates_source": "simple",
        "library": "open_clip",
        "text_embeddings_sha256": "c" * 64,
    }
    runs = [
        write(tmp_path / "a", evaluate_doc("clip_b32", 0.1, zero_shot=head)),
        write(tmp_path / "b", evaluate_doc("m_1", 0.2, warnings=[warning])),
    ]
    doc = model_table(runs)
    notes = doc["benchmarks"][0]["notes"]
    assert len(notes) == 3  # the head, the warning, the normalisation deviation
    tex = table_latex(doc)
    for letter, note in zip("abc", notes, strict=True):
        text = latex_text(note["note"].removeprefix("⚠ "))
        assert f"$^{{{letter}}}$\\," in tex and f"{text}\\par" in tex
    for model in ("clip_b32 (zero-shot)", "m_1"):
        letters = ",".join(x for x, n in zip("abc", notes, strict=True) if model in n["models"])
        assert f"{latex_text(model)}$^{{{letters}}}$ & " in tex
    assert r"$^\dagger$\,the run warned" in tex
    _compiles(tex, tmp_path)


def _compiles(tex: str, folder: Path) -> None:
    """pdflatex builds a document around ``tex`` (skipped, saying so, without pdflatex)."""
    import shutil
    import subprocess

    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex is not installed (apt-get install texlive-latex-recommended)")
    body = "\\documentclass{article}\\usepackage{booktabs}\\begin{document}\n"
    (folder / "t.tex").write_text(body + tex + "\n\\end{document}\n", encoding="utf-8")
    done = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "t.tex"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-2000:]


def test_results_md_points_to_the_model_index_file_written_beside_it():
    """Fixed: results.md spent most of its lines on the model-index YAML, which
    results_model_index.yaml already holds; the Space, which writes no such file, keeps it."""
    doc = evaluate_doc("tf_efficientnet_lite0", 0.1)
    beside = render_markdown(doc, "results_model_index.yaml")
    assert "```yaml" not in beside and "is `results_model_index.yaml`, beside this" in beside
    assert "```yaml\nmodel-index:" in render_markdown(doc)


def test_results_md_defines_the_prediction_categories_where_they_appear():
    """Fixed: "BG Required", "BG Fools", ... were shown undefined."""
    import pandas as pd

    from hf_bgbench.benchmarks import get_benchmark
    from hf_bgbench.scoring import ScoringContext, compute_metrics

    spec = get_benchmark("in9")
    frame = pd.DataFrame({"id": ["a", "b"], "label": [0, 1], "pred": [0, 1]})
    frames = {v: frame for v in ("original", "mixed_rand", "only_bg_t")}
    out = compute_metrics(spec.metrics, frames, ScoringContext({}, spec.classes))
    (table,) = [t for t in out.report.tables if t.key == "categories"]
    assert "BG Fools: wrong on the full image, right on the foreground" in table.note
    assert "BG Required: right on the full image and on the background alone" in table.note


def test_the_terminal_says_when_predictions_came_from_the_cache():
    """Fixed: a rerun read from the cache printed as if it had scored anew."""
    from hf_bgbench.render import render_table

    doc = evaluate_doc("tf_efficientnet_lite0", 0.1)
    assert "came from the prediction cache" not in render_table(doc)
    doc |= {"reused_images": 5, "computed_images": 13}
    assert "5 of 18 images' predictions came from the prediction cache" in render_table(doc)
