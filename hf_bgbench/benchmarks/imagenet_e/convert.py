"""Convert the released ImageNet-E tree into the Hub layout (one config per edit).

Reading is :mod:`hf_bgbench.benchmarks.imagenet_e.release` (the one parser of that layout);
writing is :mod:`hf_bgbench.data.hub`. Image bytes are stored unchanged; every edit config
has the shared schema (image, label, id, object_pixel_rate = NaN, edit_params = the edit and
its release folder), rows sorted by (label, id), the same ids in every edit. The unedited
photos are the release's ``original`` folder, or ``original=`` (ImageNet val photos in wnid
class folders, only the ids the edits hold are kept). Nothing depends on the clock or on
absolute paths, so converting twice gives identical bytes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import datasets
from tqdm.auto import tqdm

from hf_bgbench.benchmarks.imagenet_e.release import (
    EDIT_PARAMS,
    LAYOUT_TEXT,
    OBJECT_PIXEL_RATE,
    ImageNetELayoutError,
    edit_folders,
    find_imagenet_e_root,
    imagenet_e_features,
    list_edit_items,
    read_labels,
    release_edit_params,
)
from hf_bgbench.benchmarks.imagenet_e.release_card import write_release_card
from hf_bgbench.builders.report import REPORT_FORMAT, REPORT_NAME, prepare_repo_folder, write_json
from hf_bgbench.data import hub
from hf_bgbench.data.reader import quiet_datasets
from hf_bgbench.data.schema import ID, IMAGE, LABEL
from hf_bgbench.spec import BenchmarkSpec

SPLIT = "test"
Items = list[tuple[str, int, str]]


def _read_edits(
    root: Path, spec: BenchmarkSpec, original: Path | None
) -> tuple[dict[str, Path], dict[str, Items], dict[str, list[str]]]:
    folders = edit_folders(root, spec, strict=True)
    if original is not None:
        if spec.reference_variant in folders:
            raise ImageNetELayoutError(
                f"{root} already has an {spec.reference_variant!r} folder "
                f"({folders[spec.reference_variant].name}); drop --original or that folder."
            )
        folders = {spec.reference_variant: Path(original).expanduser(), **folders}
    if spec.reference_variant not in folders:
        raise ImageNetELayoutError(
            f"{root} has edit folders ({', '.join(f.name for f in folders.values())}) but no "
            f"'{spec.reference_variant}' folder of unedited photos, which dropped accuracy is "
            "measured against. Add it to the tree (named 'ori' or 'original'), or pass --original "
            "with the ImageNet validation photos in wnid class folders."
        )
    if len(folders) < 2:
        raise ImageNetELayoutError(
            f"{root} has only the '{spec.reference_variant}' photos and no edit folder "
            f"({LAYOUT_TEXT})."
        )
    items: dict[str, Items] = {}
    skipped: dict[str, list[str]] = {}
    labels = read_labels(root)
    for edit, folder in folders.items():
        items[edit], bad = list_edit_items(folder, edit, labels)
        if bad:
            skipped[f"{edit}: no ImageNet-1k label (wnid or labels.txt)"] = bad
    if original is not None:  # keep the photos the edits were made from
        ref = spec.reference_variant
        edited = set().union(*({i for *_, i in v} for e, v in items.items() if e != ref))
        items[ref] = [it for it in items[ref] if it[2] in edited]
    return folders, items, skipped


def _align(items: dict[str, Items], reference: str, shared_only: bool) -> list[str]:
    """Check every edit holds the reference's ids with the same labels; returns notes."""
    labels = {i: y for _, y, i in items[reference]}
    notes = []
    for edit, rows in items.items():
        wrong = [i for _, y, i in rows if i in labels and labels[i] != y]
        if wrong:
            raise ImageNetELayoutError(
                f"{edit}: {len(wrong)} image(s) have another label (class folder or "
                f"labels.txt) than in {reference} (e.g. {wrong[:3]}); the label must not change "
                "with an edit."
            )
    id_sets = {e: {i for *_, i in rows} for e, rows in items.items()}
    shared = set.intersection(*id_sets.values())
    differ = {e: ids for e, ids in id_sets.items() if ids != shared}
    if differ and not shared_only:
        said = "; ".join(
            f"{e}: {len(ids - shared)} id(s) the others lack, e.g. {sorted(ids - shared)[:3]}"
            for e, ids in differ.items()
        )
        raise ImageNetELayoutError(
            f"The edits do not hold the same images (ids = file stems): {said}. Every edit "
            "must hold every source image; pass --shared-only to keep the "
            f"{len(shared)} ids all edits share (recorded in the report)."
        )
    if differ:
        for edit in items:
            items[edit] = [it for it in items[edit] if it[2] in shared]
        notes.append(f"kept the {len(shared)} ids all edits share (--shared-only)")
    if not shared:
        raise ImageNetELayoutError("The edits share no image id (file stem); nothing to convert.")
    return notes


def convert_imagenet_e_release(
    src: str | Path,
    output: str | Path,
    *,
    spec: BenchmarkSpec,
    original: str | Path | None = None,
    shared_only: bool = False,
    overwrite: bool = False,
    progress: bool = True,
) -> dict[str, Any]:
    """Write the release at ``src`` as a Hub repo folder at ``output`` for ``spec`` (the
    imagenet-e spec); returns the report."""
    root = find_imagenet_e_root(src, spec)
    folders, items, skipped = _read_edits(root, spec, Path(original) if original else None)
    notes = _align(items, spec.reference_variant, shared_only)
    output = Path(output)
    prepare_repo_folder(output, overwrite)
    features = imagenet_e_features(spec.classes)
    edits_report: dict[str, dict[str, Any]] = {}
    bar = tqdm(list(items), desc="imagenet-e", unit="edit", disable=not progress)
    for edit in bar:
        rows = items[edit]
        bar.set_postfix_str(f"{edit} ({len(rows)} images)")
        params = release_edit_params(edit, folders[edit])
        table = {
            IMAGE: [p for p, _, _ in rows],
            LABEL: [y for _, y, _ in rows],
            ID: [i for _, _, i in rows],
            OBJECT_PIXEL_RATE: [float("nan")] * len(rows),
            EDIT_PARAMS: [params] * len(rows),
        }
        with quiet_datasets():
            ds = datasets.Dataset.from_dict(table, features=features)
            shards = hub.write_parquet_shards(ds, output, edit, SPLIT)
        edits_report[edit] = {"rows": len(rows), "folder": folders[edit].name, "shards": shards}
    counts: dict[str, int] = {}
    for _, y, _ in items[spec.reference_variant]:
        counts[spec.classes[y]] = counts.get(spec.classes[y], 0) + 1
    report = {
        "format": REPORT_FORMAT,
        "benchmark": spec.name,
        "source": "release",
        "edits": edits_report,
        "images": len(items[spec.reference_variant]),
        "classes": len(counts),
        "per_class": counts,
        "skipped": {k: [Path(p).name for p in v] for k, v in skipped.items()},
        "notes": notes,
    }
    write_json(output / REPORT_NAME, report)
    write_release_card(output, spec, report)
    return report


def summary_lines(report: dict[str, Any]) -> list[str]:
    """What ``bgbench convert imagenet-e`` prints."""
    edits = ", ".join(f"{e} {r['rows']}" for e, r in report["edits"].items())
    lines = [f"converted {report['images']} images of {report['classes']} classes ({edits})"]
    lines += [f"skipped {len(v)} file(s): {k}" for k, v in report["skipped"].items()]
    return lines + [f"note: {n}" for n in report["notes"]]
