"""Which part of the CPU ImageNet-E path costs the accuracy the paper's images do not.

Given an IN-9 build folder (photos + GrabCut/ground-truth masks) and a model, this makes the
CPU edits in several *variants* and *controls* on the same photos (stage 1 of
``bgbench build imagenet-e``: the 256x256 canvas, the inpainted background; the same
seeded background draws), JPEG-encodes them as the build does, scores them with the model's
own eval transform (what ``bgbench evaluate`` feeds) and prints dropped accuracy
DA = acc(original) - acc(edit) per edit and variant, with a paired-bootstrap 95% half-width.

Variants (the edits listed in VARIANTS; "(= object)" in the table where not made):

- ``object``   the earlier CPU recipe: object alone warped onto its inpainted background
               (Telea, hole = mask grown by 7 px), Poisson paste
               (``--size-method object --blend poisson``);
- ``alpha``    as ``object`` with a hard alpha paste instead of Poisson blending;
- ``ns-d3``    as ``object`` with the hole inpainted by Navier-Stokes, grown by 3 px only;
- ``whole``    size edits scale the whole photo with its own background (the authors'
               ``resize_obj.py``), the frame a shrunk photo leaves outpainted (Telea) from
               the scaled background; position moves the small object of that image over
               its own (small) inpainted hole; Poisson paste;
- ``whole-bg`` as ``whole`` with the frame taken from the inpainted background at full
               scale;
- ``whole-bg-alpha``  ``whole-bg`` with the alpha paste: the new build default
               (``--size-method whole --blend alpha``);
- ``whole-bg-alpha-ns3``  the same with the Navier-Stokes, 3 px hole.

Controls (one number each, DA against the same originals):

- ``paste_self``   the object Poisson-pasted back onto its own photo: the paste edge alone;
- ``size1``        the object at scale 1 on its own inpainted background (Poisson): the
                   ring of the grown hole around the object + the paste;
- ``size1_alpha``  the same with an alpha paste;
- ``remove``       the inpainted background alone (no object): what the background and any
                   object left outside the mask still tell the model;
- ``own_blur``     the object (alpha) on its own inpainted background blurred (sigma 3): a
                   CPU stand-in for the paper's "simpler" background of the *same* image.

    python bench/imagenet_e_cpu_study.py /tmp/ine_study/in9 [MORE_IN9 ...] \\
        --model tf_efficientnet_lite0 --output /tmp/ine_study/study [--limit 100] [--cli]

``--cli`` also builds the new default and the earlier recipe (``--size-method object --blend
poisson``) with ``bgbench build imagenet-e`` from the first folder and scores them with
``bgbench evaluate``, as a check against the toolkit's own numbers. Run by hand; not a test.
"""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
import time
from pathlib import Path

import cv2
import numpy as np
import torch
from PIL import Image

from hf_bgbench.benchmarks import all_specs
from hf_bgbench.benchmarks.imagenet_e import work as work_mod
from hf_bgbench.benchmarks.imagenet_e.build import EditBuildOptions, _assign
from hf_bgbench.benchmarks.imagenet_e.edit_set import apply_edit
from hf_bgbench.benchmarks.imagenet_e.sources import from_hub, hub_sources
from hf_bgbench.edits import seeded_rng
from hf_bgbench.edits.geometry import paste
from hf_bgbench.edits.inpaint import remove_object
from hf_bgbench.inference.allocator import keep_freed_memory

