"""The CAM methods of pytorch-grad-cam bgbench offers, by name: what ``--method`` accepts
(light to import: the command line reads it; :mod:`.cam` runs them)."""

from __future__ import annotations

METHODS = {
    "gradcam": "GradCAM",
    "gradcam++": "GradCAMPlusPlus",
    "hirescam": "HiResCAM",
    "xgradcam": "XGradCAM",
    "layercam": "LayerCAM",
}
