"""Tiny classifiers written as the Hub serves them, for tests that score a model folder."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


def write_transformers_classifier(folder: Path, class_names: Sequence[str]) -> Path:
    """A randomly initialised transformers ResNet (two small stages) over ``class_names`` --
    its ``id2label`` -- and its image processor (shortest edge 224), saved to ``folder``."""
    from transformers import ConvNextImageProcessor, ResNetConfig, ResNetForImageClassification

    names = list(class_names)
    config = ResNetConfig(
        num_labels=len(names),
        hidden_sizes=[8, 16],
        depths=[1, 1],
        embedding_size=8,
        id2label=dict(enumerate(names)),
        label2id={n: i for i, n in enumerate(names)},
    )
    ResNetForImageClassification(config).save_pretrained(folder)
    ConvNextImageProcessor(size={"shortest_edge": 224}).save_pretrained(folder)
    return folder
