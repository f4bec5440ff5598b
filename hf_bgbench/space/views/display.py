"""How the Space shows a finished run: the document a visitor downloads and reads (no server
path in it), tables that fit a page, the plots at their own size, the files to download.

Pure functions over a results document and its run folder, no Gradio:

* :func:`public_document` -- the results document with every server path replaced (the
  dataset's folder by its allow-list name; any other absolute path, cache folders included,
  by a neutral word), written as the results file the visitor downloads
  (:func:`write_results_download`);
* :func:`narrow_tables` -- a table too wide for a page (a column per class: ImageNet-E's 63)
  shown as rows -- the classes that drop most first, a few of them -- with the full table
  written as a CSV file to download;
* :func:`figures_html` -- the run's plots (the report's figures first, then any other image
  the task wrote, such as a saliency gallery) as images at their own size, side by side
  where they fit;
* :func:`run_files` -- what the visitor can download from a run;
* :func:`split_report` -- the report's LaTeX row and model-index block apart from the rest.
"""

from __future__ import annotations

import base64
import copy
import csv
import json
import math
import re
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

SERVER_FILE = "(a file on the server)"
WIDE = 12  # a table with more columns than this is shown as rows
TOP_ROWS = 10  # rows of a turned table shown on the page (all of them in the CSV)
_ABS_PATH = re.compile(r"(?<![\w/:.])(?:/[\w.@+~-]+){2,}/?")


def _clean(value: Any, hide: Sequence[tuple[str, str]]) -> Any:
    if isinstance(value, str):
        for secret, shown in hide:
            value = value.replace(secret, shown)
        return _ABS_PATH.sub(SERVER_FILE, value)
    if isinstance(value, Mapping):
        return {k: _clean(v, hide) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v, hide) for v in value]
    return value


def _pairs(hide: Mapping[str, str]) -> list[tuple[str, str]]:
    return sorted(((k, v) for k, v in hide.items() if k), key=lambda kv: -len(kv[0]))


def public_document(doc: Mapping[str, Any], hide: Mapping[str, str]) -> dict[str, Any]:
    """``doc`` with no server path left: the strings of ``hide`` (a dataset's folder -> its
    allow-list name) replaced, then any other absolute path (cache and output folders)."""
    return _clean(copy.deepcopy(dict(doc)), _pairs(hide))


def public_text(text: str, hide: Mapping[str, str]) -> str:
    """``text`` (Markdown, YAML) with no server path left, as :func:`public_document`."""
    return _clean(text, _pairs(hide))


def write_public_document(doc: Mapping[str, Any], path: Path) -> Path:
    """``doc`` written as the command line writes a results document (its floats rounded as
    :func:`hf_bgbench.results.write_json` rounds them), so the two files hold equal numbers."""
    from hf_bgbench.results import round_floats

    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(round_floats(doc), indent=2, sort_keys=False, default=str) + "\n"
    path.write_text(text, encoding="utf-8")
    return path


def write_results_download(doc: Mapping[str, Any], folder: Path, task: str) -> Path:
    """The results file a visitor downloads from a run of ``task`` in ``folder``:
    ``download/<the task's file stem>.json``, the name the command line gives it
    (:func:`write_public_document`)."""
    from hf_bgbench.tasks import get_task

    return write_public_document(doc, folder / "download" / f"{get_task(task).stem}.json")


def _number(cell: Any) -> float:
    try:
        return float(str(cell).split()[0])
    except (ValueError, IndexError):
        return math.nan


def narrow_tables(
    doc: Mapping[str, Any],
    folder: Path,
    *,
    reference: str | None = None,
    wide: int = WIDE,
    top: int = TOP_ROWS,
) -> tuple[dict[str, Any], list[Path]]:
    """(``doc`` with its wide tables turned, the CSV files of their full versions).

    A table with more than ``wide`` columns whose rows are variants (first column
    "variant") and whose columns are classes is turned: a row per class, a column per
    variant, and -- when ``reference`` is one of the variants -- a "drop" column (the
    reference minus the mean of the others, in points); the ``top`` rows that drop most are
    kept on the page and the full turned table goes to ``<key>.csv``. Any other wide table
    is written to a CSV as it is and left on the page."""
    doc = copy.deepcopy(dict(doc))
    files: list[Path] = []
    for table in doc.get("report", {}).get("tables", []):
        columns, rows = list(table.get("columns") or []), list(table.get("rows") or [])
        if len(columns) <= wide:
            continue
        path = folder / f"{table.get('key') or 'table'}.csv"
        files.append(path)
        if not columns or columns[0] != "variant" or not rows:
            _write_csv(path, columns, rows)
            continue
        head, turned, shown = _turned(columns, rows, reference, top)
        _write_csv(path, head, turned)
        title = table.get("title", "").rstrip(":")
        table["columns"], table["rows"] = head, turned[:top]
        table["title"] = f"{title}: {shown} (every class: {path.name}, below)."
    return doc, files


