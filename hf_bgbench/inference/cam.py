"""Grad-CAM for any loaded classifier, through the ``grad-cam`` package (``pytorch_grad_cam``).

What this module decides, so the saliency task does not have to:

* **which layer** (:func:`choose_target_layer`): CNNs -- the last module producing the final
  spatial feature map (timm ResNet ``layer4``, EfficientNet ``bn2``, ConvNeXt ``stages``;
  transformers ``resnet.encoder.stages.3``), found by tracing one forward pass; ViT/DeiT --
  the last block's first norm (timm ``blocks.N.norm1``, transformers ``layernorm_before``),
  whose tokens are reshaped to the patch grid after dropping the prefix (class, distillation,
  register) tokens (timm's ``num_prefix_tokens``). ``--target-layer`` names another module by
  its dotted path (negative indices allowed: ``blocks.-1.norm1``);
* **which class** (:class:`ClassTarget`): the highest-scoring model class among those allowed
  -- every class (the predicted class), the classes mapped to the benchmark
  (``--restrict-to-benchmark-classes``) or the classes mapped to the true benchmark class
  (``--target true``: for a 1000-class model, the best-scoring of the ImageNet classes that
  map to it, e.g. the most likely dog breed for IN-9 "dog"); it records what it chose;
* **how fast** (:class:`CamRunner`): the backward pass stops at the target layer (its output
  is made the leaf of the graph and the weights need no gradients), which gives exactly the
  same map as a full backward pass for a fraction of the cost.

The maps are grad-cam's own (ReLU, per-image min-max scaling to [0, 1], bilinear resize to
the input size), as in the RIVAL10 authors' code.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from hf_bgbench.inference.cam_methods import METHODS

# a ViT block's first norm: timm, transformers ViT, open_clip, transformers CLIP / SigLIP
TOKEN_NORMS = ("norm1", "layernorm_before", "ln_1", "layer_norm1")


class TargetLayerError(ValueError):
    """The target layer cannot be found or used (message meant for a person)."""


@dataclass
class LayerChoice:
    """The target layer: its dotted name, the module, and how its output becomes a
    (N, C, h, w) map: ``layout`` "NCHW" (as is), "NHWC" (permuted) or "tokens" (drop
    ``prefix_tokens``, reshape to ``grid``)."""

    name: str
    module: torch.nn.Module
    layout: str
    prefix_tokens: int = 0
    grid: tuple[int, int] | None = None
    auto: bool = True

    def reshape(self, x: torch.Tensor) -> torch.Tensor:
        if self.layout == "NCHW":
            return x
        if self.layout == "NHWC":
            return x.permute(0, 3, 1, 2)
        gh, gw = self.grid
        if x.shape[1] != self.prefix_tokens + gh * gw:
            raise TargetLayerError(
                f"layer {self.name} gave {x.shape[1]} tokens, expected {self.prefix_tokens} "
                f"prefix + {gh}x{gw} patches: the images changed size during the run."
            )
        return x[:, self.prefix_tokens :].reshape(len(x), gh, gw, x.shape[-1]).permute(0, 3, 1, 2)

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "layout": self.layout, "auto": self.auto}
        if self.layout == "tokens":
            out.update(prefix_tokens=self.prefix_tokens, grid=list(self.grid))
        return out


@dataclass
class _Record:
    name: str
    module: torch.nn.Module
    output: Any
    same_as_input: bool


@dataclass
class _Trace:
    records: list[_Record] = field(default_factory=list)

    def by_module(self, module: torch.nn.Module) -> _Record | None:
        found = [r for r in self.records if r.module is module]
        return found[-1] if found else None


def trace_forward(model: torch.nn.Module, forward: Callable[[], Any]) -> _Trace:
    """Every submodule's output during ``forward()``, in the order the modules finished."""
    trace = _Trace()
    handles = []
    for name, module in model.named_modules():
        if not name:
            continue

        def hook(mod, args, out, name=name):
            first = args[0] if args else None
            trace.records.append(_Record(name, mod, out, out is first))

        handles.append(module.register_forward_hook(hook))
    try:
        forward()
    finally:
        for h in handles:
            h.remove()
    return trace


def _spatial(out: Any) -> bool:
    return isinstance(out, torch.Tensor) and out.ndim == 4 and out.shape[-2] * out.shape[-1] > 1


def _tokens(out: Any) -> bool:
    return isinstance(out, torch.Tensor) and out.ndim == 3 and out.shape[1] > 1


def _patch_grid(trace: _Trace, before: int) -> tuple[int, int] | None:
    """(h, w) of the patch embedding: the last Conv2d output before record ``before``."""
    for r in reversed(trace.records[:before]):
        if isinstance(r.module, torch.nn.Conv2d) and _spatial(r.output):
            return tuple(int(v) for v in r.output.shape[-2:])
    return None


