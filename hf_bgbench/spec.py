"""What a benchmark is, as data: :class:`BenchmarkSpec`.

A spec declares the classes, the variants, how a model's label space maps onto the
benchmark's classes, which metrics apply (instances of the kinds in
:mod:`hf_bgbench.scoring`), which tasks (protocols) can run on it, and its hooks: the
modules of its own folder (``hf_bgbench/benchmarks/<name>/``) that read its release, build
it, write its card, check it and download it. Everything outside that folder reads the spec
instead of naming a benchmark. The registry of specs is :mod:`hf_bgbench.benchmarks`.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hf_bgbench.labels import LabelSpace


@dataclass(frozen=True)
class BenchmarkSpec:
    name: str
    title: str
    label_space: LabelSpace
    variants: tuple[str, ...]
    reference_variant: str
    hub_repo: str
    # model label-space kind -> function returning int64[num_model_classes] of benchmark labels
    # (-1 for classes outside the benchmark). Lazy so importing the registry stays cheap.
    label_maps: dict[str, Callable[[], np.ndarray]] = field(default_factory=dict)
    # Metrics beyond per-variant accuracy (kinds of hf_bgbench.scoring), in report order.
    metrics: tuple[Any, ...] = ()
    # Tasks (protocols) that apply, by name (hf_bgbench.tasks registry).
    tasks: tuple[str, ...] = ("evaluate",)
    # Readers of this benchmark's own release layouts ("module:Class"), tried before the
    # generic ones (Hub dataset, Hub-layout folder, photo folder).
    readers: tuple[str, ...] = ()
    # Variants whose rows are the same images (same ids) with a different foreground /
    # background treatment; scoring checks that their ids agree before comparing them.
    aligned_variants: tuple[str, ...] = ()
    # When no --data is given and the Hub dataset cannot be had: a function ("module:name")
    # returning the folder of an earlier download (or None), and the command that downloads.
    cached_download: str = ""
    download_command: str = ""
    # The variant whose rows carry the object (foreground) mask, and its column: what the
    # noise and saliency tasks use (IN-9: original / mask; RIVAL10: ordinary / object_mask).
    mask_variant: str = ""
    mask_column: str = "mask"
    # How a model's outputs become benchmark labels by default: "model" (its own classes,
    # mapped through label_maps or by name) or "probe" (a linear head on frozen features,
    # fitted on ``train_split``; RIVAL10's protocol).
    default_label_map: str = "model"
    train_split: str = "train"
    # The data's licence forbids public redistribution: `bgbench publish` refuses a public repo.
    publish_private_only: bool = False
    # True when the benchmark's images are already cropped to the evaluation size, so only
    # resizing to the model's input size and normalising is applied (the published protocol).
    images_precropped: bool = True
    citation: str = ""
    description: str = ""

    @property
    def classes(self) -> tuple[str, ...]:
        return self.label_space.names

    @property
    def num_classes(self) -> int:
        return self.label_space.num_classes

    def check_task(self, task: str) -> None:
        """Raise a ValueError if ``task`` does not apply to this benchmark."""
        if task not in self.tasks:
            raise ValueError(
                f"The {task!r} task does not apply to benchmark {self.name!r}; it offers: "
                f"{', '.join(self.tasks)}."
            )

    def metric_names(self) -> list[str]:
        return ["accuracy", *(m.name for m in self.metrics)]

    def check_variants(self, variants: list[str] | tuple[str, ...]) -> list[str]:
        """Return ``variants`` unchanged, or raise a ValueError naming the unknown ones."""
        unknown = [v for v in variants if v not in self.variants]
        if unknown:
            hints = {v: difflib.get_close_matches(v, self.variants, n=1) for v in unknown}
            said = ", ".join(
                f"{v!r}" + (f" (did you mean {h[0]!r}?)" if h else "") for v, h in hints.items()
            )
            raise ValueError(
                f"Unknown {self.name} variant(s): {said}. "
                f"Valid variants: {', '.join(self.variants)}."
            )
        return list(variants)
