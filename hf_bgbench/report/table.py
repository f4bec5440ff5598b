"""``bgbench table RUN [RUN ...]``: many models' headline numbers in one table per benchmark,
to paste into a paper (Markdown, LaTeX with booktabs, CSV) and a figure per benchmark
(:mod:`hf_bgbench.report.table_figure`).

A RUN is a results folder of one task or a ``bgbench report`` folder (every task it ran),
local or published (``hf://datasets/OWNER/NAME/runs/...``). Runs of one model (the same
model id and weights and, for a zero-shot model, the same class names and templates) share a
row; the
columns are the benchmark's report-card headlines (:attr:`BenchmarkSpec.report`) of the tasks
that ran. Models in one column were measured on the same data by the same protocol: runs
that differ in either are refused, naming both, as ``bgbench compare`` refuses them. Each
model's protocol deviations, departures from the published protocol (a subset, other
classes) and zero-shot head are footnotes naming the models they concern.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hf_bgbench.benchmarks import get_benchmark, list_benchmarks
from hf_bgbench.formatting import latex_text
from hf_bgbench.report.headlines import headline_rows, protocol_of
from hf_bgbench.report.markdown import WARNED, display_number
from hf_bgbench.report.paired import (
    CompareError,
    load_run,
    scored_variants,
    subset_difference,
)
from hf_bgbench.report.results_dataset import fetch_run
from hf_bgbench.results import model_head_line, vlm_tag, write_json, write_run_folder

TABLE_SCHEMA = "table-1.0"
CSV_COLUMNS = (
    "model",
    "model_resolved",
    "benchmark",
    "task",
    "key",
    "label",
    "unit",
    "value",
    "ci95_low",
    "ci95_high",
    "n",
    "protocol",
    "data_fingerprint",
    "run",
    "warnings",
)


class TableError(CompareError):
    """Runs that cannot share a table (other data, another protocol, one model twice)."""


def _documents(address: str) -> list[tuple[Mapping[str, Any], str]]:
    """(results document, where it came from) of every task run in ``address``."""
    kind, doc, folder = load_run(fetch_run(address))
    if kind == "results":
        return [(doc, address)]
    runs = [
        (entry["results"], f"{address}/{entry.get('folder', task)}")
        for bench in doc.get("benchmarks", [])
        for task, entry in bench.get("tasks", {}).items()
        if entry.get("results")
    ]
    if not runs:  # it was left out of the table without a word
        said = [
            f"{bench.get('name')} {task}: {entry.get('status')}"
            + (f" ({entry['reason']})" if entry.get("reason") else "")
            for bench in doc.get("benchmarks", [])
            for task, entry in bench.get("tasks", {}).items()
        ]
        raise TableError(
            f"{address} is a `bgbench report` of {doc.get('model')} with no finished task run"
            f" ({'; '.join(said) or 'no task ran'}), so it has no number for the table: "
            "re-run the report once what stopped it is fixed, or leave it out."
        )
    return runs


def _fingerprint(doc: Mapping[str, Any]) -> str:
    return str((doc.get("data") or {}).get("fingerprint") or "")


def _same_measurement(first: tuple[str, Mapping, str], other: tuple[str, Mapping, str]) -> None:
    """Refuse ``other`` beside ``first`` in one column: (model, document, run) each."""
    (model_a, a, run_a), (model_b, b, run_b) = first, other
    for what, x, y in (
        ("data fingerprint", _fingerprint(a), _fingerprint(b)),
        ("protocol", protocol_of(a)[0], protocol_of(b)[0]),
    ):
        if x != y:
            variants_a, variants_b = scored_variants(a), scored_variants(b)
            why = (
                f" They scored other variants ({', '.join(variants_a)} vs "
                f"{', '.join(variants_b)}), and the fingerprint covers the variants scored: "
                "re-run one with the other's --variants."
                if what == "data fingerprint" and variants_a != variants_b
                else subset_difference(a, b)
                if what == "data fingerprint"
                else ""
            )
            raise TableError(
                f"{a['benchmark']} {a['task']}: {model_a} ({run_a}) and {model_b} ({run_b}) "
                f"differ in {what}: {x!r} vs {y!r}.{why} One table compares models on the same "
                f"data by the same protocol; re-run one of them on the other's, or make one "
                "table per data set."
            )


Runs = dict[str, tuple[Mapping[str, Any], str]]
"""One model's runs of one benchmark: task -> (results document, where it came from)."""


