"""Load any image classifier (timm, transformers, bundled EfficientNet-Lite) together with
its own preprocessing and label space.

>>> from hf_bgbench.models import load_classifier
>>> clf = load_classifier("tf_efficientnet_lite0")        # doctest: +SKIP
>>> clf.label_space.kind, clf.preprocessing.input_size   # doctest: +SKIP
('imagenet-1k', (224, 224))
"""

from hf_bgbench.hub.errors import HubUnreachableError
from hf_bgbench.models.classifier import Classifier, infer_label_space
from hf_bgbench.models.errors import (
    ModelLoadError,
    RemoteCodeRefusedError,
    UnknownModelError,
    UnsafeCheckpointError,
)
from hf_bgbench.models.loader import DEFAULT_MODEL, load_classifier
from hf_bgbench.models.preprocessing import Preprocessing

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
