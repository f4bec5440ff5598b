"""Check a benchmark dataset repo (a local folder or a Hub id) against what it needs.

What is checked comes from the benchmark spec (its variants and classes) and, for built
benchmarks, from its layout (:class:`hf_bgbench.spec.BuiltLayout`: image size, mask column,
required splits, balance, background rules, benchmark row checks such as RIVAL10's attributes):
the card declares every variant config (with the layout's splits) and their files exist;
no variant is empty; split sizes match the card; label names and ranges; unique ids, the
same, in the same order, in every variant of a split; balanced classes (where the layout
says so); each mask is an "L" 0/255 image of the image's size and is the same in every
variant; every variant image has the layout's size; each mixed variant's background follows
its rule and is never the row's own photo. The benchmark is one of the specs the caller
passes (``bgbench validate``: the registry's): the one named, else the one
``build_report.json`` or the card's tags name, else the one whose class names the labels
carry. Every image and mask is decoded whole, through the one guarded decode path (a broken
file is named by its shard, row id and column). Reads the Parquet shards directly (no
``datasets`` cache copy), so it is cheap to run after every build.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import datasets
import numpy as np
import pyarrow.parquet as pq

from hf_bgbench.data import hub
from hf_bgbench.data.imagefolder import is_image_folder
from hf_bgbench.files import REPORT_NAME, ImageDecodeError, open_image
from hf_bgbench.hub.errors import is_hub_unreachable
from hf_bgbench.spec import (
    NEXT_CLASS,
    RULE_TEXT,
    SAME_CLASS,
    BenchmarkSpec,
    BuiltLayout,
    find_spec,
    next_class,
    resolve_hook,
)

EXAMPLES = 3


class DatasetNotFoundError(FileNotFoundError):
    """Neither a local folder nor a Hub dataset that can be reached."""


@dataclass
class ValidationResult:
    folder: Path
    benchmark: str | None = None
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    rows: dict[str, dict[str, int]] = field(default_factory=dict)  # config -> split -> rows

    @property
    def ok(self) -> bool:
        return not self.problems


def _release_check(
    folder: Path, by_name: dict[str, BenchmarkSpec], benchmark: str | None
) -> ValidationResult | None:
    """The result of a benchmark's own check of its release layout (its ``validate_release``
    hook: ``function(folder, spec) -> ValidationResult | None``, None when the folder is not
    that layout), for the benchmark named or, without one, the first whose layout it is."""
    specs = [find_spec(by_name, benchmark)] if benchmark else list(by_name.values())
    for spec in specs:
        check = spec.hook("validate_release")
        found = check(folder, spec) if check is not None else None
        if found is not None:
            return found
    return None


def resolve_folder(target: str | Path) -> Path:
    """A local folder as is; otherwise a Hub dataset id, downloaded (or read from cache)."""
    path = Path(target)
    if path.is_dir():
        return path
    if path.exists() or str(target).count("/") != 1:
        raise DatasetNotFoundError(f"{target}: not a folder nor a Hub dataset id (owner/name).")
    from huggingface_hub import snapshot_download

    try:
        return Path(snapshot_download(repo_id=str(target), repo_type="dataset"))
    except Exception as err:  # offline, unknown repo, no access: all mean "cannot read it"
        first = (str(err).strip().splitlines() or [""])[0][:200]
        if is_hub_unreachable(err):
            raise DatasetNotFoundError(
                f"{target}: not a local folder, and the Hugging Face Hub cannot be reached to "
                f"fetch it ({type(err).__name__}: {first}). Offline (HF_HUB_OFFLINE=1) only "
                "cached repos work: fetch it once online, or pass a local folder."
            ) from None
        raise DatasetNotFoundError(
            f"{target}: not a local folder, and not a Hub dataset you can read "
            f"({type(err).__name__}: {first}). Check the id, or log in (`hf auth login`) if "
            "it is private or gated."
        ) from None


def _card_benchmark(
    folder: Path, meta: dict[str, Any], specs: dict[str, BenchmarkSpec]
) -> BenchmarkSpec | None:
    """The benchmark a folder says it holds: ``build_report.json``'s ``benchmark``, else the
    card's tags (a benchmark name among them)."""
    report = folder / REPORT_NAME
    if report.is_file():
        try:
            name = json.loads(report.read_text(encoding="utf-8")).get("benchmark")
        except (ValueError, AttributeError):
            name = None
        if name in specs:
            return specs[name]
    tagged = [t for t in meta.get("tags") or [] if t in specs]
    return specs[tagged[0]] if len(tagged) == 1 else None