EDITS = (
    "bg_random",
    "bg_simpler",
    "bg_complex",
    "size_full",
    "size_0.1",
    "size_0.08",
    "size_0.05",
    "position",
    "rotation",
)
SIZE_EDITS = ("size_full", "size_0.1", "size_0.08", "size_0.05", "position")
BG_EDITS = ("bg_random", "bg_simpler", "bg_complex")
VARIANTS = {
    # name: (inpaint method, hole growth, blend, size method, edits)
    "object": ("telea", 7, "poisson", "object", EDITS),
    "alpha": ("telea", 7, "alpha", "object", (*BG_EDITS, "size_0.05", "position")),
    "ns-d3": ("ns", 3, "poisson", "object", ("bg_simpler", "size_0.05", "position", "rotation")),
    "whole": ("telea", 7, "poisson", "whole", SIZE_EDITS),
    "whole-bg": ("telea", 7, "poisson", "whole", ("size_0.05", "position")),
    "whole-bg-alpha": ("telea", 7, "alpha", "whole", EDITS),
    "whole-bg-alpha-ns3": ("ns", 3, "alpha", "whole", EDITS),
}
FRAME = {"whole": "outpaint"}  # the frame a shrunk photo leaves (default: background)
CONTROLS = ("paste_self", "size1", "size1_alpha", "remove", "own_blur")
PAPER = {  # the paper's averages over models quoted in SPEC §3 (points)
    "bg_complex": "9.23 (λ=20)",
    "size_0.05": "18.34",
}


def jpeg_roundtrip(image: np.ndarray) -> Image.Image:
    """The image as the build stores it (JPEG q95 4:4:4) and a reader decodes it."""
    return Image.open(io.BytesIO(work_mod.encode_image(image, "jpeg"))).convert("RGB")


class Scorer:
    def __init__(self, model_id: str):
        from hf_bgbench import load_classifier

        self.classifier = load_classifier(model_id)
        self.transform = self.classifier.preprocessing.full_transform(normalize=True)

    @torch.inference_mode()
    def correct(self, images: list[np.ndarray], labels: list[int]) -> np.ndarray:
        out = []
        for lo in range(0, len(images), 32):
            batch = torch.stack([self.transform(jpeg_roundtrip(i)) for i in images[lo : lo + 32]])
            out.append(self.classifier(batch).argmax(1).numpy())
        return np.concatenate(out) == np.asarray(labels)


def bootstrap_halfwidth(base: np.ndarray, edit: np.ndarray, n: int = 1000) -> float:
    rng = np.random.default_rng(0)
    idx = rng.integers(0, len(base), (n, len(base)))
    das = base[idx].mean(1) - edit[idx].mean(1)
    lo, hi = np.percentile(das, [2.5, 97.5])
    return float((hi - lo) / 2)


def stage1(source, work: Path, limit: int | None, seed: int):
    """Fit + inpaint (telea, the build's stage 1) for every photo, cached."""
    work.mkdir(parents=True, exist_ok=True)
    items = list(source.items)
    if limit is not None and limit < len(items):
        pick = np.random.default_rng(seed).choice(len(items), limit, replace=False)
        items = [items[i] for i in sorted(pick)]
    measured, kept = {}, []
    for item in items:
        task = work_mod.PrepareTask(
            item.id, item.image, item.mask, work_mod.CANVAS, "telea", str(work / f"{item.id}.npz")
        )
        image_id, status, measures = work_mod.prepare_image(task)
        if status == work_mod.KEPT:
            measured[image_id] = measures
            kept.append(item)
    return kept, measured


def load(work: Path, image_id: str) -> dict[str, np.ndarray]:
    with np.load(work / f"{image_id}.npz") as z:
        return {k: z[k] for k in ("image", "mask", "clean")}


def clean_of(data, method: str, dilate: int, cache: dict, image_id: str) -> np.ndarray:
    if (method, dilate) == ("telea", 7):
        return data["clean"]
    key = (image_id, method, dilate)
    if key not in cache:
        cache[key] = remove_object(data["image"], data["mask"], method=method, dilate=dilate).image
    return cache[key]


def control(name: str, data) -> np.ndarray:
    img, m, clean = data["image"], data["mask"], data["clean"]
    if name == "paste_self":
        return paste(img, img, m, blend="poisson")
    if name in ("size1", "size1_alpha"):
        blend = "alpha" if name == "size1_alpha" else "poisson"
        return paste(clean, img, m, blend=blend)
    if name == "remove":
        return clean
    if name == "own_blur":
        return paste(cv2.GaussianBlur(clean, (0, 0), 3), img, m, blend="alpha")
    raise ValueError(name)


