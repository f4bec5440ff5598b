"""The dataset card (README.md) of a converted ImageNet-E release (``bgbench convert
imagenet-e``). The CPU build (``bgbench build imagenet-e``) writes its own card
(:mod:`hf_bgbench.benchmarks.imagenet_e.card`).

Front matter: one config per edit (``original`` the default, split ``test``), ``dataset_info``
read back from the Parquet shards, tags naming the benchmark (so ``bgbench validate`` knows
it). The prose: the edits with their counts and release folders, the columns, the source,
what was skipped, the metric and the citation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hf_bgbench.builders.card import (
    citation_lines,
    markdown_table,
    variant_card_metadata,
    write_card,
)
from hf_bgbench.data import hub
from hf_bgbench.spec import BenchmarkSpec

RELEASE_SOURCE = (
    "the released ImageNet-E archive (Google Drive file id `19M1FQB8c_Mir6ermRsukTQReI-IFXeT0`, "
    "linked from alibaba/easyrobust `benchmarks/imagenet-e/README.md`)"
)
TAGS = ["image-classification", "robustness", "backgrounds", "imagenet", "imagenet-e", "bgbench"]
EDIT_TEXT = {
    "original": "the unedited photo (the reference of every dropped accuracy)",
    "bg_inversion": "background guidance λ = 0 (the diffusion round-trip control)",
    "bg_simpler": "background made simpler (λ = −20)",
    "bg_complex": "background made more complex (λ = +20)",
    "bg_complex_adv": "more complex background with adversarial guidance (λ = +20)",
    "bg_random": "background replaced by another image's",
    "bg_texture": "background replaced by an out-of-distribution texture",
    "size_full": "object removed and pasted back at its own size",
    "size_0.1": "object rescaled to an object pixel rate of 0.1",
    "size_0.08": "object rescaled to an object pixel rate of 0.08",
    "size_0.05": "object rescaled to an object pixel rate of 0.05",
    "position": "the 0.05-size object at a random position",
    "rotation": "object rotated by a random angle",
}
COLUMNS = [
    ["`image`", "the edited photo (the release's bytes, unchanged)"],
    ["`label`", "ImageNet-1k class (ClassLabel, 1000 names; duplicates carry their wnid)"],
    ["`id`", "the source image's id (file stem), the same in every edit"],
    ["`object_pixel_rate`", "object pixels / image pixels after the edit (NaN: not released)"],
    ["`edit_params`", 'JSON: {"edit": our name, "release_folder": the folder it came from}'],
]


def render_release_card(spec: BenchmarkSpec, report: dict[str, Any], folder: str | Path) -> str:
    """The card; ``report`` has ``edits`` (edit -> {"rows", "folder"}) and ``skipped``
    (reason -> files)."""
    licence = {
        "license": "other",
        "license_name": "imagenet-terms-of-access",
        "license_link": "https://image-net.org/download",
    }
    metadata, names = variant_card_metadata(spec, folder, licence, TAGS)
    edits = report.get("edits", {})
    rows = [
        [f"`{n}`", EDIT_TEXT.get(n, ""), edits[n]["rows"], f"`{edits[n]['folder']}`"] for n in names
    ]
    absent = [v for v in spec.variants if v not in names]
    body = [
        f"# {spec.title}",
        "",
        spec.description,
        "",
        f"Source: {RELEASE_SOURCE}, converted by `bgbench convert imagenet-e` "
        f"({report.get('images', 0)} images of {report.get('classes', 0)} classes).",
        "",
        "## Configs (one per edit, split `test`)",
        "",
        markdown_table(["config", "edit", "images", "release folder"], rows),
        "",
    ]
    if absent:
        body += [f"Edits not in this folder: {', '.join(absent)}.", ""]
    for reason, files in (report.get("skipped") or {}).items():
        body += [f"Skipped ({reason}): {len(files)} file(s), e.g. `{files[0]}`.", ""]
    body += [f"Note: {n}." for n in report.get("notes", [])]
    body += [
        "## Columns",
        "",
        markdown_table(["column", "meaning"], COLUMNS),
        "",
        "## Metric",
        "",
        "Dropped accuracy DA(edit) = acc(original) − acc(edit), per edit and averaged over the "
        "edits: `bgbench evaluate MODEL --benchmark imagenet-e --data <this folder>`.",
        "",
        *citation_lines(spec),
    ]
    return hub.render_card(metadata, "\n".join(body))


def write_release_card(folder: str | Path, spec: BenchmarkSpec, report: dict[str, Any]) -> Path:
    return write_card(folder, render_release_card(spec, report, folder))
