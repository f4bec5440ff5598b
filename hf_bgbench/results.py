"""The one results format every task writes.

A results document is a JSON object with

* a header every task fills the same way: ``schema_version``, ``task``, ``benchmark``,
  ``model``, ``model_resolved``, ``data``, ``label_protocol``, ``assumptions`` (every guess
  the run made that the data or model did not state, e.g. the class order of a model with
  unnamed outputs), ``protocol`` (the recipe's
  name, settings and every named deviation from the paper), ``hf_bgbench_version``,
  ``created``, ``software`` (Python, torch, timm, transformers, ... versions:
  :func:`hf_bgbench.version.software_versions`) and what else the task records
  (preprocessing, seeds, settings);
* the task's own numbers under their documented keys (e.g. ``variants``, ``bg_gap`` for
  ``evaluate``; ``challenge_accuracy`` for ``challenge``);
* ``report``: what a reader sees, typed -- headline :class:`Score` values, :class:`Table`
  rows and :class:`Figure` data -- from which :mod:`hf_bgbench.render` draws the terminal
  table, results.md, the plots, the LaTeX row and the model-index, for any task alike.

``schema_version`` changes when a documented key changes meaning or shape.
"""

from __future__ import annotations

import json
import logging
import math
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from hf_bgbench.version import __version__, software_versions

SCHEMA_VERSION = "2.0"  # 2.0: `protocol` (name, settings, deviations); noise headline = class means
HEADER_KEYS = [
    "schema_version",
    "task",
    "model",
    "model_resolved",
    "benchmark",
]


# results key: {result key: why its 95% interval is null}, e.g. a class of one image
# (hf_bgbench.metrics.intervals.resampling_gap); every rendering prints the reasons
WITHHELD = "intervals_withheld"


@dataclass
class Score:
    """One number a reader looks for. ``unit``: ``"%"`` (a fraction shown as a percentage),
    ``"pts"`` (a difference of fractions shown in percentage points) or ``""`` (as is).
    ``config`` names the dataset config (variant) it was measured on, for the model-index."""

    key: str
    label: str
    value: float | None
    unit: str = "%"
    ci95: list[float] | None = None
    n: int | None = None
    config: str | None = None
    headline: bool = False  # shown first, with ``description``, in every rendering
    description: str = ""
    short: str = ""  # column name in the LaTeX row (default: the label)
    latex: bool = True  # part of the LaTeX row
    left_out: str = ""  # which images ``n`` leaves out and why, said beside it


@dataclass
class Table:
    """A table of already formatted cells (strings), with a title and an optional note."""

    key: str
    title: str
    columns: list[str]
    rows: list[list[str]]
    note: str = ""


@dataclass
class Series:
    """One named sequence of a figure: a line (``values`` at the figure's ``x``, optional
    95% ``intervals``) or a histogram panel (``values`` = the samples)."""

    label: str
    values: list[float | None]
    intervals: list[list[float] | None] | None = None


FIGURE_KINDS = ("bars", "scatter", "lines", "histograms")


@dataclass
class Figure:
    """A plot, drawn by :func:`hf_bgbench.render.plot_figure`. Values are in the figure's
    unit (e.g. percent). ``kind``:

    * ``"bars"`` (default): one bar per label (``values``), optional 95% interval per bar
      (lo, hi), n under each bar (``counts``), a dashed ``reference`` line (value, label)
      and an optional second panel ``histogram``;
    * ``"scatter"``: one labelled point per label at (``x[i]``, ``values[i]``), optional
      ``x_intervals`` / ``intervals`` as error bars, ``diagonal`` draws y = x;
    * ``"lines"``: each of ``series`` over the shared ``x`` (tick labels ``labels`` when
      given), its intervals as a band; ``reference`` as a dashed horizontal line;
    * ``"histograms"``: one small panel per ``series``: its samples in ``bins`` bins over
      ``xlim`` (the panel's mean marked), or, when ``x`` holds bin edges, its counts per bin
      (already binned: a results file keeps 20 counts instead of every sample).
    """

    file: str
    title: str
    labels: list[str]
    values: list[float | None]
    ylabel: str
    intervals: list[list[float] | None] | None = None
    reference: tuple[float, str] | None = None
    counts: list[int] | None = None  # n under each bar, when it differs between bars
    ylim: tuple[float, float] | None = (0.0, 105.0)  # None: matplotlib's choice
    # a second panel: {"values": [...], "xlabel", "ylabel", "title"} drawn as a histogram
    histogram: dict[str, Any] | None = None
    kind: str = "bars"
    x: list[float] | None = None  # scatter: x per point; lines: shared x; histograms: edges
    xlabel: str = ""
    xlim: tuple[float, float] | None = None
    x_intervals: list[list[float] | None] | None = None
    series: list[Series] | None = None
    diagonal: bool = False
    bins: int = 20

    def __post_init__(self) -> None:
        if self.kind not in FIGURE_KINDS:
            raise ValueError(
                f"Figure kind {self.kind!r} is unknown; use one of {', '.join(FIGURE_KINDS)}."
            )


