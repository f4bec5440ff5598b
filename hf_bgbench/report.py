"""Human-readable results: a console table, a Markdown report (paste into a paper or a model
card, with a LaTeX row) and a per-variant accuracy plot."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

GAP_LABELS = {
    "bg_gap": "BG-GAP (mixed_same − mixed_rand)",
    "same_minus_next": "mixed_same − mixed_next",
    "original_minus_only_fg": "original − only_fg",
}
CATEGORY_LABELS = {
    "bg_required": "BG Required",
    "bg_fg_required": "BG+FG Required",
    "bg_irrelevant": "BG Irrelevant",
    "bg_fools": "BG Fools",
    "other": "Other",
}


def pct(x: float | None) -> str:
    """A fraction as a percentage with one decimal; "—" when missing or NaN."""
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.1f}"


def order_keys(results: dict[str, Any], head: list[str]) -> dict[str, Any]:
    """``results`` with the keys of ``head`` first (the order a reader wants in JSON)."""
    return {k: results[k] for k in head if k in results} | {
        k: v for k, v in results.items() if k not in head
    }


def _ci(interval: list[float] | None) -> str:
    return "—" if not interval else f"[{pct(interval[0])}, {pct(interval[1])}]"


def render_table(results: dict[str, Any]) -> str:
    """A plain-text table for the terminal."""
    lines = [f"{results.get('model', '?')} on {results['benchmark']}", ""]
    lines.append(f"{'variant':<14}{'accuracy %':>11}{'n':>8}{'skipped':>9}")
    for variant, r in results["variants"].items():
        lines.append(f"{variant:<14}{pct(r['accuracy']):>11}{r['n']:>8}{r['skipped']:>9}")
    gaps = [(GAP_LABELS[k], results.get(k)) for k in GAP_LABELS if results.get(k) is not None]
    if gaps:
        lines.append("")
        lines.extend(f"{label:<36}{pct(value):>8} pts" for label, value in gaps)
    cats = results.get("categories")
    if cats:
        lines.append("")
        lines.append(f"prediction categories (n={results['categories_n']}):")
        lines.extend(f"  {CATEGORY_LABELS[k]:<16}{pct(cats[k]):>7} %" for k in CATEGORY_LABELS)
    return "\n".join(lines)


def render_markdown(results: dict[str, Any]) -> str:
    """results.md: tables ready for a paper or a model card."""
    model, bench = results.get("model", "?"), results["benchmark"]
    variants = results["variants"]
    out = [f"# {model} on {bench}", ""]
    if results.get("bg_gap") is not None:
        out += [
            f"**BG-GAP = {pct(results['bg_gap'])} points** "
            f"(95% CI {_ci(results.get('bg_gap_ci95'))}) "
            "(accuracy on mixed_same minus mixed_rand; lower means less reliance on the "
            "background's correlation with the class).",
            "",
        ]
    out += [
        "| variant | accuracy (%) | 95% CI | n | skipped |",
        "|---|---:|---:|---:|---:|",
    ]
    out += [
        f"| {v} | {pct(r['accuracy'])} | {_ci(r.get('accuracy_ci95'))} | {r['n']} | "
        f"{r['skipped']} |"
        for v, r in variants.items()
    ]
    gaps = [k for k in GAP_LABELS if results.get(k) is not None]
    if gaps:
        out += ["", "| gap | points | 95% CI (paired bootstrap) |", "|---|---:|---:|"]
        out += [
            f"| {GAP_LABELS[k]} | {pct(results[k])} | {_ci(results.get(f'{k}_ci95'))} |"
            for k in gaps
        ]
    cats = results.get("categories")
    if cats:
        roles = results.get("categories_roles") or {}
        out += [
            "",
            f"Prediction categories over {results['categories_n']} images "
            f"(full = {roles.get('full')}, "
            f"foreground = {roles.get('foreground')}, background = {roles.get('background')}):",
            "",
            "| category | % |",
            "|---|---:|",
        ]
        out += [f"| {CATEGORY_LABELS[k]} | {pct(cats[k])} |" for k in CATEGORY_LABELS]
    classes = list(next(iter(variants.values()))["per_class"])
    out += ["", "Per-class accuracy (%):", ""]
    out.append("| variant | " + " | ".join(classes) + " |")
    out.append("|---|" + "---:|" * len(classes))
    for v, r in variants.items():
        out.append(f"| {v} | " + " | ".join(pct(r["per_class"][c]) for c in classes) + " |")
    cols = list(variants)
    latex_values = [pct(variants[v]["accuracy"]) for v in cols]
    if results.get("bg_gap") is not None:
        cols.append("BG-GAP")
        latex_values.append(pct(results["bg_gap"]))
    out += [
        "",
        "LaTeX row (columns: " + ", ".join(cols) + "):",
        "",
        "```latex",
        f"{model} & " + " & ".join(latex_values) + r" \\",
        "```",
        "",
        "Protocol: "
        + str(results.get("label_protocol", ""))
        + ". Preprocessing: "
        + ", ".join(f"{k}={v}" for k, v in (results.get("preprocessing") or {}).items())
        + ". Intervals: Wilson (accuracies), paired bootstrap over shared images (gaps; "
        + f"{(results.get('bootstrap') or {}).get('resamples')} resamples, seed "
        + f"{(results.get('bootstrap') or {}).get('seed')}). "
        + f"hf_bgbench {results.get('hf_bgbench_version', '')}.",
        "",
    ]
    return "\n".join(out)


def plot_accuracies(results: dict[str, Any], path: Path) -> None:
    """Bar chart of accuracy per variant, with the chance level."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    variants = results["variants"]
    names = list(variants)
    values = [100 * variants[v]["accuracy"] for v in names]
    num_classes = len(next(iter(variants.values()))["per_class"])
    fig, ax = plt.subplots(figsize=(max(4.0, 0.9 * len(names) + 1.5), 3.6))
    bars = ax.bar(names, values, color="#4C72B0")
    ax.bar_label(bars, fmt="%.1f", fontsize=8)
    ax.axhline(100 / num_classes, color="gray", ls="--", lw=1, label="chance")
    ax.set_ylim(0, 105)
    ax.set_ylabel("accuracy (%)")
    title = f"{results.get('model', '')} on {results['benchmark']}"
    if results.get("bg_gap") is not None:
        title += f" — BG-GAP {100 * results['bg_gap']:.1f} pts"
    ax.set_title(title, fontsize=10)
    ax.legend(loc="lower left", fontsize=8)
    plt.setp(ax.get_xticklabels(), rotation=30, ha="right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
