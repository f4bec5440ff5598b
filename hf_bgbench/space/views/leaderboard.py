"""The Space's leaderboard: results documents kept as rows of a dataset.

One row per (model, benchmark, task, dataset, protocol) -- a newer full run of the same model
on the same dataset under the same protocol replaces the older row -- holding the run's
headline scores (in display units: % and points) with their 95% intervals and units, read
from the document as the report card reads them
(:func:`hf_bgbench.report.headlines.headline_rows`). Rows live in ``rows.jsonl`` of a folder
(``BGBENCH_LEADERBOARD_DIR``) -- loadable with ``datasets.load_dataset("json", ...)`` -- and,
when ``BGBENCH_LEADERBOARD_REPO`` names a Hub dataset repo and the Hub is reachable, that file
is pulled before and pushed after each append (``huggingface_hub``; needs a write token).

A score is appended only when the run used the full data it was given: every variant the
data holds (for a task that scores variants), no subset cap that left images out
(``max_foregrounds``, ``max_backgrounds``, ``max_images`` below the data's size) and no
mismatched-id filtering. The published reference numbers (:func:`published_rows`, from each
benchmark's spec) are shown beside, marked "published". The view (:func:`table`) shows one
benchmark and task at a time: its headline scores (the spec's report headlines), units in the
headers, intervals in the cells, one decimal for every row.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hf_bgbench.report.headlines import DISPLAY_SCALE, headline_rows

LEADERBOARD_REPO_ENV = "BGBENCH_LEADERBOARD_REPO"
RESULTS_REPOS_ENV = "BGBENCH_RESULTS_REPOS"  # Hub datasets written by `bgbench publish-results`
ROWS_FILE = "rows.jsonl"
RUNS_FOLDER = "runs"  # each row's results document and report, beside rows.jsonl
HUB_FILES = "https://huggingface.co/datasets/{repo}/blob/main/{path}"
KEY = ("model", "benchmark", "task", "dataset", "protocol")
INFO_COLUMNS = ["model", "source", "dataset", "protocol"]
# what a run on other data than the published benchmark is told apart by
SAMPLE_COLUMNS = ["images", "data fingerprint"]
SUBSET_KEYS = ("max_foregrounds", "max_backgrounds", "max_images")
# where a task records the ids a capped subset scored, next to its cap
SUBSET_IDS = {
    "max_images": ("image_ids", "ids"),
    "max_foregrounds": ("foreground_ids",),
    "max_backgrounds": ("background_ids",),
}
UNIT_NAMES = {"%": "%", "pts": "pts"}


def published_rows() -> list[dict[str, Any]]:
    """The published reference results of every registered benchmark (its spec's
    ``published_results``), as leaderboard rows marked ``source: published``."""
    from hf_bgbench.benchmarks import all_specs

    rows = []
    for spec in all_specs():
        for row in spec.published_results:
            task = row["task"]  # a reference names its task (spec.Reference.task)
            try:
                protocol = spec.protocol_for(task).name
            except Exception:  # a task without declared recipes, or an older spec
                protocol = ""
            rows.append(
                {
                    "source": "published",
                    "model": row.get("model", "?"),
                    "benchmark": spec.name,
                    "task": task,
                    "dataset": row.get("dataset", ""),
                    "protocol": protocol,
                    "reference": row.get("source", ""),
                    "link": getattr(spec, "paper_url", "") or "",
                    "scores": dict(row.get("scores") or {}),
                }
            )
    return rows


class NotEligible(ValueError):
    """A run that may not enter the leaderboard (it scored a subset); the message says why."""


def _skipped_count(skipped: Any, cap: str) -> int:
    """How many images a run skipped (unreadable) among those a ``cap`` drew."""
    if isinstance(skipped, Mapping):  # {"foregrounds": [...], "backgrounds": [...]}
        part = {"max_foregrounds": "foregrounds", "max_backgrounds": "backgrounds"}.get(cap)
        return len(skipped.get(part) or []) if part else 0
    return len(skipped) if isinstance(skipped, list) else 0


def drawn_ids(holder: Mapping[str, Any], cap: str) -> list[Any] | None:
    """The ids the subset cap ``cap`` drew, as recorded in ``holder`` (None: not recorded)."""
    for name in SUBSET_IDS.get(cap, ()):
        ids = holder.get(name)
        if isinstance(ids, list):
            return ids
    return None


def cap_left_images_out(holder: Mapping[str, Any], cap: str, limit: Any, doc: Mapping) -> bool:
    """Whether the cap ``cap`` = ``limit`` recorded in ``holder`` really drew a subset: the
    ids it recorded (plus the unreadable ones skipped) reach the cap. A cap above the data's
    size draws every image, so the run scored the full data."""
    from hf_bgbench.tasks.subsets import left_images_out

    ids = drawn_ids(holder, cap)
    if ids is None:
        return True  # no ids recorded: assume it did
    return left_images_out(limit, ids, _skipped_count(doc.get("skipped"), cap))


def subset_reason(doc: Mapping[str, Any]) -> str:
    """Why ``doc`` did not run on the full data ("" when it did): a subset cap that left
    images out, variants of the data it did not score, mismatched-id filtering."""

    def caps(value: Any) -> Iterator[str]:
        if isinstance(value, Mapping):
            for k, v in value.items():
                if k in SUBSET_KEYS and v is not None:
                    if cap_left_images_out(value, k, v, doc):
                        yield f"{k}={v}"
                elif k != "report":
                    yield from caps(v)

    found = sorted(set(caps(doc)))
    if found:
        return f"it scored a seeded subset ({', '.join(found)})"
    if doc.get("mismatched_ids"):
        return "it scored only the images its variants share (mismatched ids)"
    scored, data = doc.get("variants"), doc.get("data")
    if isinstance(scored, Mapping) and isinstance(data, Mapping) and data.get("variants"):
        # the board ranks the headline numbers: a run that scored every variant they read
        # (IN-9's BG-GAP: original, mixed_same, mixed_rand) ranks with the same numbers as
        # one that scored all eight; the other variants' columns are left blank
        spec = _spec(doc.get("benchmark"))
        needed = set(spec.headline_variants) if spec is not None else set(data["variants"])
        left_out = [v for v in data["variants"] if v not in scored and v in needed]
        if left_out:
            return (
                f"it scored {len(scored)} of the {len(data['variants'])} variants the dataset "
                f"holds ({', '.join(left_out)} left out)"
            )
    return ""


def data_fingerprint(doc: Mapping[str, Any]) -> str:
    """The identity of the data a run scored: the document's own ``data.fingerprint`` when
    it records one, else a hash of its data description and the image counts it scored."""
    data = doc.get("data") or {}
    if isinstance(data, Mapping) and data.get("fingerprint"):
        return str(data["fingerprint"])
    counts = sorted((s.get("key"), s.get("n")) for s in doc.get("report", {}).get("scores", []))
    blob = json.dumps({"data": data, "counts": counts}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def protocol_label(doc: Mapping[str, Any]) -> str:
    """The protocol a run followed, as the leaderboard names it: the recipe's name (results
    ``protocol.name``), and the label protocol when it is not the published one."""
    protocol = doc.get("protocol")
    name = str(protocol.get("name") or "") if isinstance(protocol, Mapping) else ""
    labels = doc.get("label_protocol")
    if labels and labels != "published":
        name = f"{name} ({labels})" if name else str(labels)
    return name


def _spec(benchmark: Any) -> Any:
    """The registered benchmark ``benchmark`` (None for an unknown one)."""
    from hf_bgbench.benchmarks import get_benchmark

    try:
        return get_benchmark(str(benchmark))
    except Exception:
        return None


def _headlines(benchmark: str | None, task: str | None) -> list[Any]:
    """The benchmark's report headlines for ``task`` (none for an unknown benchmark)."""
    spec = _spec(benchmark)
    return spec.headlines(task) if spec is not None else []


