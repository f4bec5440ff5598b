"""The one public model step: a batch of images -> what a task needs from the model.

Every task runs the model through :class:`ModelStep`, so device placement, mixed precision,
memory format, the model's own normalisation, the optional resize and the label mapping are
defined once:

* :meth:`ModelStep.predict` -- benchmark predictions, the model-space argmax and the
  probability of the true benchmark class (evaluate, challenge, noise, edits);
* :meth:`ModelStep.features` -- penultimate features (linear probes): timm
  ``forward_features`` + ``forward_head(pre_logits=True)``, transformers' input to the
  classification head (the pooled output);
* :meth:`ModelStep.logits_with_grad` / :meth:`ModelStep.gradient_module` -- a forward with
  gradients enabled (Grad-CAM and other saliency methods).

Inputs are either uint8 batches (as :func:`hf_bgbench.data.loader.decode_loader` yields
them) or float batches in [0, 1] (composites, noisy images). Both are normalised with the
same arithmetic (``x / 255`` then ``(x - mean) / std``), so a uint8 image and its [0, 1]
float give bit-identical logits.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import torch

from hf_bgbench.inference.mapping import LabelMapper
from hf_bgbench.models.devices import checked_precision, default_device
from hf_bgbench.models.preprocessing import Preprocessing


class SupportsLogits(Protocol):
    """What the model step needs from a classifier (see :class:`hf_bgbench.models.Classifier`):
    ``model`` (an ``nn.Module``), ``preprocessing`` (mean/std/input size/interpolation),
    ``fingerprint`` and ``logits(normalised batch) -> (N, C)``."""

    model: torch.nn.Module
    preprocessing: Any
    fingerprint: str

    def logits(self, batch: torch.Tensor) -> torch.Tensor: ...


@dataclass
class Predictions:
    """Per-image outputs of :meth:`ModelStep.predict` (numpy, on the CPU)."""

    pred: np.ndarray  # benchmark label predicted (-1: a class outside the benchmark)
    pred_model: np.ndarray  # argmax in the model's own label space
    prob_true: np.ndarray  # probability of the true benchmark class
    # per-image records the model keeps of how it scored (a VLM's class scores, its answer)
    extras: dict[str, list[Any]] = field(default_factory=dict)


AUTOCAST_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


@contextmanager
def ieee_fp32():
    """IEEE fp32 for CUDA convolutions and matrix products inside the block (torch lets
    cuDNN convolutions use TF32 by default: a 10-bit mantissa), the settings restored after."""
    conv, matmul = torch.backends.cudnn.conv, torch.backends.cuda.matmul
    saved = conv.fp32_precision, matmul.fp32_precision
    conv.fp32_precision = matmul.fp32_precision = "ieee"
    try:
        yield
    finally:
        conv.fp32_precision, matmul.fp32_precision = saved


class ModelStep:
    """``classifier`` on ``device`` with its normalisation, optional resize and ``mapper``.

    ``resize_to`` (H, W): batches of another size are resized on the device (the model's
    interpolation, antialiased) before normalisation; ``None`` feeds them as they are.
    On CUDA the model runs channels_last, in ``precision`` (:data:`PRECISIONS`): ``fp32``
    (the default) is IEEE fp32 -- TF32 off for convolutions and matrix products, so a GPU
    scores as the CPU and the authors' fp32 code do --, ``bf16`` / ``fp16`` run under
    autocast (faster; some predictions change: ``bench/gpu_check.sh`` counts them). A CPU
    runs fp32 only.

    ``pad_batches`` (default: on CUDA): a batch smaller than the largest this step has run
    is padded with zero images up to it, and its own rows returned. On a GPU each new batch
    shape costs cuDNN new plans for every convolution -- 1.5 to 2 s for tf_efficientnet_lite0
    on an H100, where a whole batch of 64 takes 5 ms -- and the challenge's schedule and every
    split's last batch make new shapes. Each image's logits do not depend on the rest of its
    batch (inference: no batch statistics).
    """

    def __init__(
        self,
        classifier: SupportsLogits,
        mapper: LabelMapper | None = None,
        device: str | torch.device | None = None,
        *,
        resize_to: Sequence[int] | None = None,
        pad_batches: bool | None = None,
        precision: str = "fp32",
    ):
        self.device = torch.device(device) if device is not None else default_device()
        self.precision = checked_precision(precision, self.device.type)
        self.classifier = classifier
        if hasattr(classifier, "to"):
            classifier.to(self.device)
        else:
            classifier.model.to(self.device)
        self.mapper = mapper
        self.cuda = self.device.type == "cuda"
        if self.cuda:
            classifier.model.to(memory_format=torch.channels_last)
        pre = classifier.preprocessing
        self.normalize_unit = pre.normalize_unit_batch
        # bgbench's own preprocessing normalises a batch it may overwrite in place
        self.normalizes_in_place = isinstance(pre, Preprocessing)
        self.interpolation = getattr(pre, "interpolation", "bilinear")
        self.resize_to = tuple(int(v) for v in resize_to) if resize_to else None
        self.pad_batches = self.cuda if pad_batches is None else pad_batches
        self.largest_batch = 0  # with pad_batches, smaller batches are padded up to it
        # image id -> the data values a model asks each image about (its ``row_columns``),
        # for the images about to be scored: given by the task that read them
        self.row_values: dict[Any, dict[str, Any]] = {}

    # ------------------------------------------------------------------ inputs

    def prepare(self, x: torch.Tensor) -> torch.Tensor:
        """uint8 (N, 3, H, W) or float in [0, 1] -> normalised float on the device."""
        x = x.to(self.device, non_blocking=True)
        owned = x.dtype == torch.uint8  # a new tensor from here on: normalised in place
        x = x.float().div_(255) if owned else x
        if self.resize_to is not None and tuple(x.shape[-2:]) != self.resize_to:
            owned = True
            mode = self.interpolation if self.interpolation in ("bilinear", "bicubic") else None
            x = torch.nn.functional.interpolate(
                x,
                size=self.resize_to,
                mode=mode or "nearest",
                antialias=mode is not None,
                align_corners=False if mode else None,
            ).clamp_(0, 1)
        if owned and self.normalizes_in_place:
            x = self.normalize_unit(x, inplace=True)
        else:
            x = self.normalize_unit(x)
        if self.cuda:
            x = x.contiguous(memory_format=torch.channels_last)
        return x

    def _padded(self, x: torch.Tensor) -> torch.Tensor:
        """``x`` padded with zero images up to the largest batch run so far (``pad_batches``);
        the caller keeps the first ``len(x)`` rows."""
        if not self.pad_batches or len(x) >= self.largest_batch:
            self.largest_batch = max(self.largest_batch, len(x))
            return x
        pad = x.new_zeros((self.largest_batch - len(x), *x.shape[1:]))
        x = torch.cat([x, pad])
        return x.contiguous(memory_format=torch.channels_last) if self.cuda else x

    def _amp(self):
        """The forward's numerics on this device (see the class docstring)."""
        if not self.cuda:
            return nullcontext()
        if self.precision == "fp32":
            return ieee_fp32()
        return torch.autocast("cuda", dtype=AUTOCAST_DTYPES[self.precision])

    # ------------------------------------------------------------------ modes

    def logits(self, x: torch.Tensor) -> torch.Tensor:
        """(N, C) float logits in the model's label space, no gradients."""
        with torch.inference_mode(), self._amp():
            x = self.prepare(x)
            return self.classifier.logits(self._padded(x))[: len(x)]

    def predict(
        self, x: torch.Tensor, labels: torch.Tensor | int, ids: Sequence[str] | None = None
    ) -> Predictions:
        """Benchmark predictions for ``x`` whose true benchmark labels are ``labels``
        (``ids``: the images' ids, for a model that asks each image its own question)."""
        if self.mapper is None:
            raise ValueError("ModelStep.predict needs a LabelMapper (pass mapper=...).")
        if not isinstance(labels, torch.Tensor):
            labels = torch.full((len(x),), int(labels), dtype=torch.long)
        scored = getattr(self.classifier, "scored", None)
        if scored is None:
            logits, extras = self.logits(x), {}
        else:  # a model that asks each image by its row, and keeps a record of each answer
            logits, extras = self._scored(scored, x, labels, ids)
        pred, pred_model, prob = self.mapper(logits, labels.to(logits.device))
        # the first rows: a batch padded on a GPU has its padding last
        extras = {k: v[: len(pred)] for k, v in extras.items()}
        return Predictions(pred.astype(np.int64), pred_model.astype(np.int64), prob, extras)

    def _scored(self, scored, x: torch.Tensor, labels: torch.Tensor, ids) -> tuple:
        """(logits, per-image records) of a model scored with each image's row: its id, true
        label and the values of the data columns it asks about (:attr:`row_values`)."""
        ids = list(ids) if ids is not None else [None] * len(x)
        rows = [
            {"id": i, "label": int(y), **self.row_values.get(i, {})}
            for i, y in zip(ids, labels.tolist(), strict=True)
        ]
        with torch.inference_mode(), self._amp():
            x = self.prepare(x)
            logits, extras = scored(self._padded(x), rows)
        return logits[: len(x)].float(), extras

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """(N, D) penultimate features (the classification head's input), float32.

        Computed under ``no_grad`` (not ``inference_mode``) so a linear probe can train on
        them directly."""
        x = self.prepare(x)
        with torch.no_grad(), self._amp():
            out = backbone_features(self.classifier, x)
        return out.float()

    def logits_with_grad(self, x: torch.Tensor) -> torch.Tensor:
        """(N, C) logits with autograd on (fp32, no autocast): for saliency maps."""
        self.check_gradients()
        with torch.enable_grad(), ieee_fp32() if self.cuda else nullcontext():
            return self.classifier.logits(self.prepare(x))

    def gradient_module(self) -> torch.nn.Module:
        """An ``nn.Module`` from [0, 1] images to logits (normalisation included), for
        libraries such as grad-cam that take a module and its target layers."""
        self.check_gradients()
        return _NormalisedModel(self)

    def check_gradients(self) -> None:
        """Refuse a model whose class scores have no gradient map (its record says why)."""
        refusal = getattr(self.classifier, "gradient_refusal", None)
        if refusal:
            raise ValueError(f"{getattr(self.classifier, 'model_id', 'This model')}: {refusal}")