RowKey = tuple[str, str, str]
"""What makes a row: the model id, its zero-shot head ("" for a trained head) and the exact
weights it resolved to (``model_resolved``: a Hub commit, a file, a package version)."""


def _collect(runs: Sequence[str]) -> dict[str, dict[RowKey, Runs]]:
    """benchmark -> row key -> that model's runs."""
    found: dict[str, dict[RowKey, Runs]] = {}
    for address in runs:
        for doc, where in _documents(address):
            key = (
                str(doc.get("model", "?")),
                model_head_line(doc) or "",
                str(doc.get("model_resolved") or ""),
            )
            tasks = found.setdefault(doc["benchmark"], {}).setdefault(key, {})
            if doc["task"] in tasks:
                earlier = tasks[doc["task"]][1]
                raise TableError(
                    f"{key[0]} has two {doc['benchmark']} {doc['task']} runs ({earlier} and "
                    f"{where}); give one of them."
                )
            tasks[doc["task"]] = (doc, where)
    return found


def _row_label(key: RowKey, tasks: Runs, keys: Sequence[RowKey]) -> str:
    """The model id; a zero-shot model's says so. When the table holds the same model id
    in another row, what sets this one apart follows: its text embeddings (other class
    names or templates) and its weights (e.g. another Hub commit)."""
    model, head, resolved = key
    same = [k for k in keys if k[0] == model]
    doc = next(iter(tasks.values()))[0]
    kind = vlm_tag(doc["vlm"]) if doc.get("vlm") else "zero-shot"
    if len(same) == 1:
        return f"{model} ({kind})" if head else model
    apart = []
    if head and len({k[1] for k in same}) > 1 and not doc.get("vlm"):
        apart.append(f"zero-shot {doc['zero_shot']['text_embeddings_sha256'][:12]}")
    elif head:
        apart.append(kind)
    if len({k[2] for k in same}) > 1:
        apart.append(resolved or "weights not recorded")
    return f"{model} ({', '.join(apart)})"


def _benchmark_table(name: str, models: Mapping[RowKey, Runs]) -> dict[str, Any]:
    spec = get_benchmark(name)
    first_of_task: dict[str, tuple[str, Mapping[str, Any], str]] = {}
    for (model, _, _), tasks in models.items():
        for task, (doc, where) in tasks.items():
            first_of_task.setdefault(task, (model, doc, where))
            _same_measurement(first_of_task[task], (model, doc, where))
    headlines = [h for h in spec.report if h.task in first_of_task]
    rows: list[dict[str, Any]] = []
    notes: dict[str, list[str]] = {}  # a footnote -> the models it is about
    for key, tasks in models.items():
        head = key[1]
        label = _row_label(key, tasks, list(models))
        said = [head] if head else []
        for task, (doc, _) in tasks.items():
            # how the run is not the published protocol on all of the data (a subset, other
            # classes, resized input): what a reader must know beside the number
            departures = (doc.get("protocol") or {}).get("departures") or []
            found = protocol_of(doc)[1] + [f"{task}: {d}" for d in departures]
            # a number that may mean nothing (e.g. a head that did not learn) says so
            found += [f"{WARNED} {task}: {w}" for w in doc.get("warnings") or []]
            said += [d for d in found if d not in said]
        for note in said:
            notes.setdefault(note, []).append(label)
        cells = headline_rows(spec, {t: d for t, (d, _) in tasks.items()}, headlines)
        rows.append(
            {
                "model": label,
                "model_resolved": key[2],
                "runs": {t: where for t, (_, where) in tasks.items()},
                "cells": [
                    {k: c[k] for k in ("key", "value", "ci95", "n", "which", "status", "warnings")}
                    for c in cells
                ],
            }
        )
    return {
        "benchmark": name,
        "title": spec.short_name,
        "columns": [
            {"task": h.task, "key": h.key, "label": h.label, "unit": h.unit, "reliance": h.reliance}
            for h in headlines
        ],
        "data": {t: _fingerprint(d) for t, (_, d, _) in first_of_task.items()},
        "protocol": {t: protocol_of(d)[0] for t, (_, d, _) in first_of_task.items()},
        "rows": rows,
        "notes": [{"models": named, "note": note} for note, named in notes.items()],
    }


