"""ImageNet-D (Zhang et al., CVPR 2024): ImageNet's objects generated whole by a diffusion
model against one nuisance at a time -- background, texture, material -- over 113 classes.

This folder is the whole benchmark: :mod:`.spec` (the spec, its protocols and metrics),
:mod:`.labels` (the classes and their ImageNet-1k classes), :mod:`.release` (a reader of the
Hub dataset's own folders, questions included), :mod:`.convert` + :mod:`.cli` (``bgbench
convert imagenet-d``), :mod:`.download` (``bgbench download imagenet-d``), :mod:`.card`
(the dataset card), :mod:`.validate` (its row checks) and :mod:`.references`.
"""

from hf_bgbench.benchmarks.imagenet_d.spec import IMAGENET_D

SPECS = (IMAGENET_D,)