def scaled_interval(bounds: Sequence[float] | None, scale: float) -> list[float] | None:
    """A 95% interval in a figure's unit (each bound times ``scale``, e.g. 100 for percent);
    a missing one (withheld: no error bar) stays None."""
    return [scale * v for v in bounds] if bounds else None


def percent_bars(entries: Mapping[str, Mapping[str, Any]], key: str, **figure: Any) -> Figure:
    """A bar per entry of ``entries`` (its name the label): its ``key``, a fraction, in
    percent, with its ``<key>_ci95`` interval as the error bar; ``figure``: the rest of the
    :class:`Figure` (file, title, ylabel, reference, ...)."""
    return Figure(
        labels=list(entries),
        values=[100 * entry[key] for entry in entries.values()],
        intervals=[scaled_interval(entry[f"{key}_ci95"], 100) for entry in entries.values()],
        **figure,
    )


@dataclass
class Report:
    scores: list[Score] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def extend(self, other: Report) -> None:
        self.scores += other.scores
        self.tables += other.tables
        self.figures += other.figures
        self.notes += other.notes

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def make_document(
    task: str, body: Mapping[str, Any], report: Report, *, head: Sequence[str] = ()
) -> dict[str, Any]:
    """The results document: header keys first, then ``head``, the rest, and ``report``."""
    doc = {"schema_version": SCHEMA_VERSION, "task": task, **body}
    doc.setdefault("hf_bgbench_version", __version__)
    doc.setdefault("created", datetime.now(timezone.utc).isoformat(timespec="seconds"))
    doc.setdefault("software", software_versions())
    doc["report"] = report.to_dict()
    order = [*HEADER_KEYS, *head]
    return {k: doc[k] for k in order if k in doc} | {k: v for k, v in doc.items() if k not in order}


