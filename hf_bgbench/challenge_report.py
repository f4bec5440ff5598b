"""Reports of a Backgrounds Challenge run: terminal table, Markdown, plot and files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from hf_bgbench.report import pct


def render_challenge_table(results: dict[str, Any]) -> str:
    """A short plain-text summary for the terminal."""
    lo, hi = results["challenge_accuracy_ci95"]
    lines = [
        f"{results['model']} — Backgrounds Challenge on {results['benchmark']} "
        f"({results['mode'].replace('_', ' ')})",
        "",
        f"challenge accuracy {pct(results['challenge_accuracy']):>6} %  "
        f"(95% CI {pct(lo)}–{pct(hi)})",
        f"clean accuracy     {pct(results['clean_accuracy']):>6} %  "
        f"({results['foreground_variant']}, uncomposited)",
        f"foregrounds {results['n_foregrounds']}, backgrounds {results['n_backgrounds']}, "
        f"composites evaluated {results['composites_evaluated']:,} of "
        f"{results['composites_total']:,}",
        "",
        f"{'class':<12}{'challenge %':>12}" + (f"{'max ASR %':>11}" if _has_asr(results) else ""),
    ]
    asr = results.get("attack_success") or {}
    for name, value in results["challenge_accuracy_per_class"].items():
        row = f"{name:<12}{pct(value):>12}"
        if asr:
            row += f"{pct(asr['per_class'][name]['max_asr']):>11}"
        lines.append(row)
    if asr:
        lines += [
            "",
            "foregrounds some background of another class flips into its class: "
            f"{pct(asr['fooled_into_background_class'])} %",
        ]
    return "\n".join(lines)


def _has_asr(results: dict[str, Any]) -> bool:
    return bool(results.get("attack_success"))


def render_challenge_markdown(results: dict[str, Any]) -> str:
    """challenge.md: paste-ready tables."""
    lo, hi = results["challenge_accuracy_ci95"]
    out = [
        f"# {results['model']}: Backgrounds Challenge ({results['benchmark']})",
        "",
        "| Model | Challenge acc. (%) | 95% CI | Clean acc. (%) | Foregrounds | Backgrounds |",
        "|---|---:|---|---:|---:|---:|",
        f"| {results['model']} | {pct(results['challenge_accuracy'])} | "
        f"[{pct(lo)}, {pct(hi)}] | {pct(results['clean_accuracy'])} | "
        f"{results['n_foregrounds']} | {results['n_backgrounds']} |",
        "",
        "Challenge accuracy: share of foregrounds that no background "
        f"({results['background_variant']}, every class) makes the model misclassify. "
        f"Clean accuracy: the uncomposited {results['foreground_variant']} images.",
        "",
    ]
    asr = results.get("attack_success")
    if asr:
        out += [
            "| Class | Challenge acc. (%) | Max ASR (%) | Most fooling background | "
            "Foolable into (%) |",
            "|---|---:|---:|---|---:|",
        ]
        for name, value in results["challenge_accuracy_per_class"].items():
            r = asr["per_class"][name]
            top = r["top_backgrounds"][0]["id"] if r["top_backgrounds"] else "—"
            out.append(
                f"| {name} | {pct(value)} | {pct(r['max_asr'])} | {top} | "
                f"{pct(r['foolable_into'])} |"
            )
        out += [
            "",
            "ASR (attack success rate) of a background: share of foregrounds of other classes "
            "it flips into its own class. Foolable into: share of other-class foregrounds that "
            "some background of the class flips into it. "
            f"{pct(asr['fooled_into_background_class'])}% of foregrounds can be fooled into the "
            "background's class by some background.",
        ]
    else:
        out += ["| Class | Challenge acc. (%) |", "|---|---:|"]
        out += [
            f"| {name} | {pct(value)} |"
            for name, value in results["challenge_accuracy_per_class"].items()
        ]
    sub = results["subset"]
    out += [
        "",
        f"Mode: {results['mode'].replace('_', ' ')}; composites evaluated "
        f"{results['composites_evaluated']:,} of {results['composites_total']:,}; seed "
        f"{sub['seed']}"
        + (
            f"; random subset (max_foregrounds={sub['max_foregrounds']}, "
            f"max_backgrounds={sub['max_backgrounds']})"
            if sub["max_foregrounds"] is not None or sub["max_backgrounds"] is not None
            else ""
        )
        + f". hf_bgbench {results['hf_bgbench_version']}.",
        "",
    ]
    return "\n".join(out)


def plot_challenge(results: dict[str, Any], path: Path, asr: np.ndarray | None = None) -> None:
    """Per-class challenge accuracy bars (+ the ASR distribution in full-matrix mode)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = 2 if asr is not None else 1
    fig, axes = plt.subplots(1, panels, figsize=(6 * panels, 3.6), squeeze=False)
    names = list(results["challenge_accuracy_per_class"])
    values = [
        100 * v if v is not None else 0.0 for v in results["challenge_accuracy_per_class"].values()
    ]
    ax = axes[0, 0]
    ax.bar(names, values, color="#4c72b0")
    ax.axhline(100 * results["challenge_accuracy"], color="k", ls="--", lw=1, label="overall")
    ax.set_ylim(0, 100)
    ax.set_ylabel("challenge accuracy (%)")
    ax.set_title(f"{results['model']}: Backgrounds Challenge")
    ax.tick_params(axis="x", rotation=45)
    ax.legend(loc="upper right", fontsize=8)
    if asr is not None:
        ax = axes[0, 1]
        defined = asr[~np.isnan(asr)]
        ax.hist(100 * defined, bins=min(50, max(5, len(defined) // 4)), color="#dd8452")
        ax.set_xlabel("attack success rate of a background (%)")
        ax.set_ylabel("backgrounds")
        ax.set_title("ASR distribution")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write_challenge_outputs(
    results: dict[str, Any],
    out: dict[str, Any],
    bg_labels: np.ndarray,
    bg_ids: list[str],
    directory: Path,
) -> None:
    """challenge.json, challenge.md, vulnerable.parquet, challenge.png, fooling_matrix.npz."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "challenge.json").write_text(json.dumps(results, indent=2) + "\n", "utf-8")
    (directory / "challenge.md").write_text(render_challenge_markdown(results), "utf-8")
    first = np.asarray(out["first_bg"], np.int64)
    frame = pd.DataFrame(
        {
            "id": out["ids"],
            "label": np.asarray(out["labels"], np.int64),
            "vulnerable": np.asarray(out["vulnerable"], bool),
            "fooling_bg_id": [bg_ids[j] if j >= 0 else None for j in first],
            "fooling_bg_label": pd.array(
                [int(bg_labels[j]) if j >= 0 else None for j in first], dtype="Int64"
            ),
            "pred": pd.array(out["first_pred"], dtype="Int64"),
            "clean_pred": np.asarray(out["clean_pred"], np.int64),
            "composites": np.asarray(out["composites_per_fg"], np.int64),
        }
    )
    asr = out.get("asr")
    if out["rows"]:
        matrix = np.stack(out["rows"])
        labels = np.asarray(out["labels"], np.int64)
        frame["n_fooling_backgrounds"] = (matrix != labels[:, None]).sum(axis=1)
        np.savez_compressed(
            directory / "fooling_matrix.npz",
            predictions=matrix.astype(np.int16),
            foreground_labels=labels,
            background_labels=bg_labels,
            foreground_ids=np.asarray(out["ids"]),
            background_ids=np.asarray(bg_ids),
            attack_success_rate=asr,
        )
    frame.to_parquet(directory / "vulnerable.parquet", index=False)
    plot_challenge(results, directory / "challenge.png", asr)
