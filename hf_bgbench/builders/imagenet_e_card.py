"""The dataset card of a ``bgbench build imagenet-e`` folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hf_bgbench.data.hub import configs_yaml, render_card

EDIT_TEXT = {
    "original": "the source image (fitted to the build size), with its mask",
    "bg_random": "background replaced by another image's inpainted background, drawn at random",
    "bg_simpler": "background of another image from the simplest third by L_c",
    "bg_complex": "background of another image from the most complex third by L_c",
    "bg_texture": "background replaced by an OOD texture (checker, stripes or fractal noise)",
    "size_full": "object removed (inpainted) and pasted back at its own size (s = 1)",
    "size_0.1": "object scaled about its centre (T_size) to an object pixel rate of 0.1",
    "size_0.08": "object scaled to an object pixel rate of 0.08",
    "size_0.05": "object scaled to an object pixel rate of 0.05",
    "position": "the size_0.05 object moved to a random place inside the frame (T_position)",
    "rotation": "object rotated by a random θ about its centre (T_direction)",
}


def write_card(folder: Path, report: dict[str, Any], class_names: list[str]) -> Path:
    edits = list(report["shards"])
    metadata = {
        "pretty_name": "ImageNet-E (CPU edits, bgbench build)",
        "tags": ["image-classification", "robustness", "imagenet-e", "bgbench"],
        "task_categories": ["image-classification"],
        "label_space": report["label_space"],
        "configs": configs_yaml({e: ["test"] for e in edits}, default="original"),
    }
    rows = "\n".join(
        f"| `{e}` | {report['complexity']['rows_per_edit'].get(e, 0)} | {EDIT_TEXT.get(e, '')} |"
        for e in edits
    )
    params = report["parameters"]
    body = f"""
# ImageNet-E-style edits (CPU build)

Built by `bgbench build imagenet-e` from {report["source"]["kind"]} data
(`{report["source"]["location"]}`): {report["kept"]} images of {len(report["per_class"])}
classes, each edited as in ImageNet-E (Li et al., 2023) without the diffusion model: the
object is removed by OpenCV inpainting ({params["method"]}), then edited and pasted back
with Poisson blending. Label space: **{report["label_space"]}** ({len(class_names)} classes;
the `label` ClassLabel names them).

| config | rows | edit |
|---|---|---|
{rows}

Columns: `image`, `label`, `id` (the source image id, shared across configs), `mask` (the
object after the edit, "L" PNG 0/255), `object_pixel_rate` (object pixels / image pixels
after the edit), `edit_params` (JSON: scale, dx, dy, angle, background id, texture, the
background's L_c and GLCM dissimilarity/contrast, seed).

Background complexity L_c = Σ|A(F(x))| (grey in [0, 1], forward-normalised DFT, DC left
out) of each inpainted background; bins by rank into thirds, edges
{report["complexity"]["edges"]}. Seed {params["seed"]}; every random choice is seeded by
(seed, image id, edit), so the build is byte-reproducible. Skipped: {report["skipped"]};
dropped: {report["dropped"]}. The diffusion edits (bg_inversion, bg_complex_adv) are not made.
"""
    path = Path(folder) / "README.md"
    path.write_text(render_card(metadata, body), encoding="utf-8")
    return path