def _published_columns(benchmark: Any, task: Any) -> list[tuple[str, str]]:
    """(score key, column label) of the numbers the benchmark's published rows give for
    ``task`` (a challenge's clean accuracy beside its challenge accuracy): a measured row
    fills the same columns, so the two can be read side by side."""
    spec = _spec(benchmark)
    if spec is None:
        return []
    labels = {h.key: h.label for h in spec.report}
    out: list[tuple[str, str]] = []
    for ref in spec.references:
        if ref.task == task:
            out += [(k, ref.labels.get(k) or labels.get(k) or k) for k in ref.scores]
    return out


def scored_data(doc: Mapping[str, Any]) -> str:
    """What a run scored, as a model card names it (:func:`hf_bgbench.hub.card.scored_dataset`):
    the benchmark's Hub id only for its published Hub dataset, else ``local-<fingerprint>``
    (or another Hub dataset's id)."""
    from hf_bgbench.hub.card import scored_dataset

    spec = _spec(doc.get("benchmark"))
    if spec is None:
        return ""
    return scored_dataset(doc.get("data"), title=spec.short_name, hub_repo=spec.hub_repo)["type"]


def on_published_benchmark(row: Mapping[str, Any]) -> bool:
    """Whether ``row`` is a number on the published benchmark -- a published row, or a run
    on the benchmark's published Hub dataset -- and so may be ranked beside the papers'
    numbers. A run on a local copy or sample (or an older row that did not record what it
    scored) is not."""
    if row.get("source") == "published":
        return True
    spec = _spec(row.get("benchmark"))
    return spec is not None and bool(row.get("scored")) and row.get("scored") == spec.hub_repo


