"""From a model's outputs to benchmark predictions.

The published IN-9 protocol for a 1000-class ImageNet model: argmax over all 1000 logits,
then map the class through ``in_to_in9``; a class outside the benchmark (-1) is wrong.
``restrict=True`` is the named alternative: argmax only over the mapped classes.
A model whose classes *are* the benchmark's (by name, any order) is scored directly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from hf_bgbench.labels import UNMAPPED, LabelSpace
from hf_bgbench.spec import BenchmarkSpec

PUBLISHED_PROTOCOL = "argmax over all model classes, then map to the benchmark; unmapped = wrong"
RESTRICTED_PROTOCOL = "argmax restricted to the model classes that map to the benchmark"


class LabelSpaceError(ValueError):
    """A model's classes cannot be mapped onto the benchmark's."""


def class_map(model_space: LabelSpace, spec: BenchmarkSpec) -> np.ndarray:
    """int64[model classes]: the benchmark label of each model class (-1 = outside)."""
    if model_space.kind in spec.label_maps:
        table = spec.label_maps[model_space.kind]()
        if len(table) != model_space.num_classes:
            raise LabelSpaceError(
                f"The model has {model_space.num_classes} outputs but the {model_space.kind} "
                f"map of {spec.name} expects {len(table)}."
            )
        return np.asarray(table, dtype=np.int64)
    names = {n.lower(): i for i, n in enumerate(spec.classes)}
    table = np.array([names.get(n.lower(), UNMAPPED) for n in model_space.names], dtype=np.int64)
    covered = set(table[table >= 0].tolist())
    if len(covered) == spec.num_classes:
        return table
    if model_space.kind == spec.label_space.kind and model_space.num_classes == spec.num_classes:
        return np.arange(spec.num_classes, dtype=np.int64)
    missing = [c for i, c in enumerate(spec.classes) if i not in covered]
    known = ", ".join(sorted(spec.label_maps)) or "none"
    raise LabelSpaceError(
        f"Cannot score a model with {model_space.num_classes} classes ({model_space.kind}: "
        f"{', '.join(model_space.names[:5])}{', ...' if model_space.num_classes > 5 else ''}) on "
        f"{spec.name}: its class names do not cover {missing}. Use a model trained on ImageNet-1k "
        f"(mapped label spaces: {known}) or on the {spec.num_classes} {spec.name} classes, with "
        f"id2label names {list(spec.classes)}."
    )


@dataclass
class LabelMapper:
    """Maps logits (N, C_model) to benchmark predictions and the true-class probability."""

    table: np.ndarray
    restrict: bool = False

    @classmethod
    def for_model(cls, model_space: LabelSpace, spec: BenchmarkSpec, restrict: bool = False):
        return cls(class_map(model_space, spec), restrict)

    @property
    def protocol(self) -> str:
        return RESTRICTED_PROTOCOL if self.restrict else PUBLISHED_PROTOCOL

    def __call__(
        self, logits: torch.Tensor, labels: torch.Tensor
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(benchmark prediction, model-space argmax, probability of the true benchmark class)."""
        logits = logits.float()
        table = torch.as_tensor(self.table, device=logits.device)
        if self.restrict:
            logits = logits.masked_fill(table < 0, float("-inf"))
        pred_model = logits.argmax(dim=1)
        pred = table[pred_model]
        probs = logits.softmax(dim=1)
        # P(benchmark class y) = sum of the probabilities of the model classes mapped to y.
        in_true = table.unsqueeze(0) == labels.to(logits.device).unsqueeze(1)
        prob_true = (probs * in_true).sum(dim=1)
        return pred.cpu().numpy(), pred_model.cpu().numpy(), prob_true.cpu().numpy()