def model_table(runs: Sequence[str]) -> dict[str, Any]:
    """The table document of ``runs`` (see the module docstring): per benchmark, its
    columns (headlines), one row per model with each headline's value, 95% interval and n
    (display units: % and points), and the footnotes naming the models they concern."""
    if not runs:
        raise TableError("Give at least one results or report folder.")
    found = _collect(runs)
    return {
        "kind": "bgbench-table",
        "schema_version": TABLE_SCHEMA,
        "runs": list(runs),
        "benchmarks": [_benchmark_table(name, models) for name, models in found.items()],
    }


def _value(cell: Mapping[str, Any], unit: str) -> str:
    return display_number(cell["value"], unit)


def _interval(cell: Mapping[str, Any], unit: str) -> str:
    if not cell["ci95"]:
        return ""
    lo, hi = cell["ci95"]
    return f"[{display_number(lo, unit)}, {display_number(hi, unit)}]"


def _header(column: Mapping[str, Any]) -> str:
    unit = {"%": " (%)", "pts": " (pts)"}.get(column["unit"], "")
    return f"{column['label']}{unit}"


def _sizes(bench: Mapping[str, Any]) -> str:
    """ "n = ...": one number when every model scored as many images in every column, else
    the numbers per column."""
    per_column = [
        (column["label"], sorted({r["cells"][i]["n"] for r in bench["rows"] if r["cells"][i]["n"]}))
        for i, column in enumerate(bench["columns"])
    ]
    every = {n for _, sizes in per_column for n in sizes}
    if len(every) == 1:
        return f"n = {every.pop()}"
    return "; ".join(f"{label}: n = {', '.join(map(str, s))}" for label, s in per_column if s)


def _per_task(values: Mapping[str, str], width: int | None = None) -> str:
    """One value, or "task value" per task when the tasks' values differ."""
    shown = {task: (v[:width] if width else v) or "—" for task, v in values.items()}
    if len(set(shown.values())) == 1:
        return next(iter(shown.values()))
    return ", ".join(f"{task} {v}" for task, v in shown.items())


def _caption(bench: Mapping[str, Any]) -> str:
    return (
        f"{bench['title']}: value and 95% interval per model (data "
        f"{_per_task(bench['data'], 12)}; protocol {_per_task(bench['protocol'])}; "
        f"{_sizes(bench)})."
    )


def table_markdown(doc: Mapping[str, Any]) -> str:
    """table.md: a Markdown table per benchmark, its caption and footnotes."""
    out = []
    for bench in doc["benchmarks"]:
        columns = bench["columns"]
        out += [f"## {bench['title']}", "", _caption(bench), ""]
        out.append("| Model | " + " | ".join(_header(c) for c in columns) + " |")
        out.append("|---|" + "|".join("---:" for _ in columns) + "|")
        for row in bench["rows"]:
            cells = [
                f"{_value(cell, c['unit'])} {_interval(cell, c['unit'])}".strip()
                + (f" ({cell['which']})" if cell["which"] else "")
                + (f" {WARNED}" if cell["warnings"] else "")
                for cell, c in zip(row["cells"], columns, strict=True)
            ]
            out.append(f"| {row['model']} | " + " | ".join(cells) + " |")
        out.append("")
        for note in bench["notes"]:
            out += [f"- {', '.join(note['models'])}: {note['note']}"]
        out += [""] if bench["notes"] else []
    return "\n".join(out)


def table_latex(doc: Mapping[str, Any]) -> str:
    """table.tex: a booktabs ``tabular`` per benchmark, the interval under each value in
    small type (needs ``\\usepackage{booktabs}``), then table.md's footnotes in small type:
    each model row carries the letters of the notes about it, so a caveat (a zero-shot head,
    a subset, a departure, a warning) is never lost with the file pasted into a paper."""
    out = []
    for bench in doc["benchmarks"]:
        marks = _note_marks(bench["notes"])
        out += [f"% {latex_text(_caption(bench))}", *_latex_tabular(bench, marks)]
        out += _latex_notes(bench, marks)
    return "\n".join(out)


DAGGER = r"$^\dagger$"
"""A number whose run warned, in LaTeX (table.md's ⚠)."""