def _owner_prefix_tokens(model: torch.nn.Module, name: str) -> int | None:
    """``num_prefix_tokens`` of the timm ViT that owns module ``name`` (None if not timm)."""
    for owner_name, owner in model.named_modules():
        prefix = f"{owner_name}." if owner_name else ""
        if name.startswith(prefix) and hasattr(owner, "num_prefix_tokens"):
            return int(owner.num_prefix_tokens)
    return None


def _token_choice(
    model: torch.nn.Module, trace: _Trace, index: int, name: str, auto: bool
) -> LayerChoice:
    record = trace.records[index]
    grid = _patch_grid(trace, index)
    tokens = int(record.output.shape[1])
    if grid is None:
        raise TargetLayerError(
            f"layer {name} outputs tokens {tuple(record.output.shape)} but no patch embedding "
            "(Conv2d) runs before it, so its tokens cannot be laid out as an image; pass "
            "--target-layer with a convolutional layer."
        )
    prefix = _owner_prefix_tokens(model, name)
    prefix = tokens - grid[0] * grid[1] if prefix is None else prefix
    if prefix < 0 or tokens - prefix != grid[0] * grid[1]:
        raise TargetLayerError(
            f"layer {name} outputs {tokens} tokens, which is not {prefix} prefix tokens plus "
            f"the {grid[0]}x{grid[1]} patch grid; pass --target-layer with a layer whose "
            "output is a feature map or a ViT block's tokens."
        )
    return LayerChoice(name, record.module, "tokens", prefix, grid, auto)


def _map_choice(model: torch.nn.Module, record: _Record, auto: bool) -> LayerChoice:
    out = record.output
    channels = getattr(model, "num_features", None)
    nhwc = channels is not None and out.shape[-1] == channels and out.shape[1] != channels
    return LayerChoice(record.name, record.module, "NHWC" if nhwc else "NCHW", auto=auto)


def _choice_at(
    model: torch.nn.Module, trace: _Trace, record: _Record, auto: bool
) -> LayerChoice | None:
    """The layer of ``record`` as Grad-CAM uses it: a feature map as it is, a token sequence
    laid out on the patch grid; None when its output is neither."""
    if _spatial(record.output):
        return _map_choice(model, record, auto=auto)
    if _tokens(record.output):
        return _token_choice(model, trace, trace.records.index(record), record.name, auto=auto)
    return None


def choose_target_layer(
    model: torch.nn.Module,
    forward: Callable[[], Any],
    name: str | None = None,
    hint: str | None = None,
) -> LayerChoice:
    """The Grad-CAM target layer of ``model`` (see the module docstring); ``forward`` runs
    one forward pass of the classifier (e.g. on a blank image of the size it will see).
    ``name``: the user's ``--target-layer``; ``hint``: the layer the model's loader knows
    (the classifier record's ``cam_layer``, e.g. a CLIP ViT's last block's first norm),
    taken when no name is given and still chosen automatically."""
    trace = trace_forward(model, forward)
    if name is None and hint is not None:
        record = trace.by_module(resolve_module(model, hint))
        choice = None if record is None else _choice_at(model, trace, record, auto=True)
        if choice is not None:
            return choice
    if name is not None:
        module = resolve_module(model, name)
        record = trace.by_module(module)
        if record is None:
            raise TargetLayerError(
                f"--target-layer {name}: that module is not used in the model's forward pass; "
                f"candidates: {', '.join(layer_candidates(trace))}."
            )
        choice = _choice_at(model, trace, record, auto=False)
        if choice is not None:
            return choice
        shape = tuple(record.output.shape) if isinstance(record.output, torch.Tensor) else None
        raise TargetLayerError(
            f"--target-layer {name}: its output ({shape or type(record.output).__name__}) is no "
            f"spatial feature map or token sequence; candidates: "
            f"{', '.join(layer_candidates(trace))}."
        )
    norms = [
        i
        for i, r in enumerate(trace.records)
        if r.name.rsplit(".", 1)[-1] in TOKEN_NORMS and _tokens(r.output)
    ]
    if norms:  # a ViT: the last block's first norm
        return _token_choice(model, trace, norms[-1], trace.records[norms[-1]].name, auto=True)
    maps = [i for i, r in enumerate(trace.records) if _spatial(r.output) and not r.same_as_input]
    if not maps:
        raise TargetLayerError(
            "no layer of this model outputs a spatial feature map or ViT block tokens, so the "
            "target layer cannot be chosen automatically; pass --target-layer NAME."
        )
    last = maps[-1]
    later_tokens = [r.name for r in trace.records[last + 1 :] if _tokens(r.output)]
    if later_tokens:
        raise TargetLayerError(
            f"this model's last feature map ({trace.records[last].name}) is followed by token "
            f"layers ({later_tokens[-1]}, ...) of an architecture bgbench does not lay out "
            f"automatically; pass --target-layer NAME (candidates: "
            f"{', '.join(layer_candidates(trace))})."
        )
    return _map_choice(model, trace.records[last], auto=True)