def _row_scores(doc: Mapping[str, Any]) -> tuple[dict, dict, dict]:
    """(label -> value, label -> [lo, hi], label -> unit) of the numbers the leaderboard
    ranks, in display units: the benchmark's report headlines for the task, picked as the
    report card picks them (:func:`_headline_numbers`), else the scores the report marks
    headline; then the numbers its published rows give for the task."""
    scores = [s for s in doc.get("report", {}).get("scores", []) if s.get("value") is not None]
    picked = _headline_numbers(doc)
    if not picked:
        picked = [
            _shown(s.get("short") or s.get("label") or s["key"], s)
            for s in scores
            if s.get("headline")
        ]
    for key, label in _published_columns(doc.get("benchmark"), doc.get("task")):
        found = [s for s in scores if s.get("key") == key]
        if found and label not in [p[0] for p in picked]:
            picked.append(_shown(label, found[0]))
    values, intervals, units = {}, {}, {}
    for label, value, bounds, unit in picked:
        if label in values:
            continue
        # kept to 6 decimals and rounded once, when shown (two roundings moved 74.049 to 74.1)
        values[label] = round(value, 6)
        units[label] = unit
        if bounds:
            intervals[label] = [round(b, 6) for b in bounds]
    return values, intervals, units


Number = tuple[str, float, "list[float] | None", str]
"""(label, value, 95% interval or None, unit) of one number of a row, in display units."""


def _headline_numbers(doc: Mapping[str, Any]) -> list[Number]:
    """The benchmark's report headlines for the document's task that the document scores,
    as the report card reads them (:func:`hf_bgbench.report.headlines.headline_rows`: a
    ``worst`` headline is the largest of the scores under its key)."""
    spec = _spec(doc.get("benchmark"))
    if spec is None:
        return []
    headlines = spec.headlines(doc.get("task"))
    rows = headline_rows(spec, {h.task: doc for h in headlines}, headlines)
    return [  # a number over a sample says so, beside full-set published ones
        (row["label"] + (" (a sample)" if row.get("sample") else ""), *_value_of(row))
        for row in rows
        if row["status"] == "run" and row["value"] is not None
    ]


def _value_of(row: Mapping[str, Any]) -> tuple[Any, Any, Any]:
    return row["value"], row["ci95"], row["unit"]


def _shown(label: str, score: Mapping[str, Any]) -> Number:
    """A results score as a :data:`Number`, in the display unit of its own unit."""
    scale = DISPLAY_SCALE.get(score.get("unit"), 1.0)
    bounds = score.get("ci95")
    return (
        label,
        float(score["value"]) * scale,
        [float(b) * scale for b in bounds] if bounds else None,
        score.get("unit", ""),
    )


def row_from_results(doc: Mapping[str, Any], dataset: str) -> dict[str, Any]:
    """The leaderboard row of a results document (``dataset``: the allow-list name)."""
    scores, intervals, units = _row_scores(doc)
    counts = [s.get("n") for s in doc.get("report", {}).get("scores", []) if s.get("n")]
    return {
        "source": "measured",
        "model": doc.get("model"),
        "model_resolved": doc.get("model_resolved"),
        "benchmark": doc.get("benchmark"),
        "task": doc.get("task"),
        "dataset": dataset,
        "protocol": protocol_label(doc),
        "data_fingerprint": data_fingerprint(doc),
        "scored": scored_data(doc),
        "n_images": max(counts) if counts else None,
        "hf_bgbench_version": doc.get("hf_bgbench_version"),
        "label_protocol": doc.get("label_protocol"),
        "date": str(doc.get("created", ""))[:10],
        "scores": scores,
        "intervals": intervals,
        "units": units,
    }


