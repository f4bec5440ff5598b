"""The dataset card (README.md) of an IN-9 repo folder, built or converted.

The YAML front matter: ``configs`` (one per variant, plus ``in9l``), ``dataset_info``
(:mod:`hf_bgbench.builders.card`), licence, task, tags. The prose says what each variant
holds, how it was made, the seed, the counts and the flagged rows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hf_bgbench.benchmarks.in9.variants import VARIANT_TEXT
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

DROP_TEXT = {
    "unreadable": "photo could not be decoded",
    "too_large": "photo above the decode limit (BGBENCH_MAX_IMAGE_PIXELS, default 178,956,970 "
    "pixels)",
    "no_box": "no bounding box (and --no-boxes not given)",
    "multiple_boxes": "more than one bounding box",
    "empty_box": "degenerate box",
    "box_covers_crop": "box covers more than 90% of the 224 crop",
    "box_outside_crop": "less than 50% of the box survives the crop",
    "grabcut_failed": "GrabCut foreground under 10% of the box after 3 tries",
    "no_other_background": "no other photo to take a mixed background from (e.g. the only "
    "photo of its class, for mixed_same)",
    "balancing": "dropped to balance the classes",
}

TAGS = ["image-classification", "robustness", "backgrounds", "imagenet", "imagenet-9", "bgbench"]


def _ordered(configs: dict[str, Any], spec: BenchmarkSpec) -> list[str]:
    order = list(spec.variants) + ["in9l"]
    return sorted(configs, key=lambda c: (order.index(c) if c in order else len(order), c))


def card_metadata(spec: BenchmarkSpec, info: dict[str, dict[str, Any]]) -> dict[str, Any]:
    names = _ordered(info, spec)
    return {
        "pretty_name": spec.title,
        "license": "other",
        "license_name": "imagenet-terms-of-access",
        "license_link": "https://image-net.org/download",
        "task_categories": ["image-classification"],
        "tags": TAGS,
        "size_categories": [size_category(largest_config(info))],
        "configs": hub.configs_yaml({n: list(info[n]["splits"]) for n in names}),
        "dataset_info": dataset_info_entries(info, names),
    }


def _counts_section(split: str, rep: dict[str, Any], spec: BenchmarkSpec) -> str:
    params = rep.get("parameters", {})
    parts = [f"### Split `{split}`", ""]
    if "seed" in params:
        parts.append(
            f"Seed **{params['seed']}**; boxes: {params.get('boxes')}; image encoding: "
            f"{params.get('image_format')}; {rep.get('photos_found', '?')} labelled photos found."
        )
    parts.append(f"**{rep['kept']} images per variant** (ids identical in every variant).")
    per_class = rep.get("per_class", {})
    if len(per_class) <= 20:
        parts += [
            "",
            markdown_table(
                ["label", "class", "images"],
                [
                    [spec.classes.index(k), k, v]
                    for k, v in sorted(per_class.items(), key=lambda kv: spec.classes.index(kv[0]))
                ],
            ),
        ]
    else:
        values = sorted(set(per_class.values()))
        parts.append(f"{len(per_class)} classes with {', '.join(map(str, values))} images each.")
    if rep.get("classes_missing"):
        parts.append(
            f"\nNo image of {len(rep['classes_missing'])} class(es) survived (e.g. "
            f"{', '.join(rep['classes_missing'][:5])}); classes are balanced over the others."
        )
    dropped = rep.get("dropped", {})
    if dropped:
        parts += [
            "",
            "Dropped images, by reason (an image is counted once, at its first failing rule):",
            "",
        ]
        parts.append(
            markdown_table(
                ["reason", "images"],
                [
                    [DROP_TEXT.get(k, k), dropped[k]]
                    for k in sorted(
                        dropped, key=lambda k: list(DROP_TEXT).index(k) if k in DROP_TEXT else 99
                    )
                ],
            )
        )
    skipped = {k: v for k, v in rep.get("skipped", {}).items() if v}
    if skipped:
        parts.append(
            "\nSkipped before processing: "
            + ", ".join(f"{k} {v}" for k, v in skipped.items())
            + "."
        )
    if rep.get("subsampled_out"):
        parts.append(f"\n{rep['subsampled_out']} photos left out by --limit-per-class (seeded).")
    flagged = rep.get("box_estimated", 0)
    if "box_estimated" in rep:
        parts.append(
            f"\n**Flagged rows:** {flagged} image(s) have an *estimated* box "
            "(`box_estimated=True`); their variants are only as good as the estimate."
            if flagged
            else "\nNo row has an estimated box (`box_estimated` is False everywhere)."
        )
    if rep.get("in9l"):
        l9 = rep["in9l"]
        parts.append(
            f"\n`in9l` (train): {l9['kept']} photos, {len(l9['per_class'])} classes, "
            f"{l9['dropped_balancing']} dropped for balance."
        )
    return "\n".join(parts)


BUILD_METHOD = """\
Each photo is resized so its shorter side is 256 (PIL bilinear) and centre-cropped to 224
(torchvision's Resize(256) + CenterCrop(224)); every variant is composited on the 256 image
and then cropped, so all variants are 224x224 RGB.

- Only photos with exactly one bounding box are kept. Photos whose box covers more than
  90% of the 224 crop, or keeps less than 50% of its area inside the crop, are dropped.
- Foreground: `cv2.grabCut(img, mask, rect=box, ..., 5, cv2.GC_INIT_WITH_RECT)`;
  foreground = GC_FGD or GC_PR_FGD. OpenCV's RNG is seeded per image from (seed, id, try),
  so masks do not depend on worker scheduling. A segmentation under 10% of the box area
  is a failure; after 3 tries the photo is dropped from every variant.
- only_bg_t: the largest margin strip outside the box (left/right at full height or
  top/bottom at full width, largest area) is tiled over the box. No inpainting.
- mixed_*: `bg * (1 - mask) + fg * mask` at 224x224 with the only_bg_t image of the
  background photo; `bg_id` / `bg_label` record which photo. mixed_same: another photo of
  the same class; mixed_rand: any other photo; mixed_next: a photo of class (y + 1) mod C
  (skipping classes with no photo). Choices are seeded. A photo is never its own
  background: a photo with no other candidate (the only photo of its class, for
  mixed_same) is dropped from every variant and counted below.
- One mask per photo, shared by all variants (`mask`: "L" PNG, 0/255, 224x224).
- Classes are balanced by dropping seeded-random photos from larger classes; every
  variant holds the same photos.
- Images are JPEG (quality 95, 4:4:4, no metadata) or PNG; the build is byte-reproducible
  for the same inputs, seed and library versions.

Box estimation (`--no-boxes`, rows flagged `box_estimated=True`): spectral-residual
saliency (Hou & Zhang, 2007) on a 64-pixel thumbnail, weighted by a centre prior (Gaussian,
sigma = 1/3 of each side); the box spans the central 80% of the saliency mass along each
axis (10th to 90th percentile of the row and column sums). Deterministic."""


RELEASE_BACKGROUNDS = """\
The release does not say which photo's background each mixed image shows: a mixed image is
filed under its foreground's id (the same file name in all eight variants) and the archive
holds no list of the backgrounds used, so this data has no `bg_id` / `bg_label` columns and
a mixed image's background photo cannot be shown. `bgbench build in9` records them."""


def render_in9_card(spec: BenchmarkSpec, report: dict[str, Any], folder: str | Path) -> str:
    info = folder_dataset_info(folder)
    metadata = card_metadata(spec, info)
    configs = _ordered(info, spec)
    source = report.get("source", "build")
    body = [f"# {spec.title}", "", spec.description, ""]
    body += [
        "```python",
        "from datasets import load_dataset",
        f'ds = load_dataset("{spec.hub_repo}", "mixed_rand", split="test")',
        "```",
        "",
        "## Configs",
        "",
        markdown_table(
            ["config", "what the image holds", "splits"],
            [[f"`{c}`", VARIANT_TEXT.get(c, ""), ", ".join(info[c]["splits"])] for c in configs],
        ),
        "",
        "Columns: `image` (224x224 RGB), `label` (the *foreground's* class), `id` (the source "
        "photo; identical across variants), `mask` (foreground mask), and for built data "
        "`bg_id` / `bg_label` (the photo whose background was used; empty / -1 outside the "
        "mixed variants) and `box_estimated`.",
        "",
    ]
    if source == "release":
        body += [
            "## Source",
            "",
            "Converted from the official Backgrounds Challenge release "
            "(`bg_challenge/<variant>/val/...`, `fg_mask/val/...`); image bytes are "
            "unchanged, masks (.npy) are stored as 0/255 PNGs, ids are the file stems.",
            "",
            RELEASE_BACKGROUNDS,
            "",
        ]
    else:
        body += ["## How it was built", "", BUILD_METHOD, ""]
    body += ["## Counts", ""]
    for split, rep in sorted(report.get("splits", {}).items()):
        body += [_counts_section(split, rep, spec), ""]
    body += [
        "## Licence",
        "",
        "The photos come from ImageNet and are for non-commercial research and education "
        "only, under the ImageNet terms of access; copyright stays with their owners.",
        "",
        *citation_lines(spec),
    ]
    return hub.render_card(metadata, "\n".join(body))


def write_card(folder: str | Path, spec: BenchmarkSpec, report: dict[str, Any]) -> Path:
    path = Path(folder) / "README.md"
    path.write_text(render_in9_card(spec, report, folder), encoding="utf-8")
    return path
