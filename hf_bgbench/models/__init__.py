"""Load any image classifier (timm, transformers, bundled EfficientNet-Lite) together with
its own preprocessing and label space.

>>> from hf_bgbench.models import load_classifier
>>> clf = load_classifier("tf_efficientnet_lite0")        # doctest: +SKIP
>>> clf.label_space.kind, clf.preprocessing.input_size   # doctest: +SKIP
('imagenet-1k', (224, 224))
"""

import importlib
from typing import Any

# name -> the module that defines it, imported at first use (PEP 562): importing a light
# module of this package (devices, the VLM settings) loads no torch
_EXPORTS = {
    "DEFAULT_MODEL": "hf_bgbench.models.loader",
    "Classifier": "hf_bgbench.models.classifier",
    "HubUnreachableError": "hf_bgbench.hub.errors",
    "ModelLoadError": "hf_bgbench.models.errors",
    "Preprocessing": "hf_bgbench.models.preprocessing",
    "RemoteCodeRefusedError": "hf_bgbench.models.errors",
    "UnknownModelError": "hf_bgbench.models.errors",
    "UnsafeCheckpointError": "hf_bgbench.models.errors",
    "infer_label_space": "hf_bgbench.models.classifier",
    "load_classifier": "hf_bgbench.models.loader",
}


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value


__all__ = [
    "DEFAULT_MODEL",
    "Classifier",
    "HubUnreachableError",
    "ModelLoadError",
    "Preprocessing",
    "RemoteCodeRefusedError",
    "UnknownModelError",
    "UnsafeCheckpointError",
    "infer_label_space",
    "load_classifier",
]