def rows_from_results_dataset(repo_id: str) -> list[dict[str, Any]]:
    """The rows of a Hub dataset written by ``bgbench publish-results``, read by its id
    (its ``runs/<model>/<benchmark>/<task>/*.json`` results documents, through the Hub
    cache): one per full run, sourced "results <repo_id>"; runs on a subset are left out, as
    on the Space's own board. An unreachable Hub gives no rows (logged), never an error."""
    import logging

    from huggingface_hub import snapshot_download

    from hf_bgbench.benchmarks import get_benchmark
    from hf_bgbench.hub.card import scored_dataset
    from hf_bgbench.hub.errors import is_hub_unreachable

    try:
        root = snapshot_download(repo_id, repo_type="dataset", allow_patterns=["runs/*/*/*/*.json"])
    except Exception as err:
        if not is_hub_unreachable(err):
            raise
        logging.getLogger(__name__).warning("results dataset %s cannot be read: %s", repo_id, err)
        return []
    rows = []
    for path in sorted(Path(root).glob("runs/*/*/*/*.json")):
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            continue
        if not isinstance(doc, dict) or "task" not in doc or "schema_version" not in doc:
            continue
        if subset_reason(doc):
            continue
        spec = get_benchmark(doc["benchmark"])
        named = scored_dataset(doc.get("data"), title=spec.short_name, hub_repo=spec.hub_repo)
        row = row_from_results(doc, named["type"])
        row["source"] = f"results {repo_id}"
        row["link"] = HUB_FILES.format(repo=repo_id, path=path.relative_to(root).as_posix())
        rows.append(row)
    return rows


def results_repo_rows() -> list[dict[str, Any]]:
    """The rows of every results dataset the operator lists in ``BGBENCH_RESULTS_REPOS``
    (comma-separated Hub ids)."""
    repos = [r.strip() for r in os.environ.get(RESULTS_REPOS_ENV, "").split(",") if r.strip()]
    return [row for repo in repos for row in rows_from_results_dataset(repo)]


def read_rows(folder: str | Path) -> list[dict[str, Any]]:
    path = Path(folder) / ROWS_FILE
    if not path.is_file():
        return []
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _write_rows(folder: Path, rows: list[dict[str, Any]]) -> None:
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".rows-", suffix=".jsonl")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, sort_keys=True) + "\n")
    os.replace(tmp, folder / ROWS_FILE)


def append_result(
    folder: str | Path, doc: Mapping[str, Any], dataset: str, repo_id: str | None = None
) -> dict[str, Any]:
    """Add (or replace: same key) the row of ``doc``; :class:`NotEligible` for a subset
    run. With ``repo_id``, the Hub dataset's rows are pulled first and pushed after."""
    reason = subset_reason(doc)
    if reason:
        raise NotEligible(
            f"Not added to the leaderboard: {reason}. Only runs on the full dataset are."
        )
    row = row_from_results(doc, dataset)
    folder = Path(folder)
    with _locked(folder):
        if repo_id:
            pull(folder, repo_id)
        row["files"] = _write_run_files(folder, row, doc)
        rows = [r for r in read_rows(folder) if [r.get(k) for k in KEY] != [row[k] for k in KEY]]
        rows.append(row)
        _write_rows(folder, rows)
        if repo_id:
            push(folder, repo_id, row["files"])
    return row


def _write_run_files(folder: Path, row: Mapping[str, Any], doc: Mapping[str, Any]) -> str:
    """Keep the row's results document and its Markdown report (figures left out: the
    report's own files are the run's) under ``runs/<row id>/``; the folder, relative."""
    from hf_bgbench.render import render_markdown

    key = "\x1f".join(str(row.get(k)) for k in KEY)
    relative = f"{RUNS_FOLDER}/{hashlib.sha256(key.encode()).hexdigest()[:16]}"
    target = folder / relative
    target.mkdir(parents=True, exist_ok=True)
    stem = str(doc.get("task") or "results")
    (target / f"{stem}.json").write_text(json.dumps(doc, indent=2, default=str) + "\n")
    try:
        report = render_markdown(dict(doc))
    except (KeyError, TypeError, ValueError) as err:  # its row links to the JSON alone
        logging.getLogger(__name__).warning(
            "leaderboard row %s: its report cannot be rendered (%r); kept as JSON only",
            relative,
            err,
        )
        return relative
    kept = [line for line in report.splitlines() if not line.lstrip().startswith("![")]
    (target / f"{stem}.md").write_text("\n".join(kept) + "\n")
    return relative


