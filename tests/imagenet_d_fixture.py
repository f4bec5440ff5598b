"""A tiny ImageNet-D in the Hub dataset's own layout (``zcs15/ImageNet-D``)::

    ImageNet-D/{background,texture,material}/<class folder>/<name>.png
    ImageNet-D/questions/<subset>.csv   (tab-separated, as evaluate_vlm.py writes it)

Every image is one flat colour that spells the ImageNet-1k class :class:`IndexColourClassifier`
predicts for it (red * 4 + green // 64), so each protocol's number can be worked out by hand
from :data:`CASES` and the authors' map (:data:`AUTHORS_MAP`, their lists for these classes).
"""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import numpy as np
import torch
from PIL import Image

from tests.in9_fixture import ColourRuleClassifier

SIZE = 48
# subset -> (class folder, the ImageNet index the model predicts, the questions table's top
# two guesses, in the authors' class names)
CASES = {
    "background": [
        ("alarm_clock", 530, "alarm clock", "watch"),  # the class's second index: right
        ("chair", 765, "bench", "chair"),  # third of three: right
        ("pen", 0, "pen", "can opener"),  # tench, outside the 125: wrong
        ("wok", 414, "frying pan", "wok"),  # backpack: another class, wrong
    ],
    "texture": [
        ("backpack", 414, "backpack", "sleeping bag"),
        ("plate", 729, "drying rack for plates", "plate"),  # the rack: wrong
    ],
    "material": [
        ("t_shirt", 610, "t shirt", "sweater"),
        ("tie", 906, "necklace", "tie"),  # tie's second index: right
    ],
}
CLEAN_CASES = [  # (the ImageNet class of a clean photo, the index the model predicts)
    (409, 409),  # alarm clock: right
    (530, 0),  # digital clock, which counts as alarm clock: wrong
    (423, 765),  # barber chair predicted rocking chair: both chair, right
    (414, 414),  # backpack: right
    (906, 457),  # Windsor tie predicted bow tie: both tie, right
    (1, 1),  # goldfish: no ImageNet-D class, skipped and counted
]
AUTHORS_MAP = {  # preprocessing/imgnet_d2imgnet_id.txt, these classes' entries
    "alarm_clock": [409, 530],
    "chair": [423, 559, 765],
    "pen": [418, 749, 563],
    "wok": [909],
    "backpack": [414],
    "plate": [923],
    "t_shirt": [610],
    "tie": [457, 906],
}
AUTHORS_NAME = {  # the authors' class names of the folders above
    "alarm_clock": "alarm clock",
    "chair": "chair",
    "pen": "pen",
    "wok": "wok",
    "backpack": "backpack",
    "plate": "plate",
    "t_shirt": "t shirt",
    "tie": "tie",
}


def colour_of(index: int) -> tuple[int, int, int]:
    return index // 4, (index % 4) * 64 + 32, 128


def image_dir(subset: str, folder: str) -> str:
    return f"{subset}/{folder}/{folder}_0.png"


def write_clean(folder: Path) -> Path:
    """:data:`CLEAN_CASES` as ImageNet photos in wnid class folders."""
    from hf_bgbench.labels import imagenet_classes

    wnids = imagenet_classes()[0]
    for n, (truth, index) in enumerate(CLEAN_CASES):
        path = folder / wnids[truth] / f"{wnids[truth]}_{n}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        pixels = np.zeros((SIZE, SIZE, 3), np.uint8) + np.array(colour_of(index), np.uint8)
        Image.fromarray(pixels).save(path)
    return folder


def write_imagenet_d(root: Path, *, questions: bool = True, clean: bool = False) -> Path:
    """The release under ``root/ImageNet-D`` (returned); with ``clean``, clean photos in its
    ``clean/`` folder."""
    release = root / "ImageNet-D"
    if clean:
        write_clean(release / "clean")
    for subset, cases in CASES.items():
        rows = []
        for folder, index, top1, top2 in cases:
            path = release / image_dir(subset, folder)
            path.parent.mkdir(parents=True, exist_ok=True)
            pixels = np.zeros((SIZE, SIZE, 3), np.uint8) + np.array(colour_of(index), np.uint8)
            Image.fromarray(pixels).save(path)
            rows.append([image_dir(subset, folder), AUTHORS_NAME[folder], top1, top2])
        if questions:
            table = release / "questions" / f"{subset}.csv"
            table.parent.mkdir(parents=True, exist_ok=True)
            with open(table, "w", newline="") as f:
                writer = csv.writer(f, delimiter="\t")
                writer.writerow(["image_dir", "gt_category", "top1_pred_cate", "top2_pred_cate"])
                writer.writerows(rows)
    return release


def as_hub_cache(release: Path, cache: Path, commit: str = "c" * 40) -> Path:
    """``release`` as the Hugging Face cache keeps the dataset zcs15/ImageNet-D (its snapshot
    returned), so an offline ``snapshot_download`` finds it."""
    repo = cache / "datasets--zcs15--ImageNet-D"
    shutil.copytree(release, repo / "snapshots" / commit)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    return repo / "snapshots" / commit


def authors_classifier_accuracy(subset: str) -> float:
    """evaluate_imagenet_models.py's top-1: right when the prediction is any of the class's
    ImageNet indices."""
    cases = CASES[subset]
    return sum(index in AUTHORS_MAP[folder] for folder, index, _, _ in cases) / len(cases)


def hard_negative(folder: str, top1: str, top2: str) -> str:
    """eval_imagenet_d.py's negative: the top guess when it is wrong, else the second."""
    return top1 if top1 != AUTHORS_NAME[folder] else top2


class IndexColourClassifier(ColourRuleClassifier):
    """1000 logits: the ImageNet class the image's flat colour spells (:func:`colour_of`)."""

    def __init__(self) -> None:
        super().__init__("imagenet-1k")
        self.model_id = self.resolved = "index-colour"

    def logits(self, x: torch.Tensor) -> torch.Tensor:
        mean = x.float().mean(dim=(2, 3)) * 255
        index = (mean[:, 0].round() * 4 + mean[:, 1].round() // 64).long()
        out = torch.zeros(len(x), 1000)
        out[torch.arange(len(x)), index] = 10.0
        return out