def _turned(
    columns: list[Any], rows: list[Any], reference: str | None, top: int
) -> tuple[list[str], list[list[Any]], str]:
    """A table of variant rows and class columns turned: (its header, a row per class --
    with a "drop" column, the classes that drop most first, when ``reference`` is one of
    the variants --, which rows the page shows)."""
    variants = [str(r[0]) for r in rows]
    classes = columns[1:]
    turned = [[c, *(row[i + 1] for row in rows)] for i, c in enumerate(classes)]
    head = ["class", *variants]
    if reference not in variants or len(variants) < 2:
        return head, turned, f"the first {min(top, len(turned))} of {len(turned)} classes"
    ref = variants.index(reference)

    def drop(row: list[Any]) -> float:
        others = [_number(v) for i, v in enumerate(row[1:]) if i != ref]
        others = [v for v in others if not math.isnan(v)]
        base = _number(row[1 + ref])
        return base - sum(others) / len(others) if others else math.nan

    turned = [[*r, "—" if math.isnan(drop(r)) else f"{drop(r):.1f}"] for r in turned]
    turned.sort(key=lambda r: -_number(r[-1]) if not math.isnan(_number(r[-1])) else 1e9)
    head.append("drop (points)")
    return head, turned, f"the {min(top, len(turned))} of {len(turned)} classes that drop most"


def _write_csv(path: Path, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(columns)
        writer.writerows(rows)


def run_figures(doc: Mapping[str, Any], folder: Path) -> list[Path]:
    """The run's images: the report's figures in report order, then every other image the
    task wrote into ``folder`` (a gallery the report cites, say), by name."""
    named = [folder / f["file"] for f in doc.get("report", {}).get("figures", [])]
    figures = [p for p in named if p.is_file()]
    others = sorted(p for p in folder.glob("*.png") if p not in figures)
    return figures + others


# below this width a plot drawn for a desktop is no longer read (a 975 px forest plot shrunk
# to a phone's 290 px had labels 3 px high): narrower screens scroll it sideways instead
READABLE_PLOT_PX = 560


def figures_html(paths: Sequence[Path], max_width: int = 1200) -> str:
    """The images as HTML at their own size (never stretched into a fixed box: no empty
    bands), side by side where the page is wide enough, each captioned by its file name;
    on a narrow screen none shrinks below :data:`READABLE_PLOT_PX` (the row scrolls)."""
    from PIL import Image

    items = []
    for path in paths:
        with Image.open(path) as image:
            width, height = image.size
        shown = min(width, max_width)
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        items.append(
            f'<figure style="margin:0 12px 12px 0;flex:0 1 auto;max-width:100%">'
            f'<img src="data:image/png;base64,{data}" alt="{escape(path.name)}" '
            f'width="{shown}" height="{round(height * shown / width)}" '
            f'style="max-width:100%;min-width:{min(shown, READABLE_PLOT_PX)}px;height:auto;'
            f'display:block">'
            f'<figcaption style="font-size:0.85em">{escape(path.name)}</figcaption></figure>'
        )
    if not items:
        return ""
    return (
        '<div class="bgbench-plots" style="display:flex;flex-wrap:wrap;align-items:flex-start;'
        'overflow-x:auto;max-width:100%">' + "".join(items) + "</div>"
    )


def run_files(folder: Path, results: Path, extra: Sequence[Path] = ()) -> list[str]:
    """What a visitor can download: the results file, the full tables, the images."""
    files = [results, *extra, *sorted(folder.glob("*.png"))]
    seen: list[str] = []
    for f in files:
        if f.is_file() and str(f) not in seen:
            seen.append(str(f))
    return seen


REPORT_EXTRAS = ("LaTeX row (columns:", "Model card (`model-index`")


def split_report(markdown: str) -> tuple[str, str]:
    """(the report a visitor reads, its paste-ready extras): the LaTeX row and the
    model-index block of :func:`hf_bgbench.render.render_markdown` moved out of the way, so
    the notes after them follow the tables. ``(markdown, "")`` when it has no extras."""
    starts = [markdown.find(marker) for marker in REPORT_EXTRAS if marker in markdown]
    if not starts:
        return markdown, ""
    start = min(starts)
    fence = markdown.find("```yaml", start)
    end = markdown.find("```\n", fence + len("```yaml")) if fence >= 0 else -1
    end = len(markdown) if end < 0 else end + len("```\n")
    return markdown[:start] + markdown[end:].lstrip("\n"), markdown[start:end].strip()