def pull(folder: Path, repo_id: str) -> bool:
    """Replace the local rows with the Hub dataset's (merged: local rows not there kept)."""
    from huggingface_hub import hf_hub_download

    from hf_bgbench.space.checks.model_weights import hub_offline

    if hub_offline():
        return False
    try:
        path = hf_hub_download(repo_id, ROWS_FILE, repo_type="dataset")
    except Exception as err:  # no file yet, or no Hub: keep the local rows
        if type(err).__name__ in ("EntryNotFoundError", "RemoteEntryNotFoundError"):
            return False
        from hf_bgbench.hub.errors import is_hub_unreachable

        if is_hub_unreachable(err):
            return False
        raise
    remote = read_rows(Path(path).parent)
    keys = {tuple(r.get(k) for k in KEY) for r in remote}
    local = [r for r in read_rows(folder) if tuple(r.get(k) for k in KEY) not in keys]
    _write_rows(folder, remote + local)
    return True


def push(folder: Path, repo_id: str, files: str | None = None) -> bool:
    """Upload ``rows.jsonl`` (and the row's folder ``files``, relative) to the Hub dataset
    ``repo_id`` (created if missing)."""
    from huggingface_hub import CommitOperationAdd, HfApi

    from hf_bgbench.space.checks.model_weights import hub_offline

    if hub_offline():
        return False
    api = HfApi()
    api.create_repo(repo_id, repo_type="dataset", exist_ok=True)
    # one commit: the rows never point at files the Hub does not hold yet
    paths = [folder / ROWS_FILE]
    if files and (folder / files).is_dir():
        paths += sorted(p for p in (folder / files).iterdir() if p.is_file())
    api.create_commit(
        repo_id,
        [CommitOperationAdd(p.relative_to(folder).as_posix(), str(p)) for p in paths],
        commit_message="bgbench Space: leaderboard row",
        repo_type="dataset",
    )
    return True


def _cell(value: Any, bounds: Any, unit: str | None) -> str:
    """A score as the board shows it: one decimal (% and points; three otherwise) and its
    95% interval when the row has one. ``unit`` None: a published number whose unit the
    board does not know, printed as its source prints it (95.6, not 95.600)."""
    from hf_bgbench.formatting import interval, number

    if value is None:
        return ""
    if unit is None:
        return f"{float(value):g}"
    scale = DISPLAY_SCALE.get(unit, 1.0)
    text = number(float(value) / scale, unit)
    if bounds:
        text += " " + interval([float(b) / scale for b in bounds], unit)
    return text


def _header(label: str, unit: str) -> str:
    return f"{label} ({UNIT_NAMES[unit]})" if unit in UNIT_NAMES else label