def run_study(args) -> dict:
    t0 = time.time()
    torch.set_num_threads(max(1, args.threads))
    sources = [from_hub("in9", folder, hub_sources(all_specs())) for folder in args.in9]
    source = sources[0]
    for more in sources[1:]:  # several IN-9 builds (e.g. one per class: no balancing)
        source.items.extend(more.items)
    work = args.output / "work"
    kept, measured = stage1(source, work, args.limit, args.seed)
    print(f"stage 1: {len(kept)} photos kept ({time.time() - t0:.0f}s)", flush=True)
    rows, _ = _assign(kept, measured, EditBuildOptions(output=args.output, seed=args.seed))
    other = {e: {r.id: r.other for r in rows[e]} for e in ("bg_random", "bg_simpler", "bg_complex")}
    ids = [i.id for i in kept]
    labels = [i.label for i in kept]
    scorer = Scorer(args.model)
    datas = {i: load(work, i) for i in ids}
    results: dict[str, dict[str, np.ndarray]] = {}
    base = scorer.correct([datas[i]["image"] for i in ids], labels)
    panels: dict[str, dict[str, np.ndarray]] = {i: {"original": datas[i]["image"]} for i in ids}
    cache: dict = {}
    chosen = args.variants.split(",") if args.variants else list(VARIANTS)
    for variant in chosen:
        method, dilate, blend, size_method, edits = VARIANTS[variant]
        results[variant] = {}
        for edit in edits:
            images = []
            for i in ids:
                d = datas[i]
                clean = clean_of(d, method, dilate, cache, i)
                oth = other[edit].get(i) if edit in other else None
                res = apply_edit(
                    edit,
                    d["image"],
                    d["mask"],
                    clean=clean,
                    rng=seeded_rng(args.seed, i, edit),
                    other=clean_of(datas[oth], method, dilate, cache, oth) if oth else None,
                    blend=blend,
                    size_method=size_method,
                    inpaint=method,
                    frame=FRAME.get(variant, "background"),
                )
                images.append(res.image)
                panels[i][f"{variant}:{edit}"] = res.image
            results[variant][edit] = scorer.correct(images, labels)
        print(f"variant {variant}: done ({time.time() - t0:.0f}s)", flush=True)
    results["control"] = {}
    for name in CONTROLS if not args.variants else ():
        images = [control(name, datas[i]) for i in ids]
        for i, im in zip(ids, images, strict=True):
            panels[i][f"control:{name}"] = im
        results["control"][name] = scorer.correct(images, labels)
    print(f"controls: done ({time.time() - t0:.0f}s)", flush=True)
    table = {
        "n": len(ids),
        "acc_original": float(base.mean()),
        "ids": ids,
        "correct": {"original": base.astype(int).tolist()}
        | {
            f"{v}:{e}": c.astype(int).tolist() for v, per in results.items() for e, c in per.items()
        },
        "da": {
            v: {
                e: [
                    round(100 * float(base.mean() - c.mean()), 2),
                    round(100 * bootstrap_halfwidth(base, c), 2),
                ]
                for e, c in per.items()
            }
            for v, per in results.items()
        },
    }
    try:
        write_panels(args.output / "panels", panels, args.panels, args.seed)
    except (KeyError, ValueError) as err:  # the panels are a convenience, never the numbers
        print(f"panels not written: {err!r}")
    return table