def _infer_spec(
    features: datasets.Features, configs: list[str], specs: dict[str, BenchmarkSpec]
) -> BenchmarkSpec | None:
    """The benchmark whose class names the labels carry; when several share them (e.g. two
    labelled in ImageNet-1k), the one whose variants the configs name most (ties: the first
    by name)."""
    label = features.get("label")
    if not isinstance(label, datasets.ClassLabel):
        return None
    names = [n.lower() for n in label.names]
    matches = [spec for spec in specs.values() if [n.lower() for n in spec.classes] == names]
    if not matches:
        return None
    return max(matches, key=lambda spec: len(set(spec.variants) & set(configs)))


def _files(folder: Path, entry: dict[str, Any]) -> dict[str, list[Path]]:
    """split -> the Parquet files a ``configs:`` entry points at."""
    out: dict[str, list[Path]] = {}
    data_files = entry.get("data_files", [])
    if isinstance(data_files, str):
        data_files = [{"split": "train", "path": data_files}]
    for item in data_files:
        paths = item["path"] if isinstance(item["path"], list) else [item["path"]]
        out[item["split"]] = sorted(p for pattern in paths for p in folder.glob(pattern))
    return out


@dataclass
class _Split:
    ids: list[str] = field(default_factory=list)
    labels: list[int] = field(default_factory=list)
    bg_ids: list[str] = field(default_factory=list)
    bg_labels: list[int] = field(default_factory=list)
    mask_hashes: list[str] = field(default_factory=list)


def _scan_split(
    files: list[Path],
    where: str,
    result: ValidationResult,
    size: tuple[int, int] | None,
    mask_column: str = "mask",
) -> _Split:
    """Read one config/split; ``size``: what every image must measure (None: not checked);
    ``mask_column``: the foreground mask column (checked when present)."""
    out = _Split()
    found = _ImageFindings()
    wanted = ("id", "label", "image", mask_column, "bg_id", "bg_label")
    for path in files:
        parquet = pq.ParquetFile(path)
        names = parquet.schema_arrow.names
        columns = [c for c in wanted if c in names]
        for batch in parquet.iter_batches(batch_size=256, columns=columns):
            data = batch.to_pydict()
            for i, image_id in enumerate(data["id"]):
                out.ids.append(image_id)
                out.labels.append(data["label"][i])
                out.bg_ids.append(data["bg_id"][i] if "bg_id" in data else "")
                out.bg_labels.append(data["bg_label"][i] if "bg_label" in data else -1)
                mask_hash = _check_row(data, i, path, size, mask_column, found)
                out.mask_hashes.append(mask_hash)
    found.report(where, size, result)
    return out


class _ImageFindings:
    """The images and masks of one config/split found wrong, by kind of fault."""

    def __init__(self) -> None:
        self.bad_size: list[str] = []  # ids of images not of the layout's size
        self.bad_mask: list[str] = []  # ids of masks not 'L' with values 0/255
        self.mismatched: list[str] = []  # ids of masks not of their image's size
        self.undecodable: list[str] = []  # the decode errors' messages

    def report(self, where: str, size: tuple[int, int] | None, result: ValidationResult) -> None:
        """Each kind of fault found, said as one problem of ``result`` with examples."""
        if self.undecodable:
            result.problems.append(
                f"{where}: {len(self.undecodable)} image(s) cannot be decoded: "
                + "; ".join(self.undecodable[:EXAMPLES])
                + (" ..." if len(self.undecodable) > EXAMPLES else "")
            )
        if self.bad_size and size is not None:
            result.problems.append(
                f"{where}: {len(self.bad_size)} image(s) are not {size[0]}x{size[1]}, "
                f"e.g. {self.bad_size[:EXAMPLES]}"
            )
        if self.mismatched:
            result.problems.append(
                f"{where}: {len(self.mismatched)} mask(s) differ in size from their image, "
                f"e.g. {self.mismatched[:EXAMPLES]}"
            )
        if self.bad_mask:
            result.problems.append(
                f"{where}: {len(self.bad_mask)} mask(s) are not 'L' images with values 0/255, "
                f"e.g. {self.bad_mask[:EXAMPLES]}"
            )


