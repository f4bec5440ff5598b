"""`bgbench evaluate` equals an independent implementation of the published IN-9 protocol.

The independent side follows the authors' evaluation: torchvision ImageFolder over
``bg_challenge/<variant>/val``, ToTensor only (the images are already 224x224), the model's
normalisation, argmax over all 1000 logits, mapped through the published in_to_in9.json.
"""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
import torch
from PIL import Image
from torchvision import datasets as tv_datasets
from torchvision import transforms

from hf_bgbench.cli import main
from hf_bgbench.models import load_classifier

CLASS_DIRS = [
    "00_dog",
    "01_bird",
    "02_vehicle",
    "03_reptile",
    "04_carnivore",
    "05_insect",
    "06_instrument",
    "07_primate",
    "08_fish",
]


def _release_from_photos(shared_data, root, per_class=3):
    """original + a 'mixed_rand' stand-in (photos flipped left-right) from the real photos."""
    rows = list(csv.DictReader(open(shared_data / "in9_samples" / "metadata.csv")))
    taken: dict[int, int] = {}
    for row in rows:
        y = int(row["in9_index"])
        if taken.get(y, 0) >= per_class:
            continue
        taken[y] = taken.get(y, 0) + 1
        img = Image.open(shared_data / "in9_samples" / "images" / row["file"]).convert("RGB")
        img = transforms.CenterCrop(224)(transforms.Resize(256)(img))
        for variant, view in (
            ("original", img),
            ("mixed_rand", img.transpose(Image.FLIP_LEFT_RIGHT)),
        ):
            folder = root / "bg_challenge" / variant / "val" / CLASS_DIRS[y]
            folder.mkdir(parents=True, exist_ok=True)
            view.save(folder / f"{row['wnid']}_{taken[y]}.JPEG", quality=90)
    return root


def _independent_accuracy(model, root, variant, shared_data, mean, std):
    in_to_in9 = json.loads((shared_data / "reference" / "in_to_in9.json").read_text())
    table = np.array([in_to_in9[str(i)] for i in range(1000)])
    tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize(mean, std)])
    folder = tv_datasets.ImageFolder(str(root / "bg_challenge" / variant / "val"), transform=tf)
    loader = torch.utils.data.DataLoader(folder, batch_size=16, shuffle=False)
    correct = total = 0
    with torch.no_grad():
        for x, y in loader:
            pred = table[model(x).argmax(dim=1).numpy()]
            correct += int((torch.from_numpy(pred) == y).sum())
            total += len(y)
    return correct / total, total


def test_evaluate_matches_an_independent_published_protocol(shared_data, tmp_path):
    root = _release_from_photos(shared_data, tmp_path / "release")
    out = tmp_path / "out"
    assert (
        main(
            [
                "evaluate",
                "tf_efficientnet_lite0",
                "--benchmark",
                "in9",
                "--data",
                str(root),
                "--output",
                str(out),
                "--quiet",
                "--no-cache",
            ]
        )
        == 0
    )
    results = json.loads((out / "results.json").read_text())
    clf = load_classifier("tf_efficientnet_lite0", device="cpu")
    pre = clf.preprocessing
    assert results["preprocessing"]["applied"] == "precropped"
    for variant in ("original", "mixed_rand"):
        acc, n = _independent_accuracy(clf.model, root, variant, shared_data, pre.mean, pre.std)
        assert results["variants"][variant]["n"] == n == 27
        assert results["variants"][variant]["accuracy"] == pytest.approx(acc, abs=1e-12)
    assert results["variants"]["original"]["accuracy"] >= 0.85
