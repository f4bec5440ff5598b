"""The one renderer: any results document -> terminal table, Markdown, plots, LaTeX row and
the Hub model-card ``model-index``.

It reads only the document's header and its typed ``report`` section
(:mod:`hf_bgbench.results`), so every task of every benchmark is rendered the same way and a
new task or benchmark needs no code here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from hf_bgbench.formatting import interval, latex_text, number
from hf_bgbench.results import WITHHELD, model_head_line, no_answer_reasons
from hf_bgbench.version import software_text


def _title(doc: Mapping[str, Any]) -> str:
    task = doc.get("task", "evaluate")
    suffix = "" if task == "evaluate" else f" — {task}"
    return f"{doc.get('model', '?')} on {doc.get('benchmark', '?')}{suffix}"


def _deviations(doc: Mapping[str, Any]) -> list[str]:
    protocol = doc.get("protocol")
    if isinstance(protocol, Mapping) and "deviations" in protocol:
        return list(protocol["deviations"] or [])
    return list(doc.get("protocol_deviations") or [])  # documents written before protocols


def _protocol_name(doc: Mapping[str, Any]) -> str | None:
    protocol = doc.get("protocol")
    return str(protocol["name"]) if isinstance(protocol, Mapping) else None


def _zero_shot_args(doc: Mapping[str, Any]) -> dict[str, Any]:
    z = doc.get("zero_shot")
    if not isinstance(z, Mapping):
        return {}
    return {
        "zero_shot_classnames": z["classnames_source"].split(" (")[0],
        "zero_shot_templates": f"{z['templates_source'].split(' (')[0]} ({z['num_templates']})",
        "zero_shot_text_embeddings_sha256": z["text_embeddings_sha256"],
    }


# --------------------------------------------------------------------------- terminal


def _withheld(doc: Mapping[str, Any]) -> list[str]:
    """Why an interval shown as "—" is missing (results' ``intervals_withheld``): an
    interval resampling could not make honest is said to be absent, not left to look like
    certainty."""
    return [
        f"No 95% interval for {key}: {reason}." for key, reason in (doc.get(WITHHELD) or {}).items()
    ]


def _unanswered(doc: Mapping[str, Any]) -> list[str]:
    """The images a VLM gave no answer, per variant (results' ``unanswered``): a rule that
    may abstain says how often it did, so a low accuracy is not read as wrong answers. The
    one sentence the terminal and results.md give, beside the headline."""
    counts = doc.get("unanswered")
    if not isinstance(counts, Mapping) or not counts:
        return []
    parts = ", ".join(
        f"{v} {c['unanswered']} of {c['n']}"
        + (f" (both {c['both']}, neither {c['neither']})" if "both" in c else "")
        + no_answer_reasons(c)
        for v, c in counts.items()
    )
    if (doc.get("vlm") or {}).get("drops_unanswered"):
        return [
            f"No answer (left out of the accuracy, as the protocol's authors do): {parts} -- "
            "an answer naming both classes of its two-way question, or neither"
        ]
    return [
        f"No answer (counted as wrong, never guessed): {parts} -- an open answer naming no "
        "class or two, or rotations of the options that disagree"
    ]


def _cache_line(doc: Mapping[str, Any]) -> list[str]:
    """Whether the predictions were computed now or read from the cache (results'
    ``reused_images``), so a fast rerun is not mistaken for a new measurement."""
    reused, computed = doc.get("reused_images") or 0, doc.get("computed_images") or 0
    if not reused:
        return []
    return [
        f"{reused} of {reused + computed} images' predictions came from the prediction cache "
        "(scored before by the same model, data and settings); --no-cache recomputes them"
    ]


def served_line(doc: Mapping[str, Any]) -> list[str]:
    """What scoring a served model cost (results' ``served``), in one sentence."""
    s = doc.get("served")
    if not isinstance(s, Mapping):
        return []
    model = ", ".join(s.get("server_model") or []) or "?"
    return [
        f"Served model ({model}): {s.get('requests_sent', 0)} requests sent, "
        f"{s.get('answers_from_cache', 0)} answers reused from the cache, "
        f"{s.get('total_tokens', 0)} tokens ({s.get('prompt_tokens', 0)} prompt + "
        f"{s.get('completion_tokens', 0)} completion), {s.get('retries', 0)} retries"
    ]


def render_table(doc: Mapping[str, Any]) -> str:
    """A plain-text summary for the terminal: headline scores, then every table."""
    report = doc["report"]
    lines = [_title(doc), ""]
    if _protocol_name(doc):
        lines.append(f"protocol: {_protocol_name(doc)}")
    head = model_head_line(doc)
    if head:
        lines.append(head)
    lines += [f"protocol deviation: {d}" for d in _deviations(doc)]
    departures = doc["protocol"].get("departures") if _protocol_name(doc) else None
    if departures:  # as results.md says it: a subset's number is not the benchmark's
        lines.append(f"not the published protocol on all of the data: {'; '.join(departures)}")
    headline = [s for s in report["scores"] if s["headline"]]
    for s in headline:
        unit = " pts" if s["unit"] == "pts" else (" %" if s["unit"] == "%" else "")
        lines.append(
            f"{s['label']:<40}{number(s['value'], s['unit']):>8}{unit}  95% CI "
            f"{interval(s['ci95'], s['unit'])}"
            + (f"  n={s['n']}" if s.get("n") is not None else "")
            + (f" ({s['left_out']})" if s.get("left_out") else "")
        )
    lines += _withheld(doc) + _unanswered(doc) + served_line(doc) + _cache_line(doc)
    for table in report["tables"]:
        widths = [
            max(len(str(c)), *(len(str(r[i])) for r in table["rows"])) if table["rows"] else len(c)
            for i, c in enumerate(table["columns"])
        ]
        lines += ["", table["title"]]
        lines.append(
            "  ".join(
                f"{c:>{w}}" if i else f"{c:<{w}}"
                for i, (c, w) in enumerate(zip(table["columns"], widths, strict=True))
            )
        )
        for row in table["rows"]:
            lines.append(
                "  ".join(
                    f"{v:>{w}}" if i else f"{v:<{w}}"
                    for i, (v, w) in enumerate(zip(map(str, row), widths, strict=True))
                )
            )
    return "\n".join(lines)


# --------------------------------------------------------------------------- Markdown


def render_markdown(doc: Mapping[str, Any], model_index_file: str | None = None) -> str:
    """results.md: headline numbers, tables, a LaTeX row and the model-index block, or,
    when the model-index is written to ``model_index_file`` beside it, where it is."""
    report = doc["report"]
    out = _markdown_head(doc)
    for s in (s for s in report["scores"] if s["headline"]):
        unit = " points" if s["unit"] == "pts" else ("%" if s["unit"] == "%" else "")
        out += [
            f"**{s.get('short') or s['label']} = {number(s['value'], s['unit'])}{unit}** "
            f"(95% CI {interval(s['ci95'], s['unit'])}"
            + (f"; n = {s['n']}, {s['left_out']}" if s.get("left_out") else "")
            + ")"
            + (f" {s['description']}" if s.get("description") else ""),
            "",
        ]
    out += [f"{line}.\n" for line in _unanswered(doc)]  # beside the headline it lowers
    for table in report["tables"]:
        out += [table["title"], "", "| " + " | ".join(table["columns"]) + " |"]
        out.append(
            "|" + "|".join("---" if i == 0 else "---:" for i in range(len(table["columns"]))) + "|"
        )
        out += ["| " + " | ".join(map(str, row)) + " |" for row in table["rows"]]
        out += ["", table["note"], ""] if table.get("note") else [""]
    out += _markdown_paste(doc, model_index_file)
    probe = [doc["probe"]["note"]] if (doc.get("probe") or {}).get("note") else []
    out += probe + list(report["notes"]) + _withheld(doc)
    software = software_text(doc.get("software"))
    out += [
        f"hf_bgbench {doc.get('hf_bgbench_version', '')}{f' ({software})' if software else ''}.",
        "",
    ]
    return "\n".join(out)


def _markdown_head(doc: Mapping[str, Any]) -> list[str]:
    """results.md's top: the title, the protocol, the model's head, every deviation and
    departure, and a served model's cost -- said before any number."""
    out = [f"# {_title(doc)}", ""]
    if _protocol_name(doc):
        summary = doc["protocol"].get("summary")
        out += [f"Protocol: **{_protocol_name(doc)}**" + (f" — {summary}" if summary else ""), ""]
    head = model_head_line(doc)
    if head:
        out += [head[0].upper() + head[1:] + ".", ""]
    for d in _deviations(doc):
        out += [f"> **Protocol deviation:** {d}", ""]
    out += [f"{line}.\n" for line in served_line(doc)]
    departures = doc["protocol"].get("departures") if _protocol_name(doc) else None
    if departures:  # what keeps the run off a leaderboard, said where the numbers are
        out += [
            f"> **Not the published protocol on all of the data:** {'; '.join(departures)}.",
            "",
        ]
    return out


def _markdown_paste(doc: Mapping[str, Any], model_index_file: str | None) -> list[str]:
    """The paste-ready parts of results.md: the LaTeX row, and the model-index or where it
    is (its YAML is most of the page: a file of its own when one is written)."""
    out: list[str] = []
    cols, values = latex_row(doc)
    if cols:
        out += [
            "LaTeX row (columns: " + ", ".join(cols) + "):",
            "",
            "```latex",
            f"{latex_text(str(doc.get('model', '?')))} & " + " & ".join(values) + r" \\",
            "```",
            "",
        ]
    if model_index_file:
        return out + [
            f"Model card: the `model-index` to paste into the front matter of the model's "
            f"README.md is `{model_index_file}`, beside this file.",
            "",
        ]
    return out + [
        "Model card (`model-index`, paste into the front matter of the model's README.md):",
        "",
        "```yaml",
        render_model_index(doc).rstrip(),
        "```",
        "",
    ]


def latex_row(doc: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """(column names, cells) of the scores marked for the LaTeX row: each value with its 95%
    interval in small type beside it, as ``bgbench table`` writes them, minus signs as
    such."""
    scores = [s for s in doc["report"]["scores"] if s.get("latex", True)]
    scores = [s for s in scores if not s["headline"]] + [s for s in scores if s["headline"]]
    cells = []
    for s in scores:
        value = number(s["value"], s["unit"]).replace("-", "$-$")
        ci = interval(s.get("ci95"), s["unit"]) if s.get("ci95") else ""
        cells.append(value + (f" {{\\scriptsize {ci.replace('-', '$-$')}}}" if ci else ""))
    return [s["short"] or s["label"] for s in scores], cells


# --------------------------------------------------------------------------- model-index


def _scored_size(doc: Mapping[str, Any]) -> str:
    """ "N images" (per variant when the scores span several) of a results document; for a
    rule that leaves unanswered images out of its accuracy, "N answered of M images"."""
    counts = [s["n"] for s in doc.get("report", {}).get("scores", []) if s.get("n")]
    if not counts:
        return ""
    configs = {s.get("config") for s in doc["report"]["scores"] if s.get("config")}
    per = " per variant" if len(configs) > 1 else ""
    unanswered = doc.get("unanswered")
    vlm = doc.get("vlm")
    if isinstance(vlm, Mapping) and vlm.get("drops_unanswered") and unanswered:
        scored = max(int(u.get("n", 0)) for u in unanswered.values())
        return f"{max(counts)} answered of {scored} images{per}"
    return f"{max(counts)} images{per}"


def _vlm_args(doc: Mapping[str, Any], config: str | None) -> dict[str, Any]:
    """How a generative VLM was scored, for the model-index: the rule (part of the number)
    and, per variant, the images it left unanswered."""
    vlm = doc.get("vlm")
    if not isinstance(vlm, Mapping):
        return {}
    out: dict[str, Any] = {"vlm_rule": vlm.get("protocol"), "vlm_backend": vlm.get("backend")}
    unanswered = (doc.get("unanswered") or {}).get(config) if config else None
    if isinstance(unanswered, Mapping):
        out["vlm_unanswered"] = f"{unanswered.get('unanswered')} of {unanswered.get('n')}"
    return {k: v for k, v in out.items() if v is not None}


def model_index(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The Hub model-card ``model-index`` of a results document (percentages, 2 decimals).

    One entry per dataset config the scores were measured on (a variant), plus one for the
    scores that span configs (gaps, challenge accuracy)."""
    from hf_bgbench.benchmarks import get_benchmark
    from hf_bgbench.hub.card import scored_dataset

    bench = doc.get("benchmark", "?")
    try:
        spec = get_benchmark(bench)
        # the data actually scored: the benchmark's Hub id only for its Hub dataset, so a
        # card pasted from a local build or a sample never credits the published benchmark
        named = scored_dataset(
            doc.get("data"), title=spec.title, hub_repo=spec.hub_repo, size=_scored_size(doc)
        )
        dataset_name, dataset_type = named["name"], named["type"]
    except ValueError:
        dataset_name, dataset_type = bench, bench
    groups: dict[str | None, list[dict[str, Any]]] = {}
    for s in doc["report"]["scores"]:
        if s["value"] is None:
            continue
        value = round(100 * s["value"], 2) if s["unit"] in ("%", "pts") else round(s["value"], 4)
        groups.setdefault(s.get("config"), []).append(
            {"type": s["key"].split("/")[0], "value": value, "name": s["label"]}
        )
    results = []
    for config, metrics in groups.items():
        dataset: dict[str, Any] = {"name": dataset_name, "type": dataset_type}
        if config:
            dataset["config"] = config
        dataset["split"] = "test"
        args = _dataset_args(doc, config)
        if args:
            dataset["args"] = args
        results.append(
            {
                "task": {"type": "image-classification", "name": doc.get("task", "evaluate")},
                "dataset": dataset,
                "metrics": metrics,
                "source": {"name": f"hf_bgbench {doc.get('hf_bgbench_version', '')}".strip()},
            }
        )
    return {"model-index": [{"name": str(doc.get("model", "?")), "results": results}]}


def _dataset_args(doc: Mapping[str, Any], config: str | None) -> dict[str, Any]:
    """A model-index entry's ``dataset.args``: the protocol, its deviations, a zero-shot
    head and a VLM's rule -- what the number depends on besides the data."""
    args: dict[str, Any] = {}
    if _protocol_name(doc):
        args["protocol"] = _protocol_name(doc)
    deviation = "; ".join(_deviations(doc))
    if deviation:
        args["protocol_deviation"] = deviation
    return args | _zero_shot_args(doc) | _vlm_args(doc, config)


def render_model_index(doc: Mapping[str, Any]) -> str:
    return yaml.safe_dump(model_index(doc), sort_keys=False, allow_unicode=True, width=100)


# --------------------------------------------------------------------------- plots


def plot_figure(fig_spec: Mapping[str, Any], path: Path) -> str:
    """Draw one figure of a results document (:class:`hf_bgbench.results.Figure`, any kind)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kind = fig_spec.get("kind") or "bars"
    if kind not in _DRAW:
        raise ValueError(f"Figure kind {kind!r} is unknown; use one of {', '.join(_DRAW)}.")
    fig = _DRAW[kind](plt, fig_spec)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path.name


MAX_UPRIGHT_BARS = 24
"""More bars than this (64 worlds) are drawn lying down, one row each, top to bottom: upright
they would need a figure metres wide or labels too small to read."""


def _bars(plt, fig_spec: Mapping[str, Any]):
    if len(fig_spec["labels"]) > MAX_UPRIGHT_BARS and not fig_spec.get("histogram"):
        return _lying_bars(plt, fig_spec)
    hist = fig_spec.get("histogram")
    panels = 2 if hist else 1
    labels = list(fig_spec["labels"])
    width = max(4.0, 0.9 * len(labels) + 1.5)
    fig, axes = plt.subplots(1, panels, figsize=(width + 5 * (panels - 1), 3.8), squeeze=False)
    ax = axes[0, 0]
    values = [v if v is not None else 0.0 for v in fig_spec["values"]]
    errors = _error_bars(values, fig_spec.get("intervals"))
    bars = ax.bar(labels, values, color="#4C72B0", yerr=errors, capsize=3, ecolor="#333333")
    texts = [f"{v:.1f}" if v is not None else "—" for v in fig_spec["values"]]
    if fig_spec.get("counts"):
        texts = [f"{t}\nn={n}" for t, n in zip(texts, fig_spec["counts"], strict=True)]
    tops = [v + (errors[1][i] if errors else 0.0) for i, v in enumerate(values)]
    for bar, top, text in zip(bars, tops, texts, strict=True):
        # above the bar and its interval, so a zero bar still shows its value
        ax.annotate(
            text,
            (bar.get_x() + bar.get_width() / 2, top),
            xytext=(0, 2),
            textcoords="offset points",
            ha="center",
            va="bottom",
            fontsize=7,
        )
    _reference(ax, fig_spec, "outside")  # beside the axes: never over a bar
    _axes(ax, fig_spec, default_ylim=(0, 105))
    _room_for_labels(ax, tops, lines=2 if fig_spec.get("counts") else 1)
    plt.setp(ax.get_xticklabels(), rotation=30, ha="right")
    if hist:
        ax2 = axes[0, 1]
        ax2.hist(hist["values"], bins=min(50, max(5, len(hist["values"]) // 4)), color="#dd8452")
        ax2.set_xlabel(hist["xlabel"])
        ax2.set_ylabel(hist["ylabel"])
        ax2.set_title(hist["title"], fontsize=10)
    return fig


def _lying_bars(plt, fig_spec: Mapping[str, Any]):
    """:func:`_bars` for many labels: horizontal bars in the labels' order from the top, the
    value (and n) at the end of each bar's interval, the reference a dashed vertical line."""
    labels = list(fig_spec["labels"])
    fig, ax = plt.subplots(figsize=(7.5, 0.22 * len(labels) + 1.6))
    values = [v if v is not None else 0.0 for v in fig_spec["values"]]
    errors = _error_bars(values, fig_spec.get("intervals"))
    rows = list(range(len(labels)))[::-1]  # the first label on top
    ax.barh(rows, values, color="#4C72B0", xerr=errors, capsize=2, ecolor="#333333", height=0.7)
    ax.set_yticks(rows, labels, fontsize=7)
    ends = [v + (errors[1][i] if errors else 0.0) for i, v in enumerate(values)]
    counts = fig_spec.get("counts") or [None] * len(labels)
    for row, end, value, n in zip(rows, ends, fig_spec["values"], counts, strict=True):
        text = "—" if value is None else f"{value:.1f}" + (f" (n={n})" if n else "")
        ax.annotate(
            text, (end, row), xytext=(3, 0), textcoords="offset points", va="center", fontsize=6
        )
    if fig_spec.get("reference"):
        value, label = fig_spec["reference"]
        ax.axvline(value, color="gray", ls="--", lw=1, label=label)
        ax.legend(loc="lower right", fontsize=8)
    ylim = fig_spec["ylim"] if "ylim" in fig_spec else (0, 105)
    ax.set_xlim(*(ylim or (None, None)))
    ax.set_ylim(-0.7, len(labels) - 0.3)
    ax.set_xlabel(fig_spec["ylabel"])
    ax.set_title(_wrapped(fig_spec["title"], ax), fontsize=10)
    return fig


def _room_for_labels(ax: Any, tops: list[float], lines: int) -> None:
    """Raise the y axis's top so each bar's label (``lines`` lines of 7 pt, 2 pt above the
    bar or its interval) stays inside the axes: a bar at the top of a fixed ylim (a class at
    100% in challenge.png) put its "100.0 / n=3" over the title. The axes' final height is
    only known after tight_layout, so it is taken as 60% of the figure's, less than it gets."""
    if not tops:
        return
    bottom, top = ax.get_ylim()
    share = (2 + lines * 7 * 1.25) / (0.6 * ax.figure.get_figheight() * 72)
    # the top t at which the highest label ends: max(tops) + share * (t - bottom) = t
    needed = (max(tops) - share * bottom) / (1 - share)
    if needed > top:
        ax.set_ylim(bottom, needed)


def _scatter(plt, fig_spec: Mapping[str, Any]):
    fig, ax = plt.subplots(figsize=(5.2, 4.6))
    x_iv, y_iv = fig_spec.get("x_intervals"), fig_spec.get("intervals")
    keep = [
        i
        for i, (x, y) in enumerate(zip(fig_spec["x"], fig_spec["values"], strict=True))
        if x is not None and y is not None
    ]
    points = [(fig_spec["labels"][i], fig_spec["x"][i], fig_spec["values"][i]) for i in keep]
    xs, ys = [p[1] for p in points], [p[2] for p in points]
    ax.errorbar(
        xs,
        ys,
        xerr=_error_bars(xs, [x_iv[i] for i in keep] if x_iv else None),
        yerr=_error_bars(ys, [y_iv[i] for i in keep] if y_iv else None),
        fmt="o",
        color="#4C72B0",
        ecolor="#999999",
        capsize=2,
        lw=1,
    )
    if fig_spec.get("diagonal"):
        lo, hi = fig_spec.get("xlim") or fig_spec.get("ylim") or (0.0, 1.0)
        ax.plot([lo, hi], [lo, hi], color="gray", ls="--", lw=1, label="y = x")
        ax.legend(loc="lower right", fontsize=8)
    _axes(ax, fig_spec)
    place_labels(fig, ax, points)
    return fig


# Where a point's label may go, in points from the point: right, left, above, below, then
# further out; the first that overlaps no earlier label and stays inside the axes is taken.
LABEL_OFFSETS = [(5, 3), (5, -11), (-5, 3), (-5, -11)] + [
    (dx, dy) for step in (1, 2, 3, 4) for dy in (3 + 10 * step, -11 - 10 * step) for dx in (5, -5)
]


def place_labels(fig, ax, points: list[tuple[str, float, float]]) -> list[Any]:
    """Label each (label, x, y) point where its text overlaps no other label and stays in
    the axes (classes with equal accuracies land on one spot: side by side labels would be
    unreadable); the label closest to its point when no place is free. Returns the texts."""
    fig.tight_layout()  # the final layout first: labels are placed in its pixels
    renderer = fig.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    placed: list[Any] = []
    texts = []
    for label, x, y in points:
        best = None
        for dx, dy in LABEL_OFFSETS:
            text = ax.annotate(
                label,
                (x, y),
                xytext=(dx, dy),
                textcoords="offset points",
                fontsize=8,
                ha="left" if dx >= 0 else "right",
                va="bottom",
            )
            box = text.get_window_extent(renderer)
            inside = (
                frame.x0 <= box.x0
                and box.x1 <= frame.x1
                and frame.y0 <= box.y0
                and box.y1 <= frame.y1
            )
            if inside and not any(box.overlaps(other) for other in placed):
                best = text
                break
            text.remove()
        if best is None:  # nowhere free: the first place, overlapping
            best = ax.annotate(
                label, (x, y), xytext=LABEL_OFFSETS[0], textcoords="offset points", fontsize=8
            )
        best.set_in_layout(False)  # the later tight_layout must not move the axes for them
        placed.append(best.get_window_extent(renderer))
        texts.append(best)
    return texts


def _lines(plt, fig_spec: Mapping[str, Any]):
    fig, ax = plt.subplots(figsize=(6.0, 4.0))
    x = list(fig_spec["x"])
    for series in fig_spec.get("series") or []:
        ys = [float("nan") if v is None else v for v in series["values"]]
        (line,) = ax.plot(x, ys, marker="o", ms=4, label=series["label"])
        if series.get("intervals"):
            lo = [iv[0] if iv else float("nan") for iv in series["intervals"]]
            hi = [iv[1] if iv else float("nan") for iv in series["intervals"]]
            ax.fill_between(x, lo, hi, color=line.get_color(), alpha=0.2, lw=0)
    if fig_spec.get("labels"):
        ax.set_xticks(x, list(fig_spec["labels"]))
    _reference(ax, fig_spec, None)
    if fig_spec.get("series"):
        ax.legend(fontsize=8)
    _axes(ax, fig_spec)
    return fig


def _histograms(plt, fig_spec: Mapping[str, Any]):
    panels = list(fig_spec.get("series") or [])
    cols = max(1, min(5, len(panels)))
    rows = max(1, math.ceil(len(panels) / cols))
    fig, axes = plt.subplots(
        rows, cols, figsize=(2.6 * cols, 2.3 * rows + 0.5), squeeze=False, sharex=True
    )
    edges = fig_spec.get("x")  # given: the series hold counts per bin
    for ax, series in zip(axes.flat, panels, strict=False):
        values = [v for v in series["values"] if v is not None]
        if edges:
            ax.stairs(values, edges, fill=True, color="#dd8452")
            title = f"{series['label']} (n={sum(values):g})"
        else:
            ax.hist(
                values, bins=fig_spec.get("bins") or 20, range=fig_spec.get("xlim"), color="#dd8452"
            )
            title = f"{series['label']} (n={len(values)})"
            if values:
                ax.axvline(sum(values) / len(values), color="#333333", ls="--", lw=1)
        ax.set_title(title, fontsize=8)
        ax.tick_params(labelsize=7)
        if fig_spec.get("xlim"):
            ax.set_xlim(*fig_spec["xlim"])
    for ax in list(axes.flat)[len(panels) :]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel(fig_spec.get("xlabel", ""), fontsize=8)
    for ax in axes[:, 0]:
        ax.set_ylabel(fig_spec["ylabel"], fontsize=8)
    fig.suptitle(fig_spec["title"], fontsize=10)
    return fig


def _error_bars(values: list[float], intervals: list | None) -> list[list[float]] | None:
    """matplotlib's [below, above] error lengths from (lo, hi) intervals."""
    if not intervals:
        return None
    lo = [max(0.0, v - iv[0]) if iv else 0.0 for v, iv in zip(values, intervals, strict=True)]
    hi = [max(0.0, iv[1] - v) if iv else 0.0 for v, iv in zip(values, intervals, strict=True)]
    return [lo, hi]


def _reference(ax, fig_spec: Mapping[str, Any], legend_loc: str | None) -> None:
    if fig_spec.get("reference"):
        value, label = fig_spec["reference"]
        ax.axhline(value, color="gray", ls="--", lw=1, label=label)
        if legend_loc == "outside":
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
        elif legend_loc:
            ax.legend(loc=legend_loc, fontsize=8)


def _axes(ax, fig_spec: Mapping[str, Any], default_ylim: tuple[float, float] | None = None) -> None:
    # An explicit None asks for matplotlib's own limits (e.g. dropped accuracy can be < 0).
    ylim = fig_spec["ylim"] if "ylim" in fig_spec else default_ylim
    if ylim:
        ax.set_ylim(*ylim)
    if fig_spec.get("xlim"):
        ax.set_xlim(*fig_spec["xlim"])
    ax.set_xlabel(fig_spec.get("xlabel", ""))
    ax.set_ylabel(fig_spec["ylabel"])
    ax.set_title(_wrapped(fig_spec["title"], ax), fontsize=10)


def _wrapped(title: str, ax: Any) -> str:
    """``title`` on as many lines as the axes' width needs: a narrow figure (three bars)
    would cut a long one off at both edges. About 13 characters an inch at 10 pt."""
    import textwrap

    inches = ax.figure.get_figwidth() * ax.get_position().width
    return textwrap.fill(title, max(24, int(13 * inches)))


_DRAW = {"bars": _bars, "scatter": _scatter, "lines": _lines, "histograms": _histograms}
