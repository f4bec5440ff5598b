"""The :class:`Classifier` wrapper, label-space inference and weight fingerprints."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from typing import Any

import torch

from hf_bgbench.labels import LabelSpace, benchmark_label_spaces, imagenet_label_space
from hf_bgbench.models.preprocessing import Preprocessing

HEADLESS = "none"
"""The label space kind of an image backbone without classes (timm ``num_classes=0``, e.g. a
DINOv2 tower; a zero-shot model's image tower loaded without its text head): it is scored
only through a linear probe."""

_GENERIC_NAME = re.compile(r"^(label|class|cls)?[ _-]?\d+$", re.IGNORECASE)


def _norm(name: str) -> str:
    return str(name).strip().lower()


def infer_label_space(
    num_classes: int,
    names: Sequence[str] | None = None,
    candidates: Sequence[LabelSpace] | None = None,
) -> LabelSpace:
    """Label space of a model with ``num_classes`` outputs and (optionally) class names.

    ``candidates``: the benchmarks' own label spaces a model may speak (default: those of
    the registered benchmarks, :func:`hf_bgbench.labels.benchmark_label_spaces`); the first
    that fits wins.

    * 1000 outputs -> ``imagenet-1k`` (canonical ImageNet names, index order).
    * names equal to a candidate's class names, any case and order -> that candidate's kind
      with the model's own names in the model's own order.
    * no names or generic names (``LABEL_0``...): as many outputs as a candidate has
      classes -> that candidate, in its label order -- an assumption (``order_assumed``),
      right for a model trained by the authors' scripts, wrong for any other order; the
      tasks say it and record it in results' ``label_protocol`` (:data:`ORDER_ASSUMED`).
    * otherwise ``custom`` with the model's names (or ``"0"``, ``"1"``, ...).
    """
    num_classes = int(num_classes)
    names = [str(n) for n in names] if names is not None else None
    if names is not None and len(names) != num_classes:
        names = None  # inconsistent metadata; fall back to the output count
    if num_classes == 1000:
        return imagenet_label_space()
    spaces = benchmark_label_spaces() if candidates is None else tuple(candidates)
    generic = names is None or all(_GENERIC_NAME.match(n.strip()) for n in names)
    if not generic:
        normed = sorted(_norm(n) for n in names)
        for space in spaces:
            if normed == sorted(_norm(n) for n in space.names):
                return LabelSpace(space.kind, tuple(names))
        return LabelSpace("custom", tuple(names))
    for space in spaces:
        if num_classes == space.num_classes:  # a guess: said and recorded (label_protocol)
            return LabelSpace(space.kind, space.names, order_assumed=True)
    return LabelSpace(
        "custom", tuple(names) if names else tuple(str(i) for i in range(num_classes))
    )


ORDER_ASSUMED = (
    "the model names no classes ({first}, ...), so its {n} outputs were taken to be the "
    "benchmark's classes in the benchmark's label order ({order}); if they are in another order, "
    "name them in the model's config: id2label in config.json (transformers) or label_names in "
    "its pretrained_cfg (timm)"
)
"""The assumption said and recorded when a model's class order is guessed (format with
``first``: its first output's name, ``n``, ``order``: the benchmark's classes)."""


def state_dict_digest(model: torch.nn.Module) -> str:
    """sha256 over every parameter/buffer name, dtype, shape and value (CPU copy)."""
    h = hashlib.sha256()
    for name, t in model.state_dict().items():
        if not isinstance(t, torch.Tensor):
            continue
        t = t.detach()
        h.update(f"{name}|{t.dtype}|{tuple(t.shape)}|".encode())
        if t.numel() == 0:
            continue
        if t.device.type != "cpu":
            t = t.cpu()
        flat = t.contiguous().reshape(-1)
        h.update(flat.view(torch.uint8).numpy().tobytes())
    return h.hexdigest()


def make_fingerprint(source: str, resolved: str, weights_digest: str, pre: Preprocessing) -> str:
    payload = {
        "source": source,
        "resolved": resolved,
        "weights": weights_digest,
        "preprocessing": pre.to_dict(),
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


class Classifier:
    """A loaded image classifier plus everything needed to feed and read it.

    Attributes: ``model_id`` (as the user gave it), ``resolved`` (what was loaded),
    ``source`` (``"timm"`` | ``"transformers"`` | ``"bundled"`` | ``"open_clip"``), ``model``
    (eval mode), ``preprocessing``, ``label_space`` and ``fingerprint`` (stable hash of the
    weights and preprocessing; same model loaded twice -> same fingerprint).

    The per-model record the tasks read instead of guessing by attribute names:
    ``zero_shot`` (the text side of a zero-shot head,
    :class:`hf_bgbench.models.zero_shot.ZeroShotText`; None for a trained head),
    ``cam_layer`` (the Grad-CAM layer's dotted name under ``model`` when the loader knows it;
    None: found by tracing), ``feature_fn`` (normalised batch -> (N, D) features for a linear
    probe, when the loader knows them, e.g. a CLIP's image embedding; None: the classification
    head's input) and ``features_source`` (what those features are, recorded).
    """

    zero_shot: Any = None
    cam_layer: str | None = None
    feature_fn: Any = None
    features_source: str = "the classification head's input (penultimate features)"
    any_input_size: bool = False  # takes images of any size as they are (a served model)
    vlm: dict | None = None  # a generative VLM's rule record (results' ``vlm``)

    def __init__(
        self,
        *,
        model_id: str,
        resolved: str,
        source: str,
        model: torch.nn.Module,
        preprocessing: Preprocessing,
        label_space: LabelSpace,
        fingerprint: str | None = None,
    ):
        self.model_id = model_id
        self.resolved = resolved
        self.source = source
        self.model = model.eval()
        self.preprocessing = preprocessing
        self.label_space = label_space
        self.fingerprint = fingerprint or make_fingerprint(
            source, resolved, state_dict_digest(model), preprocessing
        )

    @property
    def kind(self) -> str:
        """What it is (``hf_bgbench.models.loader.MODEL_KINDS``): ``trained`` or
        ``zero-shot`` here; a generative VLM's classifier says ``generative``."""
        return "zero-shot" if self.zero_shot is not None else "trained"

    @property
    def num_classes(self) -> int:
        return self.label_space.num_classes

    @property
    def device(self) -> torch.device:
        for p in self.model.parameters():
            return p.device
        for b in self.model.buffers():
            return b.device
        return torch.device("cpu")

    def to(self, device) -> Classifier:
        self.model.to(device)
        return self

    def logits(self, batch: torch.Tensor) -> torch.Tensor:
        """(N, C) float logits for a normalised batch (moved to the model's device).

        Gradients follow the caller's context: wrap in ``torch.inference_mode()`` for
        evaluation.
        """
        if batch.device != self.device:
            batch = batch.to(self.device, non_blocking=True)
        out = self.model(batch)
        if hasattr(out, "logits"):
            out = out.logits
        elif isinstance(out, (tuple, list)):
            out = out[0]
        elif isinstance(out, dict):
            out = out["logits"]
        if out.ndim != 2:
            raise RuntimeError(
                f"{self.model_id}: expected (N, C) logits, got shape {tuple(out.shape)}"
            )
        return out.float()

    __call__ = logits

    def usage(self) -> dict[str, Any]:
        """What scoring cost beyond this process (a served model's requests and tokens)."""
        return {}

    def describe(self) -> dict:
        """JSON-able summary (for results.json)."""
        return {
            "model_id": self.model_id,
            "resolved": self.resolved,
            "source": self.source,
            "label_space": self.label_space.kind,
            "num_classes": self.num_classes,
            "preprocessing": self.preprocessing.to_dict(),
            "fingerprint": self.fingerprint,
            "head": "zero-shot" if self.zero_shot is not None else "trained",
            **({"zero_shot": self.zero_shot.record()} if self.zero_shot is not None else {}),
        }

    def __repr__(self) -> str:
        return (
            f"Classifier({self.model_id!r}, resolved={self.resolved!r}, source={self.source!r}, "
            f"labels={self.label_space.kind}[{self.num_classes}], device={self.device})"
        )