class _NormalisedModel(torch.nn.Module):
    def __init__(self, step: ModelStep):
        super().__init__()
        self.step = step
        self.model = step.classifier.model  # registered, so grad-cam finds its layers

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.step.logits_with_grad(x)


def classification_head(model: torch.nn.Module) -> torch.nn.Module:
    """The final classification layer of a transformers (or plain) image classifier."""
    for name in ("classifier", "fc", "head"):
        head = getattr(model, name, None)
        if isinstance(head, torch.nn.Module):
            if isinstance(head, torch.nn.Sequential) and len(head):
                head = head[-1]
            return head
    if hasattr(model, "get_classifier"):
        return model.get_classifier()
    raise ValueError(
        f"{type(model).__name__}: no classification head found (looked for .classifier, .fc, "
        ".head); features need a model whose last layer is the head."
    )


def backbone_features(classifier: Any, x: torch.Tensor) -> torch.Tensor:
    """(N, D) penultimate features of ``classifier`` for a prepared batch (the classification
    head's input), gradients and autocast as the caller's context says: the classifier
    record's ``feature_fn`` when its loader knows the features (a zero-shot model's image
    embedding), timm's ``forward_head(pre_logits=True)``, otherwise the head's input caught by
    a hook (the record's ``features_source`` says which)."""
    model = classifier.model
    known = getattr(classifier, "feature_fn", None)  # the loader's record says (a CLIP's)
    if known is not None:
        return known(x).flatten(1)
    if hasattr(model, "forward_features") and hasattr(model, "forward_head"):  # timm
        out = model.forward_head(model.forward_features(x), pre_logits=True)
    else:
        out = _head_input(model, lambda: classifier.logits(x))
    return out.flatten(1)


def _head_input(model: torch.nn.Module, forward) -> torch.Tensor:
    """The input of ``model``'s classification head during ``forward()``."""
    captured: list[torch.Tensor] = []
    handle = classification_head(model).register_forward_hook(
        lambda _m, args, _out: captured.append(args[0])
    )
    try:
        forward()
    finally:
        handle.remove()
    if not captured:
        raise ValueError(f"{type(model).__name__}: the classification head was never called.")
    return captured[-1]
