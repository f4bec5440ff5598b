"""The watermark benchmark's fixed facts, imported by every module of the folder (the spec
names its hooks by string, so nothing here imports the spec: no cycle)."""

from __future__ import annotations

ORIGINAL, WATERMARKED = "original", "watermark"
VARIANTS = (ORIGINAL, WATERMARKED)
SPLIT = "test"
RESIZE, CROP = 256, 224  # the paper's eval geometry; the watermark is drawn on the 224 crop
CARTON_INDEX = 478  # ImageNet-1k "carton" (n02971356); imagenet_w.CARTON_CLASS_INDEX too