def _check_row(
    data: dict[str, list[Any]],
    i: int,
    path: Path,
    size: tuple[int, int] | None,
    mask_column: str,
    found: _ImageFindings,
) -> str:
    """Decode row ``i``'s image and mask (whole: a truncated file is found here, not when
    scored), their faults added to ``found``; the mask's hash ("" when it has none)."""
    image_id = data["id"][i]
    try:
        img_size = open_image(data["image"][i], _row(path, image_id, "image")).size
    except ImageDecodeError as err:
        found.undecodable.append(str(err))
        return ""
    if size is not None and img_size != size:
        found.bad_size.append(image_id)
    if mask_column not in data or data[mask_column][i] is None:
        return ""
    where_mask = _row(path, image_id, mask_column)
    try:
        m = open_image(data[mask_column][i], where_mask, eight_bits=False)
    except ImageDecodeError as err:
        found.undecodable.append(str(err))
        return ""
    arr, mode = np.asarray(m), m.mode
    if arr.shape[::-1][:2] != img_size:
        found.mismatched.append(image_id)
    if mode != "L" or not set(np.unique(arr).tolist()) <= {0, 255}:
        found.bad_mask.append(image_id)
    return hashlib.sha1(arr.tobytes()).hexdigest()


def _row(path: Path, image_id: str, column: str) -> str:
    """How a message names one cell: the Parquet file, the row's id and the column."""
    return f"{path.name}, id {image_id!r}, column {column!r}"


def _check_labels(split: _Split, spec: BenchmarkSpec, where: str, result: ValidationResult) -> None:
    c = spec.num_classes
    bad = [i for i, y in zip(split.ids, split.labels, strict=True) if y is None or not 0 <= y < c]
    if bad:
        result.problems.append(
            f"{where}: {len(bad)} label(s) outside 0..{c - 1}, e.g. {bad[:EXAMPLES]}"
        )
    bad_bg = [
        i
        for i, y in zip(split.ids, split.bg_labels, strict=True)
        if y is not None and not -1 <= y < c
    ]
    if bad_bg:
        result.problems.append(
            f"{where}: {len(bad_bg)} bg_label(s) out of range, e.g. {bad_bg[:EXAMPLES]}"
        )
    if len(set(split.ids)) != len(split.ids):
        dup = [i for i, n in Counter(split.ids).items() if n > 1]
        result.problems.append(f"{where}: {len(dup)} id(s) occur twice, e.g. {dup[:EXAMPLES]}")


def _check_balance(
    split: _Split, spec: BenchmarkSpec, where: str, result: ValidationResult
) -> None:
    counts = Counter(y for y in split.labels if y is not None and 0 <= y < spec.num_classes)
    if len(set(counts.values())) > 1:
        shown = ", ".join(f"{spec.classes[k]} {n}" for k, n in sorted(counts.items())[:12])
        result.problems.append(f"{where}: classes are not balanced ({shown})")
    absent = [spec.classes[k] for k in range(spec.num_classes) if k not in counts]
    if absent and counts:
        result.notes.append(
            f"{where}: {len(absent)} class(es) have no image (e.g. {absent[:EXAMPLES]})"
        )


