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
from hf_bgbench.metrics.intervals import bootstrap_intervals
from hf_bgbench.report.headlines import DISPLAY_SCALE, protocol_of
from hf_bgbench.report.paired import (
    CompareError,
    comparable_tasks,
    load_run,
    per_image_values,
    scored_variants,
    subset_difference,
)
from hf_bgbench.report.results_dataset import fetch_run
from hf_bgbench.results import model_head_line, write_json, write_run_folder
from hf_bgbench.tasks import get_task

COMPARE_SCHEMA = "compare-1.0"
RESAMPLES = 2000


def _data_of_variants(doc: Mapping[str, Any], variants: list[str]) -> str | None:
    """The data fingerprint the source of ``doc`` has today over ``variants`` (what
    ``data.fingerprint`` records: it covers the variants a run scored); None when the
    source cannot be read here (moved, or on the Hub while offline)."""
    from hf_bgbench.data.sources import resolve_source

    try:
        reader = resolve_source(doc["data"]["location"], get_benchmark(doc["benchmark"]))
        for variant in variants:
            reader.fingerprint(reader.load(variant), variant)
        return reader.data_fingerprint()
    except Exception:  # noqa: BLE001 -- any failure only means "cannot verify"
        return None


def _variant_difference(a: Mapping[str, Any], b: Mapping[str, Any]) -> str | None:
    """Why two evaluate runs of one data source have different data fingerprints when
    they scored different variants (``--variants``): a note that the shared variants are
    compared, when the source still gives both recorded fingerprints (so it is unchanged
    and the shared variants are the same images); else a :class:`CompareError` saying
    which variants differ and how to compare them. None when the variants are the same."""
    va, vb = scored_variants(a), scored_variants(b)
    data_a, data_b = a.get("data") or {}, b.get("data") or {}
    same_source = (data_a.get("kind"), data_a.get("location")) == (
        data_b.get("kind"),
        data_b.get("location"),
    )
    if not va or set(va) == set(vb) or not same_source:
        return None
    shared = [v for v in va if v in vb]
    only = f"A alone scored {', '.join(v for v in va if v not in vb) or 'none'}; B alone " + (
        ", ".join(v for v in vb if v not in va) or "none"
    )
    if not shared:
        raise CompareError(
            f"The two runs scored different variants of {data_a.get('location')} ({only}) and "
            "share none: there is nothing to pair. Re-run one of them with the other's "
            "--variants."
        )
    now = (_data_of_variants(a, va), _data_of_variants(b, vb))
    if now == (data_a.get("fingerprint"), data_b.get("fingerprint")):
        return (
            f"The runs scored different variants of the same data ({only}); compared: the "
            f"shared variants {', '.join(shared)} and the scores built on them alone."
        )
    # unreadable here is not changed: say which (it said "no longer gives" for both)
    why = (
        "cannot be read here to check them (moved, or a Hub dataset while offline)"
        if None in now
        else "now gives other fingerprints than the runs recorded (it changed since)"
    )
    where = f" at {data_a['location']}" if data_a.get("location") else " (no location recorded)"
    raise CompareError(
        f"The two runs scored different variants ({only}) and the data{where} {why}, so the "
        f"shared variants cannot be shown to be the same images. Re-run both with --variants "
        f"{' '.join(shared)} and compare those."
    )