def layer_candidates(trace: _Trace, most: int = 8) -> list[str]:
    """The names of the last modules whose outputs Grad-CAM can use, deepest last."""
    names = [
        r.name
        for r in trace.records
        if (_spatial(r.output) or _tokens(r.output)) and not r.same_as_input
    ]
    return list(dict.fromkeys(reversed(names)))[:most][::-1]


def resolve_module(model: torch.nn.Module, name: str) -> torch.nn.Module:
    """The submodule at dotted path ``name`` (integer parts index containers; negative ones
    count from the end), or a TargetLayerError naming what exists there."""
    module, path = model, []
    for part in name.split("."):
        children = dict(module.named_children())
        child = children.get(part)
        if child is None and part.lstrip("-").isdigit() and children:
            items = list(children.values())
            index = int(part)
            child = items[index] if -len(items) <= index < len(items) else None
        if child is None:
            where = ".".join(path) or "the model"
            close = difflib.get_close_matches(part, list(children), n=1)
            hint = f" (did you mean {'.'.join([*path, close[0]])!r}?)" if close else ""
            listed = ", ".join(children) or "none (it is a leaf module)"
            raise TargetLayerError(
                f"--target-layer {name}: {where} has no submodule {part!r}{hint}; its "
                f"submodules: {listed}."
            )
        module, path = child, [*path, part]
    return module


class ClassTarget:
    """A grad-cam target: the logit of the best-scoring class among ``allowed`` (a bool mask
    over the model's classes; None = all). ``chosen`` is the class it picked."""

    def __init__(self, allowed: torch.Tensor | None = None):
        self.allowed = allowed
        self.chosen = -1

    def __call__(self, output: torch.Tensor) -> torch.Tensor:
        scores = output.detach()
        if self.allowed is not None:
            scores = scores.masked_fill(~self.allowed.to(scores.device), float("-inf"))
        self.chosen = int(scores.argmax())
        return output[self.chosen]


class CamRunner(AbstractContextManager):
    """grad-cam's ``method`` on ``module`` (the model step's gradient module) at ``layer``;
    ``runner(x01, targets)`` -> (maps float32 (N, H, W) in [0, 1], logits (N, C)).

    While open, the weights need no gradients and the layer's output is the graph's leaf, so
    the backward pass runs only from the logits down to the layer (same gradients there)."""

    def __init__(self, module: torch.nn.Module, layer: LayerChoice, method: str = "gradcam"):
        if method not in METHODS:
            raise ValueError(f"--method {method!r}: choose one of {', '.join(METHODS)}.")
        self.module, self.layer, self.method = module, layer, method
        self._grad_flags: list[tuple[torch.nn.Parameter, bool]] = []
        self._handle = None
        self._cam = None

    def __enter__(self) -> CamRunner:
        try:
            import pytorch_grad_cam
        except ImportError:
            raise RuntimeError(
                "saliency maps need the grad-cam package: pip install grad-cam"
            ) from None

        self._grad_flags = [(p, p.requires_grad) for p in self.module.parameters()]
        if not self._grad_flags:
            raise ValueError(
                "Grad-CAM needs a model with weights (grad-cam finds the device from them); "
                "this model has none."
            )
        for p, _ in self._grad_flags:
            p.requires_grad_(False)
        # registered before grad-cam's hooks, so they see the leaf
        self._handle = self.layer.module.register_forward_hook(
            lambda _m, _args, out: out.detach().requires_grad_(True).clone()
        )
        cam_class = getattr(pytorch_grad_cam, METHODS[self.method])
        self._cam = cam_class(
            model=self.module,
            target_layers=[self.layer.module],
            reshape_transform=None if self.layer.layout == "NCHW" else self.layer.reshape,
        )
        return self

    def __call__(
        self, x01: torch.Tensor, targets: Sequence[ClassTarget]
    ) -> tuple[np.ndarray, torch.Tensor]:
        maps = self._cam(input_tensor=x01, targets=list(targets))
        return np.asarray(maps, np.float32), self._cam.outputs.detach()

    def __exit__(self, *exc: object) -> None:
        if self._cam is not None:
            self._cam.activations_and_grads.release()
        if self._handle is not None:
            self._handle.remove()
        for p, flag in self._grad_flags:
            p.requires_grad_(flag)
        self._cam, self._handle, self._grad_flags = None, None, []