def _check_backgrounds(
    variant: str,
    split: _Split,
    spec: BenchmarkSpec,
    layout: BuiltLayout,
    where: str,
    result: ValidationResult,
) -> None:
    """Each recorded background follows the variant's rule and is not the row's own photo."""
    rule = layout.backgrounds.get(variant)
    rows = zip(split.ids, split.labels, split.bg_ids, split.bg_labels, strict=True)
    recorded = [(i, y, bid, b) for i, y, bid, b in rows if b not in (None, -1) or bid]
    if rule is None or not recorded:
        return
    own = [i for i, _, bid, _ in recorded if bid == i]
    if own:
        result.problems.append(
            f"{where}: {len(own)} row(s) use their own photo as background, not "
            f"{RULE_TEXT[rule]}, e.g. {own[:EXAMPLES]}"
        )
    present = sorted({y for y in split.labels if y is not None})
    if rule == SAME_CLASS:
        wrong = [i for i, y, _, b in recorded if b != y]
    elif rule == NEXT_CLASS:
        wrong = [i for i, y, _, b in recorded if b != next_class(y, present, spec.num_classes)]
    else:
        wrong = []
    if wrong:
        result.problems.append(
            f"{where}: {len(wrong)} background(s) not from {RULE_TEXT[rule]}, "
            f"e.g. {wrong[:EXAMPLES]}"
        )


def _row_checks(layout: BuiltLayout | None) -> Callable | None:
    if layout is None or layout.row_checks is None:
        return None
    return resolve_hook(layout.row_checks)


def not_a_dataset(folder: Path, specs: Iterable[BenchmarkSpec]) -> str:
    """Why ``folder`` (whose card declares no configs) is not a dataset: what it looks like
    -- datasets in its sub-folders (a ``--runs`` build), a results or report folder, photos
    -- and what to validate or run instead."""
    inner = sorted(d.name for d in folder.iterdir() if d.is_dir() and hub.is_hub_layout(d))
    if inner:
        listed = ", ".join(f"{name}/" for name in inner[:EXAMPLES])
        more = f" and {len(inner) - EXAMPLES} more" if len(inner) > EXAMPLES else ""
        return (
            f"{folder} is not one dataset: it holds {len(inner)} of them, one per sub-folder "
            f"({listed}{more}), as a build with several runs writes them. Validate each: "
            f"`bgbench validate {folder / inner[0]}`."
        )
    task = _results_task(folder)
    if task:
        return (
            f"{folder} is a results folder of `bgbench {task}`, not a dataset. Validate the "
            "data it scored (its --data) instead; `bgbench compare` and `bgbench "
            "publish-results` read results folders."
        )
    if is_image_folder(folder):
        # the commands that build from photos (a convert reads a release), each named once
        builds = (" ".join(c.split()[:3]) for spec in specs for c in spec.build_commands)
        made = ", ".join(dict.fromkeys(c for c in builds if c.startswith("bgbench build ")))
        return (
            f"{folder} is a folder of photos, not a built dataset: give it to a task as --data "
            f"as it is (nothing to validate), or build a dataset from it ({made}) and "
            "validate that build's --output."
        )
    card = "README.md has" if (folder / "README.md").is_file() else "no README.md, so"
    return (
        f"{folder}: {card} no YAML 'configs:' (not a Hub dataset layout); validate a folder "
        "made by `bgbench build`, `bgbench convert` or `bgbench download`."
    )


def _results_task(folder: Path) -> str | None:
    """The task (``report`` for a report) whose results document ``folder`` holds, or None."""
    for path in sorted(folder.glob("*.json")):
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(doc, dict) and doc.get("kind") == "bgbench-report":
            return "report"
        if isinstance(doc, dict) and "task" in doc and "schema_version" in doc:
            return str(doc["task"])
    return None


def validate_dataset(
    target: str | Path, specs: Sequence[BenchmarkSpec], benchmark: str | None = None
) -> ValidationResult:
    """Run every check on a Hub-layout folder or Hub dataset id; never raises on bad data.

    ``specs``: the benchmarks the data may hold (``bgbench validate``: every registered
    one); ``benchmark``: the name of the one to check against (default: the one the folder's
    report or card names, else the one its labels match)."""
    by_name = {spec.name: spec for spec in sorted(specs, key=lambda spec: spec.name)}
    folder = resolve_folder(target)
    own = _release_check(folder, by_name, benchmark)
    if own is not None:
        return own
    result = ValidationResult(folder=folder)
    meta = hub.read_card_metadata(folder)
    entries = {c["config_name"]: c for c in meta.get("configs", [])}
    if not entries:
        result.problems.append(not_a_dataset(folder, by_name.values()))
        return result
    files = {name: _files(folder, entry) for name, entry in entries.items()}
    spec = _dataset_benchmark(folder, meta, files, by_name, benchmark, result)
    if spec is None:
        return result
    result.benchmark = spec.name
    _check_configs(spec, files, result)
    aligned = _check_splits(spec, meta, files, result)
    _check_aligned(aligned, spec.layout, result)
    return result