def check_same(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    """Refuse two results documents that are not the same measurement of the same data;
    the notes on what is compared (e.g. only the variants both evaluate runs scored)."""
    if a.get("task") != b.get("task"):  # first: else a noise run "scored no variant"
        raise CompareError(
            f"The two runs are of different tasks: {a.get('task')!r} (A) vs {b.get('task')!r} "
            "(B). A paired comparison needs two runs of the same task command; give two "
            f"{a.get('task')} folders (or two `bgbench report` folders)."
        )
    notes = [note] if (note := _variant_difference(a, b)) else []
    checks = [
        ("task", a.get("task"), b.get("task")),
        ("benchmark", a.get("benchmark"), b.get("benchmark")),
        (
            "data fingerprint",
            None if notes else (a.get("data") or {}).get("fingerprint"),
            None if notes else (b.get("data") or {}).get("fingerprint"),
        ),
        ("protocol", protocol_of(a)[0], protocol_of(b)[0]),
    ]
    for what, x, y in checks:
        if x != y:
            subset = subset_difference(a, b) if what == "data fingerprint" else ""
            raise CompareError(
                f"The two runs differ in {what}: {x!r} (A) vs {y!r} (B).{subset} A paired "
                f"comparison needs the same {what}; re-run one of them on the other's."
            )
    return notes


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
    for name, label, unit, reliance in _paired_scores(doc):
        if name == key:  # e.g. a score with no per-image form: its per-image form compared
            return label, unit, reliance, True
    if key in labels:
        return (
            labels[key].get("short") or labels[key]["label"],
            labels[key].get("unit", ""),
            0,
            False,
        )
    return key, "", 0, False


def _paired_scores(doc: Mapping[str, Any]) -> tuple[tuple[str, str, str, int], ...]:
    try:
        return get_task(str(doc.get("task"))).paired_scores
    except ValueError:  # a task not registered here: only the document's scores
        return ()


def compare_results(
    a: Mapping[str, Any],
    folder_a: Path,
    b: Mapping[str, Any],
    folder_b: Path,
    seed: int = 0,
    notes: list[str] | None = None,
) -> list[dict[str, Any]]:
    """One row per score both runs have per image: A, B and A − B on the shared images,
    with the paired bootstrap interval of the difference (None, with the reason, where
    resampling cannot vary it) and a verdict. What limits the comparison is added to
    ``notes``."""
    said = check_same(a, b)
    if notes is not None:
        notes += said
    values_a, values_b = per_image_values(a, folder_a), per_image_values(b, folder_b)
    rows = []
    # a score averaging variants (mean DA) compares only when both averaged the same ones
    keys = [k for k in values_a if k in values_b]
    keys = [k for k in keys if a.get(f"{k}_variants") == b.get(f"{k}_variants")]
    for key in keys:
        va, vb = values_a[key].dropna(), values_b[key].dropna()
        shared = va.index.intersection(vb.index).sort_values()
        if not len(shared):
            continue
        label, unit, reliance, headline = _score_info(a, key)
        scale = DISPLAY_SCALE.get(unit, 1.0)
        xa, xb = va[shared].to_numpy(float), vb[shared].to_numpy(float)
        # the mean of the per-image differences (not mean(A) - mean(B): the same number,
        # but not to the last bit in floating point)
        bounds, gap = bootstrap_intervals(
            {"difference": xa - xb}, n_resamples=RESAMPLES, seed=seed
        )["difference"]
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
            "ci95": None if bounds is None else [scale * x for x in bounds],
            "ci95_withheld": gap,
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
    if row["ci95"] is None:
        return (
            f"no interval: {row['label']} {row['difference']:+.{digits}f}{unit}, "
            f"n={row['n']} ({row.get('ci95_withheld')})"
        )
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
    if folder_a.resolve() == folder_b.resolve():
        # every difference would be 0 with no interval: a mistyped argument, not a finding
        raise CompareError(
            f"A and B are the same folder ({a}): compare two different runs, e.g. "
            "`bgbench compare results_model_a/ results_model_b/`."
        )
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
    rows: list[dict[str, Any]] = []
    notes: list[str] = []
    comparable = comparable_tasks()
    for da, fa, db, fb in pairs:
        if da["task"] not in comparable:
            continue
        rows += compare_results(da, fa, db, fb, seed=seed, notes=notes)
    # a zero-shot model's head (class names, templates), which its numbers depend on
    heads_a = list(dict.fromkeys(h for p in pairs if (h := model_head_line(p[0]))))
    heads_b = list(dict.fromkeys(h for p in pairs if (h := model_head_line(p[2]))))
    return {
        "schema_version": COMPARE_SCHEMA,
        "kind": "bgbench-compare",
        "a": {"folder": str(a), "model": doc_a.get("model"), "zero_shot": heads_a},
        "b": {"folder": str(b), "model": doc_b.get("model"), "zero_shot": heads_b},
        "seed": seed,
        "bootstrap_resamples": RESAMPLES,
        "notes": notes,
        "rows": rows,
    }


def _table(rows: list[Mapping[str, Any]]) -> list[str]:
    lines = [
        "| Benchmark | Task | Score | A | B | A − B [95% CI] | n | Verdict |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        d = 3 if r["unit"] == "" else 1
        ci = "[—]" if r["ci95"] is None else "[{:+.{d}f}, {:+.{d}f}]".format(*r["ci95"], d=d)
        lines.append(
            f"| {r['benchmark']} | {r['task']} | {r['label']} | {r['a']:.{d}f} | "
            f"{r['b']:.{d}f} | {r['difference']:+.{d}f} {ci} | {r['n']} "
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
        *(f"{note}\n" for note in doc.get("notes") or ()),
    ]
    for side in ("a", "b"):
        for head in doc[side].get("zero_shot") or ():
            lines += [f"{side.upper()} ({doc[side]['model']}) is scored through a {head}.", ""]
    if headlines:
        lines += [f"- {r['benchmark']} · {r['verdict']}" for r in headlines] + [""]
        lines += ["### Headlines", "", *_table(headlines), ""]
    lines += ["### Every score", "", *_table(doc["rows"]), "", "![A − B](compare.png)", ""]
    return "\n".join(lines)


RIGHT_OF_ZERO = {
    1: "right of 0: A leans more on the background",
    -1: "right of 0: A leans less on the background",
    0: "right of 0: A higher",
}
"""Each forest-plot row's reading of a positive A − B, by its score's reliance direction
(:class:`hf_bgbench.spec.Headline`): BG-GAP's right is A worse, challenge accuracy's A better."""


def draw_compare(doc: Mapping[str, Any], path: Path) -> dict[str, tuple[float, float]]:
    """A forest plot: each score's A − B with its interval, 0 marked. Rows in one unit
    share one panel and one x axis (a difference of 2 points looks as large in every row);
    scores in another unit (e.g. iRFS) get a panel of their own. A score whose interval is
    withheld is drawn as a hollow point, labelled so. Returns each panel's x range by unit."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in doc["rows"] if r.get("headline")] or doc["rows"]
    units: dict[str, list[Mapping[str, Any]]] = {}
    for r in rows:
        units.setdefault({"%": " pts", "pts": " pts"}.get(r["unit"], ""), []).append(r)
    if not units:
        units[""] = []
    sizes = [max(len(group), 1) for group in units.values()]
    fig, axes = plt.subplots(
        len(units),
        1,
        figsize=(10.0, 0.45 * sum(sizes) + 0.9 * len(units) + 0.6),
        squeeze=False,
        gridspec_kw={"height_ratios": sizes},
    )
    ranges = {}
    for ax, (unit, group) in zip(axes[:, 0], units.items(), strict=True):
        bounds = [abs(x) for r in group for x in (r["ci95"] or [r["difference"]])]
        span = max([*bounds, 1.0 if unit else 0.01]) * 1.15  # at least 1 point / 0.01
        for y, r in enumerate(reversed(group)):
            if r["ci95"] is None:
                ax.plot([r["difference"]], [y], "o", mfc="white", color="0.4")
                continue
            lo, hi = r["ci95"]
            ax.errorbar(
                [r["difference"]],
                [y],
                xerr=[[r["difference"] - lo], [hi - r["difference"]]],
                fmt="o",
                color="0.4" if lo <= 0 <= hi else "tab:blue",
                capsize=3,
            )
        ax.axvline(0, color="0.6", lw=0.8, ls="--")
        ax.set_yticks(range(len(group)))
        ax.set_yticklabels(
            [
                f"{r['benchmark']} · {r['label']}" + (" (no interval)" if r["ci95"] is None else "")
                for r in reversed(group)
            ],
            fontsize=8,
        )
        ax.set_ylim(-0.6, len(group) - 0.4)
        ax.set_xlim(-span, span)
        for y, r in enumerate(reversed(group)):  # which side of 0 is A's better side
            ax.annotate(
                RIGHT_OF_ZERO[r["reliance"]],
                (1.0, y),
                xycoords=("axes fraction", "data"),
                xytext=(4, 0),
                textcoords="offset points",
                va="center",
                fontsize=7,
                color="0.35",
            )
        ranges[unit.strip() or "value"] = ax.get_xlim()
        ax.set_xlabel(f"A − B{unit}" if unit else "A − B", fontsize=8)
        ax.tick_params(axis="x", labelsize=7)
        for side in ("top", "right", "left"):
            ax.spines[side].set_visible(False)
    fig.suptitle(
        f"A − B: {doc['a']['model']} − {doc['b']['model']} (95% paired CI)",
        fontsize=10,
        x=0.02,
        ha="left",
    )
    fig.tight_layout(rect=(0, 0, 1, 0.96), h_pad=0.8)
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return ranges


def write_compare(doc: Mapping[str, Any], output: str | Path) -> None:
    write_run_folder(
        output,
        {
            "compare.json": lambda p: write_json(doc, p),
            "compare.md": lambda p: p.write_text(compare_markdown(doc), encoding="utf-8"),
            "compare.png": lambda p: draw_compare(doc, p),
        },
    )
