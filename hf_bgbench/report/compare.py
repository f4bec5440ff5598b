"""``bgbench compare A B``: is model A less reliant on backgrounds than model B, on the same
images? Per score, the difference A − B with a paired bootstrap interval over the images both
runs scored (the same resampled images for A and B), a verdict in words, a table and a plot.

A and B are two results folders of one task, or two report folders (every task both ran),
each local or published with ``bgbench publish-results`` (``hf://datasets/OWNER/NAME/runs/...``).
They must be runs over the same data (the recorded data fingerprint) with the same protocol;
anything else is refused, naming the difference.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from hf_bgbench.benchmarks import get_benchmark
from hf_bgbench.metrics.intervals import bootstrap_means, percentile_interval
from hf_bgbench.report.headlines import DISPLAY_SCALE, protocol_of
from hf_bgbench.report.paired import COMPARABLE_TASKS, CompareError, load_run, per_image_values
from hf_bgbench.report.results_dataset import fetch_run
from hf_bgbench.results import write_json, write_run_folder, zero_shot_head

COMPARE_SCHEMA = "compare-1.0"
RESAMPLES = 2000


def check_same(a: Mapping[str, Any], b: Mapping[str, Any]) -> None:
    """Refuse two results documents that are not the same measurement of the same data."""
    checks = [
        ("task", a.get("task"), b.get("task")),
        ("benchmark", a.get("benchmark"), b.get("benchmark")),
        (
            "data fingerprint",
            (a.get("data") or {}).get("fingerprint"),
            (b.get("data") or {}).get("fingerprint"),
        ),
        ("protocol", protocol_of(a)[0], protocol_of(b)[0]),
    ]
    for what, x, y in checks:
        if x != y:
            raise CompareError(
                f"The two runs differ in {what}: {x!r} (A) vs {y!r} (B). A paired comparison "
                f"needs the same {what}; re-run one of them on the other's."
            )


def _score_info(doc: Mapping[str, Any], key: str) -> tuple[str, str, int, bool]:
    """(label, unit, reliance, headline?) of ``key``: the spec's headline when it is one
    (a key under a ``worst`` headline's prefix takes its direction), else the document's own
    score, else the key as is."""
    spec = get_benchmark(doc["benchmark"])
    labels = {s["key"]: s for s in doc.get("report", {}).get("scores", [])}
    for h in spec.report:
        if h.key == key and not h.worst:
            return h.label, h.unit, h.reliance, True
    for h in spec.report:
        if h.worst and key.startswith(h.key) and key in labels:
            return labels[key]["label"], h.unit, h.reliance, False
    if key == "irfs":  # RFS has no per-image form; its instance-wise form is compared
        return "mean iRFS (RFS per image)", "", -1, True
    if key in labels:
        return (
            labels[key].get("short") or labels[key]["label"],
            labels[key].get("unit", ""),
            0,
            False,
        )
    return key, "", 0, False


def compare_results(
    a: Mapping[str, Any], folder_a: Path, b: Mapping[str, Any], folder_b: Path, seed: int = 0
) -> list[dict[str, Any]]:
    """One row per score both runs have per image: A, B and A − B on the shared images,
    with the paired bootstrap interval of the difference and a verdict."""
    check_same(a, b)
    values_a, values_b = per_image_values(a, folder_a), per_image_values(b, folder_b)
    rows = []
    for key in [k for k in values_a if k in values_b]:
        va, vb = values_a[key].dropna(), values_b[key].dropna()
        shared = va.index.intersection(vb.index).sort_values()
        if not len(shared):
            continue
        label, unit, reliance, headline = _score_info(a, key)
        scale = DISPLAY_SCALE.get(unit, 1.0)
        xa, xb = va[shared].to_numpy(float), vb[shared].to_numpy(float)
        (means,) = bootstrap_means(xa - xb, n_resamples=RESAMPLES, seed=seed)
        lo, hi = percentile_interval(means)
        row = {
            "benchmark": a["benchmark"],
            "task": a["task"],
            "key": key,
            "label": label,
            "unit": unit,
            "reliance": reliance,
            "headline": headline,
            "a": scale * float(xa.mean()),
            "b": scale * float(xb.mean()),
            "difference": scale * float(np.mean(xa - xb)),
            "ci95": [scale * lo, scale * hi],
            "n": int(len(shared)),
            "n_only_a": int(len(va.index.difference(shared))),
            "n_only_b": int(len(vb.index.difference(shared))),
        }
        row["verdict"] = verdict(row)
        rows.append(row)
    return rows


def verdict(row: Mapping[str, Any]) -> str:
    """The comparison in words, e.g. "A relies on backgrounds less than B: BG-GAP −3.1 pts
    [−5.0, −1.2]"."""
    unit = {"%": " pts", "pts": " pts"}.get(row["unit"], "")
    digits = 3 if row["unit"] == "" else 1
    lo, hi = row["ci95"]
    said = (
        f"{row['label']} {row['difference']:+.{digits}f}{unit} "
        f"[{lo:+.{digits}f}, {hi:+.{digits}f}], n={row['n']}"
    )
    if lo <= 0 <= hi:
        return f"no clear difference: {said} (the interval contains 0)"
    if row["reliance"] == 0:
        return f"A scores {'higher' if row['difference'] > 0 else 'lower'} than B: {said}"
    less = (row["difference"] < 0) == (row["reliance"] > 0)
    return f"A relies on backgrounds {'less' if less else 'more'} than B: {said}"


def compare_runs(a: str | Path, b: str | Path, seed: int = 0) -> dict[str, Any]:
    """The comparison document of two results folders or two report folders."""
    kind_a, doc_a, folder_a = load_run(fetch_run(str(a)))
    kind_b, doc_b, folder_b = load_run(fetch_run(str(b)))
    if kind_a != kind_b:
        raise CompareError(
            f"A is a {kind_a} folder and B a {kind_b} folder; compare two reports or two "
            "results folders of the same task."
        )
    pairs = []
    if kind_a == "results":
        pairs.append((doc_a, folder_a, doc_b, folder_b))
    else:
        runs_b = {(bm["name"], t): e for bm in doc_b["benchmarks"] for t, e in bm["tasks"].items()}
        for bm in doc_a["benchmarks"]:
            for task, entry in bm["tasks"].items():
                other = runs_b.get((bm["name"], task))
                if entry.get("results") and other and other.get("results"):
                    pairs.append(
                        (
                            entry["results"],
                            folder_a / entry["folder"],
                            other["results"],
                            folder_b / other["folder"],
                        )
                    )
        if not pairs:
            raise CompareError("The two reports share no task that both ran.")
    rows = []
    for da, fa, db, fb in pairs:
        if da["task"] not in COMPARABLE_TASKS:
            continue
        rows += compare_results(da, fa, db, fb, seed=seed)
    # a zero-shot model's head (class names, templates), which its numbers depend on
    heads_a = list(dict.fromkeys(h for p in pairs if (h := zero_shot_head(p[0]))))
    heads_b = list(dict.fromkeys(h for p in pairs if (h := zero_shot_head(p[2]))))
    return {
        "schema_version": COMPARE_SCHEMA,
        "kind": "bgbench-compare",
        "a": {"folder": str(a), "model": doc_a.get("model"), "zero_shot": heads_a},
        "b": {"folder": str(b), "model": doc_b.get("model"), "zero_shot": heads_b},
        "seed": seed,
        "bootstrap_resamples": RESAMPLES,
        "rows": rows,
    }


def _table(rows: list[Mapping[str, Any]]) -> list[str]:
    lines = [
        "| Benchmark | Task | Score | A | B | A − B [95% CI] | n | Verdict |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        d = 3 if r["unit"] == "" else 1
        lo, hi = r["ci95"]
        lines.append(
            f"| {r['benchmark']} | {r['task']} | {r['label']} | {r['a']:.{d}f} | "
            f"{r['b']:.{d}f} | {r['difference']:+.{d}f} [{lo:+.{d}f}, {hi:+.{d}f}] | {r['n']} "
            f"| {r['verdict'].split(':')[0]} |"
        )
    return lines


def compare_markdown(doc: Mapping[str, Any]) -> str:
    """compare.md: the verdicts on the report's headlines, then every score."""
    a, b = doc["a"]["model"], doc["b"]["model"]
    headlines = [r for r in doc["rows"] if r.get("headline")]
    lines = [
        f"## {a} (A) vs {b} (B)",
        "",
        "Paired over the images both runs scored; 95% bootstrap intervals "
        f"({doc['bootstrap_resamples']} resamples, seed {doc['seed']}). A difference counts "
        "only when its interval excludes 0.",
        "",
    ]
    for side in ("a", "b"):
        for head in doc[side].get("zero_shot") or ():
            lines += [f"{side.upper()} ({doc[side]['model']}) is scored through a {head}.", ""]
    if headlines:
        lines += [f"- {r['benchmark']} · {r['verdict']}" for r in headlines] + [""]
        lines += ["### Headlines", "", *_table(headlines), ""]
    lines += ["### Every score", "", *_table(doc["rows"]), "", "![A − B](compare.png)", ""]
    return "\n".join(lines)


def draw_compare(doc: Mapping[str, Any], path: Path) -> None:
    """A forest plot: each score's A − B with its interval, 0 marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in doc["rows"] if r.get("headline")] or doc["rows"]
    n = max(len(rows), 1)
    fig, axes = plt.subplots(n, 1, figsize=(7.5, 0.55 * n + 1.0), squeeze=False)
    for ax, r in zip(axes[:, 0], rows, strict=False):
        lo, hi = r["ci95"]
        colour = "0.4" if lo <= 0 <= hi else "tab:blue"
        ax.errorbar(
            [r["difference"]],
            [0],
            xerr=[[r["difference"] - lo], [hi - r["difference"]]],
            fmt="o",
            color=colour,
            capsize=3,
        )
        ax.axvline(0, color="0.6", lw=0.8, ls="--")
        unit = {"%": " pts", "pts": " pts"}.get(r["unit"], "")
        ax.set_yticks([0])
        ax.set_yticklabels([f"{r['benchmark']} · {r['label']}{unit}"], fontsize=8)
        ax.tick_params(axis="x", labelsize=7)
        span = max(abs(lo), abs(hi), 1e-3) * 1.15
        ax.set_xlim(-span, span)
        for side in ("top", "right", "left"):
            ax.spines[side].set_visible(False)
    fig.suptitle(
        f"A − B: {doc['a']['model']} − {doc['b']['model']} (95% paired CI)",
        fontsize=10,
        x=0.02,
        ha="left",
    )
    fig.tight_layout(rect=(0, 0, 1, 0.96), h_pad=0.3)
    fig.savefig(path, dpi=130)
    plt.close(fig)


def write_compare(doc: Mapping[str, Any], output: str | Path) -> None:
    write_run_folder(
        output,
        {
            "compare.json": lambda p: write_json(doc, p),
            "compare.md": lambda p: p.write_text(compare_markdown(doc), encoding="utf-8"),
            "compare.png": lambda p: draw_compare(doc, p),
        },
    )