def _dataset_benchmark(
    folder: Path,
    meta: dict[str, Any],
    files: dict[str, dict[str, list[Path]]],
    by_name: dict[str, BenchmarkSpec],
    benchmark: str | None,
    result: ValidationResult,
) -> BenchmarkSpec | None:
    """The benchmark the data holds: ``benchmark`` when given, else the one its card names,
    else the one its labels match; None (the problem said) when there is no file or no match."""
    first = next((ps[0] for by_split in files.values() for ps in by_split.values() if ps), None)
    if first is None:
        result.problems.append(f"{folder}: no Parquet file matches the card's data_files")
        return None
    broken = hub.unreadable_parquet([str(first)])
    if broken:  # its schema says which benchmark the data holds: named, not pyarrow's words
        result.problems.append(
            f"{broken[0]}. It was cut short or replaced: rebuild or re-download the dataset."
        )
        return None
    features = datasets.Features.from_arrow_schema(pq.read_schema(first))
    if benchmark:
        spec = find_spec(by_name, benchmark)
    else:
        spec = _card_benchmark(folder, meta, by_name) or _infer_spec(features, list(files), by_name)
    if spec is None:
        result.problems.append(_unmatched_labels(folder, features.get("label"), by_name))
    return spec


def _unmatched_labels(folder: Path, label: Any, by_name: dict[str, BenchmarkSpec]) -> str:
    """Why no benchmark's classes match the data's labels, and what to do."""
    if isinstance(label, datasets.Value) and not label.dtype.startswith(("int", "uint")):
        return (
            f"{folder}: the 'label' column holds {label.dtype} values; a bgbench dataset's "
            "labels are class indices (integers, or a ClassLabel of the benchmark's classes). "
            "Cast the column to integers, or rebuild the data with `bgbench build` / "
            "`bgbench convert`."
        )
    return (
        f"{folder}: label names {getattr(label, 'names', None)} match no benchmark "
        f"({', '.join(by_name)}); pass --benchmark"
    )


def _check_configs(
    spec: BenchmarkSpec, files: dict[str, dict[str, list[Path]]], result: ValidationResult
) -> None:
    """The card lists every config the benchmark's layout requires (the others noted), and
    every variant's splits."""
    layout = spec.layout
    missing = [v for v in spec.variants if v not in files]
    required = None if layout is None else layout.required_variants
    needed = [v for v in missing if required is None or v in required]
    if needed:
        result.problems.append(f"configs missing from the card: {', '.join(needed)}")
    if len(needed) < len(missing):
        absent = ", ".join(v for v in missing if v not in needed)
        result.notes.append(f"{spec.name} variants not in this dataset: {absent}")
    for name in (v for v in spec.variants if v in files and layout is not None):
        absent = [s for s in layout.splits if s not in files[name]]
        if absent:
            result.problems.append(
                f"{name}: split(s) {', '.join(absent)} missing from the card "
                f"({spec.name} has {', '.join(layout.splits)})"
            )


def _declared_rows(meta: dict[str, Any]) -> dict[tuple[Any, Any], Any]:
    """(config, split) -> the number of rows the card's dataset_info declares."""
    return {
        (info.get("config_name"), sp.get("name")): sp.get("num_examples")
        for info in meta.get("dataset_info") or []
        if isinstance(info, dict)
        for sp in info.get("splits") or []
    }


