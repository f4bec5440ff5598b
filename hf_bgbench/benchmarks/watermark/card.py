"""The dataset card of a ``bgbench build watermark`` folder: citation and the licence note.

The licence note matters: the images are ImageNet photos (ImageNet terms of access), and the
watermark is drawn with the ``imagenet-w`` package, whose wheel ships a CC BY-NC 4.0 LICENSE
file while its package metadata says "BSD 3-Clause License". The card says both, and that
the stricter (non-commercial) terms should be assumed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hf_bgbench.benchmarks.watermark.facts import (
    CARTON_INDEX,
    CROP,
    ORIGINAL,
    RESIZE,
    SPLIT,
    WATERMARKED,
)
from hf_bgbench.data.hub import configs_yaml, render_card
from hf_bgbench.spec import BenchmarkSpec

LICENCE_NOTE = (
    "**Licence.** The images are ImageNet photos, under the [ImageNet terms of access]"
    "(https://image-net.org/download) (non-commercial research and education). The watermark "
    "is drawn by the `imagenet-w` package (Meta Platforms; the font bundled with it is Source "
    "Han Serif): its wheel ships a **CC BY-NC 4.0** LICENSE file while its package metadata "
    'says "BSD 3-Clause License". Until its authors resolve the conflict, assume the '
    "non-commercial terms (CC BY-NC 4.0) for the watermarked images, and attribute the "
    "watermark to Li et al. (2023)."
)


def write_card(folder: Path, report: dict[str, Any], spec: BenchmarkSpec) -> Path:
    """README.md of a built folder, from its build report."""
    wm = report["watermark"]
    metadata = {
        "pretty_name": "ImageNet-W-style watermark reliance (bgbench build)",
        "license": "other",
        "license_name": "imagenet-terms-of-access-and-cc-by-nc-4.0",
        "license_link": "https://image-net.org/download",
        "tags": ["image-classification", "robustness", "watermark", "imagenet-w", "bgbench"],
        "task_categories": ["image-classification"],
        "configs": configs_yaml({v: [SPLIT] for v in report["shards"]}, default=ORIGINAL),
    }
    params = report["parameters"]
    drawn = (
        f'the text "{wm.get("text", "")}" in white at opacity {wm.get("opacity", "")}, font '
        f"{wm.get('font', '')} {wm.get('font_size', '')} px, top-left corner at "
        f"({wm.get('x_pos', '')}, {wm.get('y_pos', '')}) of the crop"
    )
    body = f"""
# ImageNet-W-style watermark reliance

Built by `bgbench build watermark` from `{report["source"]["images"]}`: {report["kept"]}
ImageNet photos of {len(report["per_class"])} classes, each twice. Labels are the 1000
ImageNet-1k classes (the `label` ClassLabel names them; index {CARTON_INDEX} is "carton").

| config | rows | image |
|---|---|---|
| `{ORIGINAL}` | {report["kept"]} | the photo after Resize({RESIZE}) + CenterCrop({CROP}) |
| `{WATERMARKED}` | {report["kept"]} | the same crop with the ImageNet-W watermark |

The watermark is applied as ImageNet-W does (Li et al., 2023): to the {CROP}x{CROP} crop,
before normalisation, by `imagenet_w.AddWatermark({CROP})` from the `imagenet-w` package
(version {wm.get("version") or "unknown"}): {drawn}. Both configs are lossless PNG, so they
differ only where the text is drawn. Columns: `image`, `label`, `id` (the photo's file stem,
the same in both configs).

Metrics (`bgbench evaluate MODEL --benchmark {spec.name}`): the watermark gap
acc(original) − acc(watermark), paired over the same images (the paper's "IN-W gap" is its
negative); the share of images not predicted carton without the watermark that are predicted
carton with it; and the paper's carton gap (carton photos: accuracy with − without).
A model whose input is not {CROP} px sees the stored crop resized, watermark included (the
paper draws the watermark at the model's own crop size).

Seed {params["seed"]} (used only by --limit-per-class); skipped photos: {report["skipped"]}.

{LICENCE_NOTE}

## Citation

```bibtex
{spec.citation}
```
"""
    path = Path(folder) / "README.md"
    path.write_text(render_card(metadata, body), encoding="utf-8")
    return path