def _note_marks(notes: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    """model -> the letters of the notes that name it (a, b, ... in note order)."""
    marks: dict[str, list[str]] = {}
    for i, note in enumerate(notes):
        for model in note["models"]:
            marks.setdefault(model, []).append(_letter(i))
    return marks


def _letter(i: int) -> str:
    return chr(ord("a") + i) if i < 26 else f"a{i}"


def _latex_tabular(bench: Mapping[str, Any], marks: Mapping[str, list[str]]) -> list[str]:
    columns = bench["columns"]
    out = [
        r"\begin{tabular}{l" + "r" * len(columns) + "}",
        r"\toprule",
        "Model & " + " & ".join(latex_text(_header(c)) for c in columns) + r" \\",
        r"\midrule",
    ]
    for row in bench["rows"]:
        cells = []
        for cell, c in zip(row["cells"], columns, strict=True):
            # a minus sign, not a hyphen; "--" for a missing value
            value = _value(cell, c["unit"]).replace("-", "$-$").replace("—", "--")
            ci = _interval(cell, c["unit"]).replace("-", "$-$")
            which = f" ({latex_text(cell['which'])})" if cell["which"] else ""
            small = f" {{\\scriptsize {ci}}}" if ci else ""
            warned = DAGGER if cell["warnings"] else ""
            cells.append(f"{value}{warned}{which}{small}")
        letters = marks.get(row["model"])
        mark = f"$^{{{','.join(letters)}}}$" if letters else ""
        out.append(f"{latex_text(row['model'])}{mark} & " + " & ".join(cells) + r" \\")
    return out + [r"\bottomrule", r"\end{tabular}"]


def _latex_notes(bench: Mapping[str, Any], marks: Mapping[str, list[str]]) -> list[str]:
    """The footnotes under the tabular, in small type (nothing when there are none)."""
    lines = []
    if any(c["warnings"] for r in bench["rows"] for c in r["cells"]):
        lines.append(DAGGER + r"\,the run warned that this number may mean nothing (see its note)")
    for i, note in enumerate(bench["notes"]):
        text = note["note"]  # table.md's warning sign is the dagger here (pdflatex lacks it)
        warned = text.startswith(WARNED)
        text = latex_text(text.removeprefix(WARNED).lstrip())
        dagger = DAGGER + " " if warned else ""
        lines.append(f"$^{{{_letter(i)}}}$\\,{dagger}{text}")
    if not lines:
        return [""]
    return [r"\par\smallskip", r"{\footnotesize", *(f"{x}\\par" for x in lines), "}", ""]


def _exact(value: float | None) -> str:
    # six decimals of a percentage: far below any interval, without float noise (…19999)
    return "" if value is None else f"{value:.6f}".rstrip("0").rstrip(".")


def table_csv(doc: Mapping[str, Any]) -> str:
    """table.csv: one line per model and headline (long format, display units)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for bench in doc["benchmarks"]:
        for row in bench["rows"]:
            for cell, c in zip(row["cells"], bench["columns"], strict=True):
                ci = cell["ci95"] or (None, None)
                writer.writerow(
                    [
                        row["model"],
                        row["model_resolved"],
                        bench["benchmark"],
                        c["task"],
                        c["key"] + cell["which"],
                        c["label"],
                        c["unit"],
                        _exact(cell["value"]),
                        _exact(ci[0]),
                        _exact(ci[1]),
                        "" if cell["n"] is None else cell["n"],
                        bench["protocol"][c["task"]],
                        bench["data"][c["task"]],
                        row["runs"].get(c["task"], ""),
                        "; ".join(cell["warnings"]),
                    ]
                )
    return buffer.getvalue()


def figure_name(bench: Mapping[str, Any]) -> str:
    return f"table_{bench['benchmark']}.png"


def write_table(doc: Mapping[str, Any], directory: str | Path) -> list[str]:
    """table.md, table.tex, table.csv, table.json and a figure per benchmark
    (:func:`figure_name`), written atomically into ``directory``."""
    from hf_bgbench.report.table_figure import draw_table

    texts = {"table.md": table_markdown, "table.tex": table_latex, "table.csv": table_csv}
    writers = {
        name: (lambda path, render=render: path.write_text(render(doc), encoding="utf-8"))
        for name, render in texts.items()
    }
    writers["table.json"] = lambda path: write_json(doc, path)
    for bench in doc["benchmarks"]:
        writers[figure_name(bench)] = lambda path, bench=bench: draw_table(bench, path)
    # a reused folder keeps no figure of a benchmark this table no longer holds
    earlier = [figure_name({"benchmark": name}) for name in list_benchmarks()]
    return write_run_folder(directory, writers, remove=earlier)
