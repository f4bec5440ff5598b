"""``bgbench demo``: a small IN-9 built from generated photos, for a first run on a machine
with no ImageNet photo and no network. Each photo is a textured background in a class's hue
with one elliptical object of a contrasting colour, and its box; the real builder (GrabCut,
the eight variants) makes the dataset. It is a demo: the images are not ImageNet, so a number
on them shows how bgbench works, never how a model relies on backgrounds."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hf_bgbench.builders.arguments import folder_path, option
from hf_bgbench.builders.commands import Command, progress_option
from hf_bgbench.spec import BenchmarkSpec

PHOTO_SIZE = (200, 160)  # width, height (small: GrabCut's time grows with the pixels)
DEMO_NOTE = (
    "DEMO data: generated images, not ImageNet photos. A number on it shows how bgbench works, "
    "never how a model relies on backgrounds."
)


def class_wnids() -> list[str]:
    """The first ImageNet wnid of each IN-9 class, in label order."""
    from hf_bgbench.benchmarks.in9.labels import imagenet_to_in9
    from hf_bgbench.labels import imagenet_classes

    wnids, table = imagenet_classes()[0], imagenet_to_in9()
    return [wnids[int(np.flatnonzero(table == y)[0])] for y in range(9)]


def scene(label: int, k: int, size: Sequence[int] = PHOTO_SIZE, box_scale: float = 1.0):
    """(rgb uint8, object mask bool, box (x0, y0, x1, y1)) of generated photo ``k`` of class
    ``label`` (seeded by both: the same photo every time)."""
    w, h = size
    rng = np.random.default_rng(1000 * label + k)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    hue = np.array(
        [(label * 37) % 256, (label * 91 + 60) % 256, (label * 53 + 120) % 256], np.float32
    )
    stripes = 20 * np.sin(xx / (6 + label) + yy / 11)[..., None]
    background = 0.55 * hue + 40 + stripes + rng.normal(0, 6, (h, w, 3))
    cx, cy = w * (0.45 + 0.1 * rng.random()), h * (0.45 + 0.1 * rng.random())
    rx, ry = w * 0.16 * box_scale, h * 0.22 * box_scale
    truth = ((xx - cx) / rx) ** 2 + ((yy - cy) / ry) ** 2 <= 1.0
    colour = 255 - 0.55 * hue - 40
    obj = colour + 12 * np.sin(xx / 3)[..., None] + rng.normal(0, 4, (h, w, 3))
    rgb = np.where(truth[..., None], obj, background).clip(0, 255).astype(np.uint8)
    margin_x, margin_y = 0.12 * rx, 0.12 * ry
    box = (cx - rx - margin_x, cy - ry - margin_y, cx + rx + margin_x, cy + ry + margin_y)
    return rgb, truth, tuple(float(v) for v in box)


def voc_xml(filename: str, size: Sequence[int], boxes: Sequence[Sequence[float]]) -> str:
    """A PASCAL-VOC annotation (ImageNet's box format) of ``boxes`` on a photo of ``size``."""
    objects = "".join(
        f"<object><name>x</name><bndbox><xmin>{b[0]:.0f}</xmin><ymin>{b[1]:.0f}</ymin>"
        f"<xmax>{b[2]:.0f}</xmax><ymax>{b[3]:.0f}</ymax></bndbox></object>"
        for b in boxes
    )
    return (
        f"<annotation><filename>{filename}</filename><size><width>{size[0]}</width>"
        f"<height>{size[1]}</height><depth>3</depth></size>{objects}</annotation>"
    )


def write_photo(images: Path, boxes: Path, wnid: str, stem: str, rgb, box_list) -> None:
    """One photo and its boxes in ImageNet's layout: ``<wnid>/<stem>.JPEG`` and ``.xml``."""
    from PIL import Image

    (images / wnid).mkdir(parents=True, exist_ok=True)
    Image.fromarray(rgb).save(images / wnid / f"{stem}.JPEG", quality=95)
    if box_list:
        (boxes / wnid).mkdir(parents=True, exist_ok=True)
        size = (rgb.shape[1], rgb.shape[0])
        (boxes / wnid / f"{stem}.xml").write_text(voc_xml(f"{stem}.JPEG", size, box_list))


def write_demo_photos(root: Path, per_class: int) -> tuple[Path, Path]:
    """``per_class`` generated photos of each IN-9 class with their boxes under ``root``;
    returns (images, boxes) in ImageNet's layout."""
    images, boxes = root / "images", root / "boxes"
    for label, wnid in enumerate(class_wnids()):
        for k in range(per_class):
            rgb, _, box = scene(label, k)
            write_photo(images, boxes, wnid, f"{wnid}_{k}", rgb, [box])
    return images, boxes


@dataclass(frozen=True, kw_only=True)
class In9Demo:
    """Build a small IN-9 from generated photos (a demo: not ImageNet, never a benchmark
    number), then score any model on it with the command this prints."""

    output: Path = option(
        Path("bgbench_demo"), "the folder to write (photos/ and in9_demo/)", parse=folder_path
    )
    per_class: int = option(4, "generated photos per class (9 classes)")
    progress: bool = progress_option()


def demo(options: In9Demo, spec: BenchmarkSpec, specs: Sequence[BenchmarkSpec]) -> int:
    """``bgbench demo``: the photos, the IN-9 build of them, and the command to score."""
    from hf_bgbench.benchmarks.in9.build import BuildOptions, build_in9, summary_lines
    from hf_bgbench.files import check_folder

    if options.per_class < 2:
        raise ValueError(f"--per-class must be 2 or more, got {options.per_class}.")
    check_folder(options.output, "--output")  # else "[Errno 20]" once the photos are drawn
    images, boxes = write_demo_photos(options.output / "photos", options.per_class)
    data = options.output / "in9_demo"
    built = BuildOptions(
        images=images, boxes=boxes, output=data, overwrite=True, progress=options.progress
    )
    for line in summary_lines(build_in9(built, spec)):
        print(line)
    print(DEMO_NOTE)
    print(
        "Score a model on it: bgbench evaluate tf_efficientnet_lite0 "
        f"--data {data} --output {options.output / 'results'}"
    )
    return 0


DEMO = Command("demo", "a small IN-9 built from generated photos, to try bgbench", In9Demo, demo)