def write_panels(folder: Path, panels, count: int, seed: int) -> None:
    """Side-by-side PNGs (rows: a few photos; columns: original and some edits)."""
    folder.mkdir(parents=True, exist_ok=True)
    ids = sorted(panels)
    pick = [ids[i] for i in np.random.default_rng(seed).permutation(len(ids))[:count]]
    groups = {
        "size": [
            "original",
            "control:size1",
            "object:size_full",
            "whole-bg-alpha:size_full",
            "object:size_0.05",
            "whole:size_0.05",
            "whole-bg-alpha:size_0.05",
            "object:position",
            "whole-bg-alpha:position",
        ],
        "background": [
            "original",
            "control:remove",
            "control:paste_self",
            "object:bg_simpler",
            "whole-bg-alpha:bg_simpler",
            "control:own_blur",
            "object:rotation",
            "whole-bg-alpha:rotation",
        ],
    }
    for group, cols in groups.items():
        cols = [c for c in cols if c in panels[pick[0]]]  # the variants made this run
        rows = [np.concatenate([panels[i][c] for c in cols], axis=1) for i in pick]
        grid = np.concatenate(rows, axis=0)
        Image.fromarray(grid).save(folder / f"{group}.png")
        (folder / f"{group}.txt").write_text(
            "columns: " + ", ".join(cols) + "\nrows: " + ", ".join(pick) + "\n"
        )


def print_table(table: dict) -> None:
    print(f"\nn = {table['n']} photos; acc(original) = {100 * table['acc_original']:.1f}%")
    edits = list(EDITS)
    variants = [v for v in table["da"] if v != "control"]
    print("DA (points, ± paired-bootstrap 95% half-width)")
    print(f"{'edit':12s}" + "".join(f"{v:>20s}" for v in variants) + f"{'paper avg':>14s}")
    for e in edits:
        cells = []
        for v in variants:
            got = table["da"][v].get(e)
            cells.append(f"{got[0]:7.1f} ±{got[1]:4.1f}" if got else f"{'(= object)':>20s}")
        print(f"{e:12s}" + "".join(f"{c:>20s}" for c in cells) + f"{PAPER.get(e, ''):>14s}")
    print("controls:")
    for name, (da, hw) in table["da"].get("control", {}).items():
        print(f"  {name:12s} {da:7.1f} ±{hw:4.1f}")


def run_cli(args) -> None:
    """The toolkit's own build + evaluate for the two size methods (a cross-check)."""
    for method, blend in (("whole", "alpha"), ("object", "poisson")):
        out = args.output / f"cli_{method}"
        build = [
            "bgbench",
            "build",
            "imagenet-e",
            "--from",
            "in9",
            str(args.in9[0]),
            "--output",
            str(out / "data"),
            "--workers",
            str(args.workers),
            "--size-method",
            method,
            "--blend",
            blend,
            "--seed",
            str(args.seed),
            "--quiet",
        ]
        ev = [
            "bgbench",
            "evaluate",
            args.model,
            "--benchmark",
            "imagenet-e",
            "--data",
            str(out / "data"),
            "--output",
            str(out / "eval"),
            "--quiet",
        ]
        for cmd in (build, ev):
            print("$ " + " ".join(cmd), flush=True)
            subprocess.run(cmd, check=True)


def main(argv: list[str] | None = None) -> int:
    keep_freed_memory()  # as every bgbench command does: the raw forward must not page-fault
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument(
        "in9",
        type=Path,
        nargs="+",
        help="IN-9 build folder(s) (bgbench build in9); the "
        "photos of all are pooled; the --cli check builds from the first",
    )
    p.add_argument("--model", default="tf_efficientnet_lite0", help="model id")
    p.add_argument("--output", type=Path, required=True, help="work folder (cache, panels, json)")
    p.add_argument("--limit", type=int, default=None, help="a seeded subset of N photos")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--panels", type=int, default=6, help="photos in the side-by-side PNGs")
    p.add_argument("--threads", type=int, default=1, help="torch threads")
    p.add_argument("--workers", type=int, default=2, help="--workers of the --cli builds")
    p.add_argument("--cli", action="store_true", help="also bgbench build + evaluate")
    p.add_argument(
        "--variants",
        default="",
        help=f"only these (comma-separated, of {list(VARIANTS)}; no controls then)",
    )
    args = p.parse_args(argv)
    table = run_study(args)
    name = f"study-{args.variants.replace(',', '+')}.json" if args.variants else "study.json"
    (args.output / name).write_text(json.dumps(table, indent=2) + "\n")
    print_table(table)
    if args.cli:
        run_cli(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
