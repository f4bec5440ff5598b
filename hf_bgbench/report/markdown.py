"""``report.md``: the report card as a model-card section -- one headline table (value,
95% interval, n, the published models' range, the protocol), the profile figure, what was
not run and why, every deviation from the published protocols, the reference rows with
their sources and model tags, and the files."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hf_bgbench.results import model_head_line
from hf_bgbench.version import software_text

WARNED = "⚠"
"""Beside a value whose run recorded a warning (e.g. a head that did not learn): see below."""
ARROWS = {1: "↓", -1: "↑", 0: ""}
"""Beside a measure: ↓ lower = less background reliance, ↑ higher = less."""


def display_number(value: float | None, unit: str) -> str:
    """A value already in display units (% and points x 100): one decimal, three for a
    unitless score; "—" when missing."""
    if value is None:
        return "—"
    return f"{value:.3f}" if unit == "" else f"{value:.1f}"


def value_text(row: Mapping[str, Any]) -> str:
    """``12.3 [9.0, 15.8]`` (display units), or why there is no value."""
    if row["value"] is None:
        return row["status"]
    ci = row["ci95"]
    text = display_number(row["value"], row["unit"])
    if ci is not None:
        text += f" [{display_number(ci[0], row['unit'])}, {display_number(ci[1], row['unit'])}]"
    if row.get("sample"):  # not the full set the published numbers beside it are of
        text += f" (a sample: {row['sample']})"
    return f"{text} {WARNED}" if row.get("warnings") else text


def published_text(row: Mapping[str, Any]) -> str:
    """The published models' range for this number (their count), or "—"."""
    values = [p["value"] for p in row["published"]]
    if not values:
        return "—"
    unit = row["unit"]
    if len(values) == 1:
        return f"{display_number(values[0], unit)} ({row['published'][0]['model']})"
    low, high = display_number(min(values), unit), display_number(max(values), unit)
    return f"{low} – {high} ({len(values)} models)"


def measure_text(row: Mapping[str, Any]) -> str:
    unit = {"%": " (%)", "pts": " (pts)"}.get(row["unit"], "")
    which = f": {row['which']}" if row["which"] else ""
    arrow = ARROWS[row["reliance"]]
    return f"{row['label']}{which}{unit}{' ' + arrow if arrow else ''}"