def round_floats(value: Any, digits: int = 12) -> Any:
    """``value`` with every float rounded to ``digits`` decimals for JSON: 12 decimals keep
    every count ratio exact to far below one image in a million while dropping float noise
    (``0.33333333333333337`` -> ``0.333333333333``); NaN and infinities become null."""
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return None
        return round(value, digits)
    if isinstance(value, Mapping):
        return {k: round_floats(v, digits) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [round_floats(v, digits) for v in value]
    return value


MANIFEST_NAME = ".bgbench_written.json"
"""In each output *folder* of a run (e.g. ``predictions/``): the files the package wrote
there, so a later run into the same --output replaces or removes only those and never a file
of the user's."""

log = logging.getLogger(__name__)


def _listed(folder: Path) -> set[str]:
    """The files the package wrote into ``folder`` (its manifest; empty: none readable)."""
    try:
        listed = json.loads((folder / MANIFEST_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    files = listed.get("files") if isinstance(listed, dict) else None
    return {str(f) for f in files} if isinstance(files, list) else set()


def _files_in(folder: Path) -> list[str]:
    return sorted(
        str(f.relative_to(folder))
        for f in folder.rglob("*")
        if not f.is_dir() and f.name != MANIFEST_NAME
    )


def _clear(target: Path) -> list[str]:
    """Delete what the package wrote at ``target``: a file, or the files of a folder that its
    manifest lists; returns the files kept (in a folder, not listed: the user's)."""
    if not target.is_dir() or target.is_symlink():
        if target.exists() or target.is_symlink():
            target.unlink()
        return []
    ours = _listed(target)
    kept = []
    for rel in _files_in(target):
        if rel in ours:
            (target / rel).unlink()
        else:
            kept.append(f"{target.name}/{rel}")
    (target / MANIFEST_NAME).unlink(missing_ok=True)
    for sub in sorted(target.rglob("*"), key=lambda d: -len(d.parts)):
        if sub.is_dir() and not any(sub.iterdir()):
            sub.rmdir()
    if not any(target.iterdir()):
        target.rmdir()
    return kept


def write_run_folder(
    directory: str | Path,
    writers: Mapping[str, Callable[[Path], None]],
    remove: Sequence[str] = (),
) -> list[str]:
    """Write a run's files atomically into ``directory``.

    Each writer gets a path (file or folder name) inside a temporary folder beside
    ``directory``; when all have finished, each output replaces its namesake, so a reused
    folder never mixes files of two runs (e.g. stale ``predictions/*.parquet``) and an
    interrupted write leaves the previous results whole. Names in ``remove`` that this run
    did not produce (e.g. a full-matrix file of an earlier run) are deleted. Inside an output
    folder only the files the package wrote (its ``MANIFEST_NAME``) are ever deleted or
    replaced: a file of the user's there is kept, and said so. Returns the names written.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".bgbench-", dir=directory))
    kept: list[str] = []
    try:
        for name, write in writers.items():
            write(staging / name)
        written = []
        for name in writers:
            produced, target = staging / name, directory / name
            if not produced.exists():
                continue
            files: list[str] = []
            if produced.is_dir():
                files = _files_in(produced)
                manifest = {"files": files, "note": "written by bgbench"}
                (produced / MANIFEST_NAME).write_text(json.dumps(manifest, indent=1) + "\n")
            kept += _clear(target)
            if target.exists() and not produced.is_dir():  # a folder of the user's, kept
                log.warning("%s: a folder bgbench did not write; %s not written", target, name)
                continue
            if target.exists():  # a folder still holding the user's files: ours go in beside
                for rel in [*files, MANIFEST_NAME]:
                    if (target / rel).exists():
                        kept.remove(f"{name}/{rel}")
                        log.warning("replaced %s, which bgbench did not write", target / rel)
                    (target / rel).parent.mkdir(parents=True, exist_ok=True)
                    os.replace(produced / rel, target / rel)
            else:
                os.replace(produced, target)
            written.append(name)
        for name in remove:
            stale = directory / name.rstrip("/")
            if name.rstrip("/") not in written and (stale.exists() or stale.is_symlink()):
                kept += _clear(stale)
        if kept:
            log.warning(
                "%s: kept %d file(s) that bgbench did not write, in its output folders: %s",
                directory,
                len(kept),
                ", ".join(kept[:5]) + (", ..." if len(kept) > 5 else ""),
            )
        return written
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def write_json(doc: Mapping[str, Any], path: Path) -> None:
    path.write_text(json.dumps(round_floats(doc), indent=2) + "\n", encoding="utf-8")


def check_writable(directory: str | Path, flag: str = "--output") -> Path:
    """Create ``directory`` if needed and check that files can be written there, before any
    work starts (an error names ``flag``); see :func:`hf_bgbench.files.ensure_writable_dir`."""
    from hf_bgbench.files import ensure_writable_dir

    ensure_writable_dir(directory, flag)
    return Path(directory)


def head_line(record: Mapping[str, Any]) -> str:
    """How a zero-shot head was made, in one line, from its record (results' ``zero_shot``,
    :meth:`hf_bgbench.models.zero_shot.ZeroShotText.record`): class names and templates
    (counts and sources), the recipe's library and the text embeddings' sha256 -- what a
    reader needs to reproduce it."""
    return (
        f"zero-shot head: {record['num_classes']} class names "
        f"({record['classnames_source'].split(' (')[0]}) x {record['num_templates']} templates "
        f"({record['templates_source'].split(' (')[0]}), CLIP's recipe ({record['library']}); "
        f"text embeddings sha256 {record['text_embeddings_sha256'][:12]}"
    )


def model_head_line(doc: Mapping[str, Any]) -> str | None:
    """How the model's class scores were made, when it is not a trained head: a zero-shot
    model's :func:`head_line`, or a generative VLM's rule (:func:`vlm_line`); None for a
    model with a trained head (or one scored through a linear probe)."""
    z, v = doc.get("zero_shot"), doc.get("vlm")
    if isinstance(v, Mapping):
        return vlm_line(v)
    return head_line(z) if isinstance(z, Mapping) else None


def no_answer_reasons(count: Mapping[str, Any]) -> str:
    """The images of one variant the model gave no answer at all (a served model's error
    body, an empty reply), by reason (results' ``unanswered``), as a parenthesis; ``""``
    where there were none."""
    why = count.get("no_answer_from_the_model") or {}
    if not why:
        return ""
    return " (no answer from the model: " + "; ".join(f"{n} {k}" for k, n in why.items()) + ")"


def vlm_tag(record: Mapping[str, Any]) -> str:
    """A VLM's rule in a few words, for a table row: ``VLM likelihood/mean``."""
    detail = {
        "likelihood": f"/{record.get('score')}",
        "choice": f"/x{record.get('rotations')}",
        "choice-text": f"/x{record.get('rotations')}",
    }
    served = (
        f" @{record['backend']}" if record.get("backend", "transformers") != "transformers" else ""
    )
    return f"VLM {record['protocol']}{detail.get(record['protocol'], '')}{served}"


def vlm_line(record: Mapping[str, Any]) -> str:
    """A VLM's scoring rule in one line, from its record (results' ``vlm``)."""
    extra = {
        "likelihood": f", {record.get('score')} over the tokens",
        "choice": f", {record.get('rotations')} rotation(s)",
        "choice-text": f", {record.get('rotations')} rotation(s)",
    }.get(record["protocol"], "")
    backend = record.get("backend", "transformers")
    served = (
        f", asked through {backend} (served model {record.get('served_model')!r})"
        if backend != "transformers"
        else ""
    )
    return (
        f"generative VLM, {record['protocol']} rule ({record['rule']}{extra}) over "
        f"{len(record['choices'])} class strings ({record['classes_source']}){served}"
    )