def table(
    rows: list[dict[str, Any]],
    *,
    benchmark: str | None = None,
    task: str | None = None,
    model: str = "",
    published: bool = True,
    scope: str | None = None,
    links: Callable[[Mapping[str, Any]], str] | None = None,
) -> tuple[list[str], list[list[Any]]]:
    """Headers and rows for the leaderboard view, the key columns first (what a phone shows
    before it scrolls sideways): the model, the score columns of the selected rows (the
    benchmark's report headlines first), each header with its unit and each cell with its
    95% interval (measured rows) at one decimal; then source (published / measured),
    dataset and protocol; with ``links``, last, a "results" column (``links(row)``: the
    row's report and files as Markdown links). The best first by the first headline score.

    ``scope``: ``"benchmark"`` -- the rows on the published benchmark
    (:func:`on_published_benchmark`: the papers' numbers and runs on the benchmark's Hub
    dataset), ranked together; ``"other"`` -- the runs on other data (a local copy, a
    sample), ranked apart and never beside the papers' numbers, each with its image count
    and data fingerprint; None: every row."""
    chosen = [*(published_rows() if published and scope != "other" else []), *rows]
    chosen = [
        r
        for r in chosen
        if (not benchmark or r.get("benchmark") == benchmark)
        and (not task or r.get("task") == task)
        and model.strip().lower() in str(r.get("model", "")).lower()
        and (scope is None or on_published_benchmark(r) == (scope == "benchmark"))
    ]
    info = INFO_COLUMNS + (SAMPLE_COLUMNS if scope == "other" else [])
    headlines = _headlines(benchmark, task) if benchmark and task else []
    score_cols, units = _score_columns(headlines, chosen)
    chosen = _best_first(chosen, headlines, score_cols)
    ranking = _ranking_headline(headlines, score_cols)
    if ranking is not None:  # the number the board ranks by next to the model
        score_cols = [ranking.label, *(c for c in score_cols if c != ranking.label)]

    def unit(r: Mapping[str, Any], c: str) -> str | None:
        known = (r.get("units") or {}).get(c, units.get(c))
        return known if known is not None or r.get("source") != "published" else None

    values = [
        [_info(r, info[0])]
        + [
            _cell(r["scores"].get(c), (r.get("intervals") or {}).get(c), unit(r, c))
            for c in score_cols
        ]
        + [_info(r, c) for c in info[1:]]
        + ([links(r)] if links else [])
        for r in chosen
    ]
    headers = [info[0], *(_header(c, units.get(c, "")) for c in score_cols), *info[1:]]
    return headers + (["results"] if links else []), values


def _score_columns(headlines: list[Any], rows: list[dict[str, Any]]) -> tuple[list, dict]:
    """(the score columns of ``rows``, the report headlines' first, column -> its unit)."""
    units = {h.label: h.unit for h in headlines if not getattr(h, "worst", False)}
    units.update({h.label: h.unit for h in headlines if getattr(h, "worst", False)})
    columns = [h.label for h in headlines if any(h.label in r.get("scores", {}) for r in rows)]
    for r in rows:
        columns += [c for c in r.get("scores", {}) if c not in columns]
        for c, u in (r.get("units") or {}).items():
            units.setdefault(c, u)
    return columns, units


def _ranking_headline(headlines: list[Any], columns: list[str]) -> Any:
    """The headline the board ranks by: the benchmark's measure of reliance (a gap, a
    drop), else its first ranked score; None when no column is one."""
    ranked = [h for h in headlines if h.label in columns and h.reliance]
    return next((h for h in ranked if h.reliance > 0), ranked[0] if ranked else None)


def _best_first(
    rows: list[dict[str, Any]], headlines: list[Any], columns: list[str]
) -> list[dict[str, Any]]:
    """``rows`` ranked by the benchmark's measure of reliance (a gap, a drop), else its first
    ranked score: the least reliance on the background first (as they are when none)."""
    first = _ranking_headline(headlines, columns)
    if first is None:
        return rows

    def rank(r: dict[str, Any]) -> tuple[bool, float]:
        value = r.get("scores", {}).get(first.label)
        return (value is None, first.reliance * float(value or 0.0))

    return sorted(rows, key=rank)


def row_links(row: Mapping[str, Any], folder: Path, repo_id: str | None = None) -> str:
    """Where a row's numbers come from, as Markdown links: a published row's paper; a run's
    report and results document (served by the Space from ``folder``, else from the Hub
    dataset ``repo_id`` the rows are kept in); a results dataset's document on the Hub."""
    if row.get("source") == "published":
        return f"[paper]({row['link']})" if row.get("link") else ""
    files = row.get("files")
    if files:
        stem = str(row.get("task") or "results")
        local = (folder / files).resolve()
        links = []
        for label, suffix in (("report", ".md"), ("JSON", ".json")):
            path = local / f"{stem}{suffix}"
            if path.is_file():
                links.append(f"[{label}](/gradio_api/file={path})")
            elif repo_id:
                url = HUB_FILES.format(repo=repo_id, path=f"{files}/{stem}{suffix}")
                links.append(f"[{label}]({url})")
        return " · ".join(links)
    return f"[JSON]({row['link']})" if row.get("link") else ""


def _info(row: Mapping[str, Any], column: str) -> str:
    if column == "images":
        n = row.get("n_images")
        return f"{int(n):,}" if n else "?"
    if column == "data fingerprint":
        return str(row.get("data_fingerprint") or "?")[:12]
    return row.get(column, "") or ""
