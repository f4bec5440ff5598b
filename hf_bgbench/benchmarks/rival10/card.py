"""The dataset card (README.md) of a converted RIVAL10 folder.

Front matter: ``configs`` (``ordinary``, the default, with train and test), ``dataset_info``
read back from the Parquet shards, the licence (``other``: the authors' non-commercial
research licence, no redistribution) and a Hub gate prompt carrying those terms. The prose
gives the columns, the mask rule, the counts per class and split, the skipped images, the
licence terms and the citation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hf_bgbench.benchmarks.rival10.items import (
    MISSING_FILES,
    OUTSIDE_LABEL_SPACE,
    UNREADABLE,
)
from hf_bgbench.benchmarks.rival10.labels import rival10_attributes, rival10_classes
from hf_bgbench.benchmarks.rival10.release import VARIANT_DIRNAME
from hf_bgbench.builders.card import (
    citation_lines,
    dataset_info_entries,
    folder_dataset_info,
    largest_config,
    markdown_table,
    size_category,
)
from hf_bgbench.data import hub
from hf_bgbench.spec import BenchmarkSpec

RELEASE_URL = (
    "https://app.box.com/index.php?rm=box_download_shared_file"
    "&shared_name=iflviwl5rbdgtur1rru3t8f7v2vp0gww&file_id=f_944375052992"
)
LICENCE_TERMS = (
    "RIVAL10 is released by its authors for **non-commercial research use only**, and its "
    "licence **forbids redistribution**. The photographs come from ImageNet and are also "
    "subject to the ImageNet terms of access; copyright stays with their owners. **Do not "
    "redistribute this dataset: publish it on the Hub only as a private or gated "
    "repository**, for people who have accepted these terms, and obtain the data from the "
    "authors' release."
)
GATE_PROMPT = (
    "RIVAL10 may be used for non-commercial research only and may not be redistributed. "
    "The photographs are ImageNet images (ImageNet terms of access apply)."
)
TAGS = ["image-classification", "robustness", "backgrounds", "segmentation", "rival10", "bgbench"]
MASK_RULE = (
    "Every mask (the object mask, each attribute mask, the merged mask) is decoded from the "
    "release by content (JPEG or PNG, whatever the file extension), and a pixel is "
    "foreground when **any channel is non-zero** -- the rule of the authors' loader, which "
    "sums the channels and binarises with `!= 0`. Masks are kept at the image's own size "
    "(the authors' loader resizes them to 224x224; a mask stored at another size is resized "
    "to the image's, nearest neighbour) and stored as 'L' PNGs with values 0 / 255."
)
COLUMNS = [
    ["`image`", "the photograph (the release's JPEG bytes, unchanged)"],
    [
        "`label`",
        f"class (ClassLabel: {', '.join(rival10_classes())})",
    ],
    ["`object_mask`", "object segmentation (`entire-object`), 'L' PNG 0/255, image size"],
    ["`attributes`", "18 named booleans: attribute present (row 0 of `_attr_labels.npy`)"],
    ["`changed_attributes`", "18 named booleans: changed by augmentation (row 1)"],
    [
        "`attribute_masks`",
        "list of {`attribute`, `mask`}: one per present attribute that "
        "has a mask in the release (in attribute order)",
    ],
    ["`merged_mask`", "the release's union of attribute masks (`_merged_mask.JPEG`)"],
    ["`id`", "the file stem (`<wnid>_<n>`)"],
    ["`imagenet_wnid`", "the source ImageNet class (the wnid before the first `_`)"],
]
SKIP_TEXT = {
    MISSING_FILES: "a companion file (.npy / .pkl / merged mask) is missing",
    UNREADABLE: "a file could not be read or decoded",
    OUTSIDE_LABEL_SPACE: "the wnid is not one of RIVAL10's 20 source classes",
}
NOTE_TEXT = {
    "resized": "masks stored at another size than their image (resized, nearest neighbour)",
    "masks_of_absent": "masks of attributes marked absent (not kept)",
    "present_without_mask": "present attributes without a mask in the pickle",
    "unknown_keys": "pickle entries that are neither an attribute nor entire-object (ignored)",
}
EXAMPLES = 10


def rival10_card_metadata(spec: BenchmarkSpec, info: dict[str, dict[str, Any]]) -> dict[str, Any]:
    names = [VARIANT_DIRNAME, *sorted(c for c in info if c != VARIANT_DIRNAME)]
    names = [n for n in names if n in info]
    return {
        "pretty_name": spec.title,
        "license": "other",
        "license_name": "rival10-non-commercial-research",
        "extra_gated_prompt": GATE_PROMPT,
        "extra_gated_fields": {
            "I will use RIVAL10 for non-commercial research only and not redistribute it": (
                "checkbox"
            )
        },
        "task_categories": ["image-classification", "image-segmentation"],
        "tags": TAGS,
        "size_categories": [size_category(largest_config(info))],
        "configs": hub.configs_yaml(
            {n: list(info[n]["splits"]) for n in names}, default=VARIANT_DIRNAME
        ),
        "dataset_info": dataset_info_entries(info, names),
    }


def _split_section(split: str, rep: dict[str, Any], spec: BenchmarkSpec) -> list[str]:
    parts = [f"### Split `{split}`", "", f"**{rep['kept']} images** ({rep['found']} found)."]
    rows = [[k, name, rep["per_class"].get(name, 0)] for k, name in enumerate(spec.classes)]
    parts += ["", markdown_table(["label", "class", "images"], rows)]
    attrs = rep.get("attributes_present", {})
    if attrs:
        cells = ", ".join(f"{a} {attrs.get(a, 0)}" for a in rival10_attributes())
        parts += ["", f"Images with each attribute present: {cells}."]
    skipped = {k: v for k, v in rep.get("skipped", {}).items() if v}
    if skipped:
        parts += ["", "**Skipped images** (not in the dataset), by reason:", ""]
        table = []
        for reason, n in skipped.items():
            shown = rep.get("skipped_items", {}).get(reason, [])[:EXAMPLES]
            table.append([SKIP_TEXT.get(reason, reason), n, "<br>".join(shown)])
        parts.append(markdown_table(["reason", "images", "examples"], table))
    else:
        parts += ["", "No image of the release was skipped."]
    notes = {k: v for k, v in rep.get("notes", {}).items() if v}
    if notes:
        parts += [
            "",
            "Notes: " + "; ".join(f"{NOTE_TEXT.get(k, k)}: {v}" for k, v in notes.items()),
        ]
        parts[-1] += " (listed in `build_report.json`)."
    return parts


def render_rival10_card(spec: BenchmarkSpec, report: dict[str, Any], folder: str | Path) -> str:
    info = folder_dataset_info(folder)
    metadata = rival10_card_metadata(spec, info)
    sha = (report.get("source") or {}).get("sha256")
    body = [f"# {spec.title}", "", spec.description, "", "> " + LICENCE_TERMS, ""]
    body += [
        "```python",
        "from datasets import load_dataset",
        f'ds = load_dataset("{spec.hub_repo}", split="test")  # config "ordinary"',
        'ds[0]["object_mask"], ds[0]["attributes"]["wings"], ds[0]["attribute_masks"]',
        "```",
        "",
        "## Columns",
        "",
        markdown_table(["column", "what it holds"], COLUMNS),
        "",
        "## Masks",
        "",
        MASK_RULE,
        "",
        "## Source",
        "",
        "Converted with `bgbench convert rival10` from the authors' release (`rival10.zip`, "
        f"[download]({RELEASE_URL})): `RIVAL10/{{train,test}}/ordinary/` only (the "
        "augmentation folders beside it are not part of the benchmark). The class of an "
        "image is its wnid (before the first `_` of the file name) through the published "
        "`wnid_to_class.json` and `label_mappings.json`. Rows are sorted by label, then id. "
        "The attribute pickles were read with an unpickler that refuses every class and "
        "function.",
    ]
    if sha:
        body += ["", f"sha256 of the downloaded archive: `{sha}`."]
    body += ["", "## Counts", ""]
    for split in ("train", "test"):
        if split in report.get("splits", {}):
            body += [*_split_section(split, report["splits"][split], spec), ""]
    body += ["## Licence", "", LICENCE_TERMS, "", *citation_lines(spec)]
    return hub.render_card(metadata, "\n".join(body))


def write_rival10_card(folder: str | Path, spec: BenchmarkSpec, report: dict[str, Any]) -> Path:
    path = Path(folder) / "README.md"
    path.write_text(render_rival10_card(spec, report, folder), encoding="utf-8")
    return path
