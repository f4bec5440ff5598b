"""The dataset card (README.md) of a converted ImageNet-D (``bgbench convert imagenet-d``):
one config per subset, the columns, the protocols, the licence (MIT, the authors') and the
citation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hf_bgbench.benchmarks.imagenet_d.facts import SOURCE_REPO
from hf_bgbench.builders.card import (
    citation_lines,
    markdown_table,
    variant_card_metadata,
    write_card,
)
from hf_bgbench.data import hub
from hf_bgbench.spec import BenchmarkSpec

TAGS = ["image-classification", "robustness", "backgrounds", "imagenet-d", "synthetic", "bgbench"]
SUBSET_TEXT = {
    "background": "the object generated against a new background",
    "texture": "the object generated with a new texture",
    "material": "the object generated in a new material",
    "clean": "real ImageNet photos of the same classes (the reference of each drop)",
}
COLUMNS = [
    ["`image`", "the generated image (the release's PNG bytes, unchanged)"],
    ["`label`", "the ImageNet-D class (ClassLabel, 113 names as the authors' code writes them)"],
    ["`id`", "the image's path in the release (`background/alarm_clock/<name>.png`)"],
    [
        "`negative`",
        "the image's hard negative for the VQA question (questions/<subset>.csv; not in `clean`)",
    ],
]


def render_imagenet_d_card(spec: BenchmarkSpec, report: dict[str, Any], folder: str | Path) -> str:
    metadata, names = variant_card_metadata(spec, folder, {"license": "mit"}, TAGS)
    subsets = report.get("subsets", {})
    rows = [[f"`{n}`", SUBSET_TEXT[n], subsets[n]["rows"], subsets[n]["classes"]] for n in names]
    body = [
        f"# {spec.title}",
        "",
        spec.description,
        "",
        f"Source: the Hub dataset [{SOURCE_REPO}](https://huggingface.co/datasets/{SOURCE_REPO}) "
        f"(MIT licence, the authors' upload; code: {spec.homepage}), converted by `bgbench "
        f"convert imagenet-d` ({report.get('images', 0)} images).",
        "",
        "## Configs (one per nuisance, split `test`)",
        "",
        markdown_table(["config", "nuisance", "images", "classes"], rows),
        "",
        "## Columns",
        "",
        markdown_table(["column", "meaning"], COLUMNS),
        "",
        "## Protocols",
        "",
        "Accuracy per subset: `bgbench evaluate MODEL --benchmark imagenet-d --data <this "
        "folder>`. By default the authors' code point by point: a classifier's 1000-way top-1 "
        "through their 113 -> 125 class map; a CLIP-family model over the 113 class names with "
        "'A photo of a {}'; a generative VLM asked 'What is the main object in this image? "
        "Choose from the following list: <true class>, <hard negative>.', its answer matched "
        "as their compute_accuracy.py does (answers naming both or neither left out, counted).",
        "",
        *citation_lines(spec),
    ]
    return hub.render_card(metadata, "\n".join(body))


def write_imagenet_d_card(folder: str | Path, spec: BenchmarkSpec, report: dict[str, Any]) -> Path:
    return write_card(folder, render_imagenet_d_card(spec, report, folder))