def _check_splits(
    spec: BenchmarkSpec,
    meta: dict[str, Any],
    files: dict[str, dict[str, list[Path]]],
    result: ValidationResult,
) -> dict[str, dict[str, _Split]]:
    """Check every config/split of the card; the scans of the aligned variants, by split,
    to compare across variants."""
    row_checks = _row_checks(spec.layout)
    declared_rows = _declared_rows(meta)
    by_split: dict[str, dict[str, _Split]] = defaultdict(dict)
    for name, splits in files.items():
        for split, paths in splits.items():
            declared = declared_rows.get((name, split))
            scanned = _check_split(spec, name, split, paths, declared, row_checks, result)
            # the same images, compared below
            if scanned is not None and name in spec.variants and name in spec.aligned_variants:
                by_split[split][name] = scanned
    return by_split


def _check_split(
    spec: BenchmarkSpec,
    name: str,
    split: str,
    paths: list[Path],
    declared: Any,
    row_checks: Callable | None,
    result: ValidationResult,
) -> _Split | None:
    """Check the files and rows of config ``name``'s ``split``; its scan, or None when it
    has no readable rows."""
    where = f"{name}/{split}"
    if not paths:
        result.problems.append(f"{where}: the card lists it but no file matches")
        return None
    broken = hub.unreadable_parquet(paths)
    if broken:  # named, file by file; its rows cannot be checked
        result.problems += [f"{where}: {b}; rebuild or re-download it" for b in broken]
        return None
    label = datasets.Features.from_arrow_schema(pq.read_schema(paths[0])).get("label")
    names = [n.lower() for n in getattr(label, "names", [])]
    if names != [n.lower() for n in spec.classes]:
        result.problems.append(
            f"{where}: label feature is not a ClassLabel with the {spec.name} class names"
        )
    layout = spec.layout
    size = layout.image_size if layout is not None and name in spec.variants else None
    mask_column = layout.mask_column if layout is not None else "mask"
    scanned = _scan_split(paths, where, result, size, mask_column)
    result.rows.setdefault(name, {})[split] = len(scanned.ids)
    if declared is not None and declared != len(scanned.ids):
        result.problems.append(
            f"{where}: the card declares {declared} rows but the files hold "
            f"{len(scanned.ids)} (load_dataset would fail; rewrite the card or rebuild)"
        )
    if not scanned.ids:
        result.problems.append(f"{where}: no rows (an empty config is not a dataset)")
        return None
    _check_rows(spec, name, scanned, paths, where, row_checks, result)
    return scanned


def _check_rows(
    spec: BenchmarkSpec,
    name: str,
    scanned: _Split,
    paths: list[Path],
    where: str,
    row_checks: Callable | None,
    result: ValidationResult,
) -> None:
    """The row checks of one scanned config/split: labels, class balance, the layout's own
    checks and, for a variant, its backgrounds."""
    layout = spec.layout
    is_variant = name in spec.variants
    _check_labels(scanned, spec, where, result)
    if layout is None or layout.balanced:
        _check_balance(scanned, spec, where, result)
    if row_checks is not None and is_variant:
        row_checks(paths, where, result)
    if is_variant and layout is not None:
        _check_backgrounds(name, scanned, spec, layout, where, result)


def _check_aligned(
    by_split: dict[str, dict[str, _Split]], layout: BuiltLayout | None, result: ValidationResult
) -> None:
    """The aligned variants of each split hold the same ids in the same order (and, where
    the layout shares masks, the same mask per id) as the first of them."""
    for split, variants in by_split.items():
        if not variants:
            continue
        ref_name = next(iter(variants))
        ref = variants[ref_name]
        ref_masks = dict(zip(ref.ids, ref.mask_hashes, strict=True))
        for name, scanned in variants.items():
            if scanned.ids != ref.ids:
                diff = sorted(set(scanned.ids) ^ set(ref.ids))[:EXAMPLES]
                what = f"e.g. {diff}" if diff else "same ids, different order"
                result.problems.append(
                    f"{name}/{split}: ids differ from {ref_name}/{split} ({what})"
                )
                continue
            if layout is not None and not layout.masks_shared:
                continue
            differing = [
                i
                for i, h in zip(scanned.ids, scanned.mask_hashes, strict=True)
                if h != ref_masks[i]
            ]
            if differing:
                result.problems.append(
                    f"{name}/{split}: {len(differing)} mask(s) differ from {ref_name}'s "
                    f"for the same id, e.g. {differing[:EXAMPLES]}"
                )