def shown_rows(rows: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The headline rows the table and the figure show: not those of a benchmark that was
    not run (its own section says why and how to fetch its data)."""
    return [row for row in rows if row.get("status") != "not run"]


def report_markdown(report: Mapping[str, Any]) -> str:
    """The report as Markdown (a section to paste into a model card)."""
    lines = [
        f"## Background reliance (hf_bgbench {report['hf_bgbench_version']})",
        "",
        f"Model `{report['model']}`"
        + (f" ({report['model_resolved']})" if report.get("model_resolved") else "")
        + f", {report['created'][:10]}, seed {report['seed']}. "
        "↓: lower means less reliance on the background; ↑: higher means less. "
        "Intervals are 95%; n is the number of images (foregrounds for the challenge)."
        + (
            f" Software: {software_text(report.get('software'))}." if report.get("software") else ""
        ),
        "",
        "| Benchmark | Measure | Value [95% CI] | n | Published models | Protocol |",
        "|---|---|---|---|---|---|",
    ]
    for row in shown_rows(report["headlines"]):
        lines.append(
            f"| {row['benchmark_title']} | {measure_text(row)} | {value_text(row)} | "
            f"{row['n'] if row['n'] is not None else '—'} | {published_text(row)} | "
            f"{row['protocol'] or '—'} |"
        )
    lines += ["", "![Background-reliance profile](reliance_profile.png)", ""]
    lines += _heads(report) + _warnings(report) + _not_run(report) + _deviations(report)
    lines += _references(report) + _hub_results(report) + _files(report)
    return "\n".join(lines).rstrip() + "\n"


def _hub_results(report: Mapping[str, Any]) -> list[str]:
    """What went to the Hub's evaluation-results files and, for what did not, why."""
    written, withheld = report.get("eval_results", []), report.get("eval_results_withheld", [])
    if not written and not withheld:
        return []
    lines = [
        "### Hub evaluation results",
        "",
        "Leaderboard entries (`.eval_results/`) hold only higher-is-better numbers (the Hub "
        "ranks every task high first; gaps and drops are in each entry's notes), scored on the "
        "published Hub dataset under its published protocol.",
        "",
    ]
    lines += [f"- written: `{name}`" for name in written]
    for w in withheld:
        what = f"{w['benchmark']} {w['task']}"
        lines.append(f"- not written for {what}: {w['reason']}. {w['instead']}")
    return [*lines, ""]


def _heads(report: Mapping[str, Any]) -> list[str]:
    """A zero-shot model's head per benchmark (its class names and templates, which the
    numbers depend on); nothing for a model with a trained head."""
    seen: dict[str, list[str]] = {}
    for bench in report["benchmarks"]:
        for entry in bench["tasks"].values():
            head = model_head_line(entry.get("results") or {})
            if head and bench["title"] not in seen.get(head, []):
                seen.setdefault(head, []).append(bench["title"])
    if not seen:
        return []
    lines = ["### Zero-shot head", ""]
    lines += [f"- {', '.join(titles)}: {head}." for head, titles in seen.items()]
    return [*lines, ""]


def _warnings(report: Mapping[str, Any]) -> list[str]:
    seen: dict[str, list[str]] = {}
    for row in report["headlines"]:
        for text in row.get("warnings", []):
            seen.setdefault(text, []).append(f"{row['benchmark_title']} {row['label']}")
    if not seen:
        return []
    lines = [f"### {WARNED} Numbers that may mean nothing", ""]
    lines += [f"- {', '.join(names)}: {text}" for text, names in seen.items()]
    return [*lines, ""]


def _not_run(report: Mapping[str, Any]) -> list[str]:
    out = []
    for bench in report["benchmarks"]:
        if bench["status"] == "not run":
            # "bgbench download rival10 (then re-run; ...)": only the command in code type
            command, _, after = bench["command"].partition(" (")
            out.append(
                f"- **{bench['title']}**: not run -- {bench['reason']} "
                f"Fetch it: `{command}`" + (f" ({after}" if after else "") + "."
            )
        for task, entry in bench["tasks"].items():
            if entry["status"] == "failed":
                out.append(f"- **{bench['title']} · {task}**: failed -- {entry['reason']}")
    return ["### Not run", "", *out, ""] if out else []


def _deviations(report: Mapping[str, Any]) -> list[str]:
    out = []
    for bench in report["benchmarks"]:
        for task, entry in bench["tasks"].items():
            for text in entry.get("deviations", []):
                out.append(f"- {bench['title']} · {task} ({entry.get('protocol', '')}): {text}")
    if not out:
        return []
    return ["### Deviations from the published protocols", "", *out, ""]


def _references(report: Mapping[str, Any]) -> list[str]:
    refs = report["references"]
    if not refs:
        return []
    lines = [
        "### Published reference rows",
        "",
        "| Benchmark | Model | Weights (timm tag) | Task | Scores | Source |",
        "|---|---|---|---|---|---|",
    ]
    labels = {(h["benchmark"], h["key"]): h["label"] for h in report["headlines"]}
    titles = {h["benchmark"]: h["benchmark_title"] for h in report["headlines"]}
    for r in refs:
        scores = ", ".join(
            f"{labels.get((r['benchmark'], k), k)} {v:g}" for k, v in r["scores"].items()
        )
        tag = f"`{r['model_tag']}`" if r["model_tag"] else (r["notes"] or "—")
        lines.append(
            f"| {titles.get(r['benchmark'], r['benchmark'])} | {r['model']} | {tag} | {r['task']} "
            f"| {scores} | {r['source']} |"
        )
    return [*lines, ""]


def _files(report: Mapping[str, Any]) -> list[str]:
    lines = ["### Files", ""]
    for bench in report["benchmarks"]:
        for task, entry in bench["tasks"].items():
            if entry.get("folder"):
                lines.append(f"- `{entry['folder']}/`: the {task} task's results and plots")
    lines += [f"- `{name}`: Hub evaluation results" for name in report.get("eval_results", [])]
    lines.append("- `report.json`: everything above, with each task's results document")
    return [*lines, ""]
