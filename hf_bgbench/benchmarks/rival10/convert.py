"""Convert the official RIVAL10 release (SPEC §2) into a Hub dataset folder.

``convert_rival10_release(src, output, spec=...)`` is what ``bgbench convert rival10`` and
``dataset_scripts/rival10.py`` run. The output has one config, ``ordinary`` (the default),
with splits ``train`` and ``test``, in the schema of :mod:`hf_bgbench.benchmarks.rival10.release`
(reading is :mod:`hf_bgbench.benchmarks.rival10.items`, the same code the reader uses).

- **Skipped, not fatal:** an image missing a companion file (``.npy`` / ``.pkl`` / merged
  mask), with an unreadable file, or with a wnid outside RIVAL10 is skipped; every skip is
  counted by reason and listed (file and why) in ``build_report.json`` and the card. A
  release that loses a few files is still usable; the report says exactly what is missing.
- **Fatal:** a pickle that asks for any class or function (:class:`UnsafePickleError`):
  the release has been tampered with, and nothing from it should be trusted; a split left
  with no image at all; a release without both splits.
- **Byte-reproducible:** image bytes are stored unchanged, masks as PNG with fixed settings,
  rows sorted by (label, id), Parquet without timestamps: the same release gives the same
  files whatever ``workers``.
- **Parallel and resumable:** each shard is one task (worker processes with ``workers``
  > 1); a finished shard is not redone when an interrupted conversion is run again (its
  report entries wait in ``<output>/.bgbench-work/rival10/``, deleted after success).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hf_bgbench.benchmarks.rival10.card import write_rival10_card
from hf_bgbench.benchmarks.rival10.items import COMPANION_SUFFIXES, ItemError, ItemFiles, read_item
from hf_bgbench.benchmarks.rival10.release import (
    SPLITS,
    VARIANT_DIRNAME,
    Rival10LayoutError,
    find_rival10_root,
    list_items,
    release_splits,
    rival10_features,
)
from hf_bgbench.builders.report import (
    REPORT_FORMAT,
    REPORT_NAME,
    WORK_DIRNAME,
    read_report,
    write_json,
)
from hf_bgbench.builders.shards import Runner, clear_stale, plan, shard_bounds, write_shard
from hf_bgbench.data import hub
from hf_bgbench.files import decode_settings, ensure_writable_dir
from hf_bgbench.spec import BenchmarkSpec

CONFIG = VARIANT_DIRNAME
WORK_NAME = "rival10"
NOTE_KINDS = ("resized", "masks_of_absent", "present_without_mask", "unknown_keys")


class ConvertError(ValueError):
    """The conversion cannot run as asked (another conversion in the folder, nothing kept)."""


@dataclass(frozen=True)
class ShardTask:
    items: tuple[ItemFiles, ...]
    root_parent: str  # stripped from messages, so the report names files inside RIVAL10/


def convert_shard(task: ShardTask) -> tuple[dict[str, list], dict[str, Any]]:
    """Worker: read every item of one shard -> (columns, shard report)."""
    from hf_bgbench.benchmarks.rival10.items import RIVAL10_COLUMNS

    cols: dict[str, list] = {c: [] for c in RIVAL10_COLUMNS}
    skipped: dict[str, list[str]] = {}
    notes: dict[str, list[str]] = {k: [] for k in NOTE_KINDS}
    prefix = task.root_parent.rstrip(os.sep) + os.sep
    for item in task.items:
        try:
            row, item_notes = read_item(item)
        except ItemError as err:
            skipped.setdefault(err.reason, []).append(str(err).replace(prefix, ""))
            continue
        for c in RIVAL10_COLUMNS:
            cols[c].append(row[c])
        for k, v in item_notes.items():
            notes[k].extend(s.replace(prefix, "") for s in v)
    present = Counter(a for attrs in cols["attributes"] for a, on in attrs.items() if on)
    report = {"skipped": skipped, "notes": notes, "labels": cols["label"]}
    return cols, {**report, "attributes": dict(sorted(present.items()))}


def _items_digest(items: list[ItemFiles]) -> str:
    h = hashlib.sha256()
    for it in items:
        sizes = [os.path.getsize(it.image)]
        sizes += [os.path.getsize(it.companion(s)) for s in COMPANION_SUFFIXES]
        h.update(f"{it.stem}\t{it.label}\t{sizes}\n".encode())
    return h.hexdigest()


def convert_rival10_release(
    src: str | Path,
    output: str | Path,
    *,
    spec: BenchmarkSpec,
    workers: int = 1,
    shard_size: int = 1000,
    overwrite: bool = False,
    progress: bool = True,
    keep_work: bool = False,
    source_sha256: str | None = None,
) -> dict[str, Any]:
    """Write the release at ``src`` (``RIVAL10`` or its parent) as a Hub folder at ``output``
    for ``spec`` (the rival10 spec).

    Returns the report (also written to ``build_report.json``)."""
    if workers < 0 or shard_size < 1:
        raise ConvertError(
            "--workers must be 0 or more (0 or 1: in the main process) and --shard-size at least 1."
        )
    root = find_rival10_root(src)
    missing = [s for s in SPLITS if s not in release_splits(root)]
    if missing:
        raise Rival10LayoutError(
            f"The RIVAL10 release at {root} is incomplete: no "
            + ", ".join(f"{s}/{VARIANT_DIRNAME}/" for s in missing)
            + f". The release has both {' and '.join(SPLITS)}; unzip rival10.zip again."
        )
    listed = {split: list_items(root, split) for split in SPLITS}
    params = {
        "benchmark": "rival10",
        "shard_size": shard_size,
        "items_sha256": {s: _items_digest(items) for s, (items, _) in listed.items()},
        **decode_settings(),  # which images decode (none at the default limit)
    }
    output = Path(output)
    ensure_writable_dir(output, "OUTPUT")
    work = output / WORK_DIRNAME / WORK_NAME
    report = _check_previous(output, work, params, overwrite)
    if report and all((output / p).is_file() for p in _report_shards(report)):
        return {**report, "reused": True}
    work.mkdir(parents=True, exist_ok=True)
    write_json(work / "params.json", params)

    features = rival10_features(spec.classes)
    splits_report: dict[str, Any] = {}
    with Runner(workers, progress) as runner:
        for split in SPLITS:
            items, skipped = listed[split]
            splits_report[split] = _convert_split(
                runner, split, items, skipped, root, output, work, features, shard_size
            )
    report = {
        "format": REPORT_FORMAT,
        "benchmark": spec.name,
        "source": {"kind": "rival10-release", "sha256": source_sha256},
        "parameters": params,
        "splits": splits_report,
    }
    write_json(output / REPORT_NAME, report)
    write_rival10_card(output, spec, report)
    if not keep_work:
        shutil.rmtree(work, ignore_errors=True)
        if (output / WORK_DIRNAME).is_dir() and not any((output / WORK_DIRNAME).iterdir()):
            (output / WORK_DIRNAME).rmdir()
    return report


def _report_shards(report: dict[str, Any]) -> list[str]:
    return [p for rep in report.get("splits", {}).values() for p in rep.get("shards", [])]


def _check_previous(
    output: Path, work: Path, params: dict[str, Any], overwrite: bool
) -> dict[str, Any]:
    """The report of an identical earlier conversion ({} if none); refuses to mix with a
    different one (another release, other options, or an IN-9 build) unless ``overwrite``."""
    report = read_report(output)
    work_params = work / "params.json"
    earlier = report.get("parameters") if report else None
    if report and report.get("benchmark") != "rival10":
        earlier = {"benchmark": report.get("benchmark")}
    if earlier is None and work_params.is_file():
        earlier = json.loads(work_params.read_text(encoding="utf-8"))
    if earlier is None and (output / "data").is_dir() and any((output / "data").iterdir()):
        earlier = {"benchmark": "unknown"}
    if earlier is not None and earlier != params:
        if not overwrite:
            raise ConvertError(
                f"{output} already holds another conversion or build ({REPORT_NAME} / "
                f"{work_params} / data/ differ from this release and options); use "
                "--overwrite to replace it, or another OUTPUT folder."
            )
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(output / "data", ignore_errors=True)
        (output / REPORT_NAME).unlink(missing_ok=True)
        return {}
    return report if earlier == params and report else {}


def _convert_split(
    runner: Runner,
    split: str,
    items: list[ItemFiles],
    listing_skips: dict[str, list[str]],
    root: Path,
    output: Path,
    work: Path,
    features: Any,
    shard_size: int,
) -> dict[str, Any]:
    num = plan(len(items), shard_size)
    paths = hub.shard_paths(CONFIG, split, num)
    clear_stale(output, CONFIG, split, paths)
    sidecar = [work / f"{split}-{i:05d}.json" for i in range(num)]
    tasks = [
        (index, ShardTask(tuple(items[lo:hi]), str(root.parent)))
        for index, (lo, hi) in enumerate(shard_bounds(len(items), num))
        if not ((output / paths[index]).is_file() and sidecar[index].is_file())
    ]
    results = runner.map(convert_shard, [t for _, t in tasks], f"{split}: convert", "shard")
    for (index, _), (cols, shard_report) in zip(tasks, results, strict=True):
        write_json(sidecar[index], shard_report)
        write_shard(output, CONFIG, split, index, num, cols, features)
    return _split_report(split, items, listing_skips, sidecar, paths)


def _split_report(
    split: str,
    items: list[ItemFiles],
    listing_skips: dict[str, list[str]],
    sidecars: list[Path],
    paths: list[str],
) -> dict[str, Any]:
    from hf_bgbench.benchmarks.rival10.labels import rival10_attributes, rival10_classes

    classes = rival10_classes()
    skipped = {k: [f"{split}/{VARIANT_DIRNAME}/{m}" for m in v] for k, v in listing_skips.items()}
    notes: dict[str, list[str]] = {k: [] for k in NOTE_KINDS}
    labels: Counter = Counter()
    attributes: Counter = Counter()
    for path in sidecars:
        shard = json.loads(path.read_text(encoding="utf-8"))
        for k, v in shard["skipped"].items():
            skipped.setdefault(k, []).extend(v)
        for k, v in shard["notes"].items():
            notes[k].extend(v)
        labels.update(shard["labels"])
        attributes.update(shard["attributes"])
    kept = sum(labels.values())
    if not kept:
        raise ConvertError(
            f"No image of split {split!r} could be converted ({len(items)} found; skipped: "
            + "; ".join(f"{k} {len(v)}, e.g. {v[0]}" for k, v in skipped.items())
            + "). Check the release (unzip rival10.zip again)."
        )
    return {
        "found": len(items) + sum(len(v) for v in listing_skips.values()),
        "kept": kept,
        "per_class": {classes[k]: labels[k] for k in range(len(classes))},
        "attributes_present": {a: attributes[a] for a in rival10_attributes()},
        "skipped": {k: len(v) for k, v in sorted(skipped.items())},
        "skipped_items": {k: sorted(v) for k, v in sorted(skipped.items())},
        "notes": {k: len(v) for k, v in notes.items()},
        "note_items": {k: sorted(v) for k, v in notes.items() if v},
        "shards": paths,
    }


def summary_lines(report: dict[str, Any]) -> list[str]:
    """A few lines for the terminal after a conversion."""
    from hf_bgbench.benchmarks.rival10.labels import rival10_classes

    lines = (
        ["already converted from the same release; nothing to do"] if report.get("reused") else []
    )
    for split in SPLITS:
        rep = report["splits"][split]
        counts = ", ".join(f"{k} {rep['per_class'].get(k, 0)}" for k in rival10_classes())
        lines.append(f"{split}: kept {rep['kept']} of {rep['found']} images ({counts})")
        skipped = {k: v for k, v in rep["skipped"].items() if v}
        if skipped:
            shown = ", ".join(f"{k} {v}" for k, v in skipped.items())
            lines.append(f"{split}: skipped {shown} (listed in build_report.json and the card)")
    return lines
