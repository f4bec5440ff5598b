"""PUG: ImageNet (Bordes et al., NeurIPS 2023 D&B): 151 ImageNet classes rendered with Unreal
Engine, every asset in 64 worlds with nothing else moved -- the one benchmark where the
background is the only thing that changes.

This folder is the whole benchmark: :mod:`.spec` (the spec, its protocols and metrics),
:mod:`.labels` (the classes and the authors' ImageNet map), :mod:`.rows` (which rows each
variant is, from the table's columns), :mod:`.release` (a reader of the Hub dataset, a
``save_to_disk`` copy or the tarball), :mod:`.metrics` (accuracy per world, its spread, the
assets the world changes), :mod:`.download` + :mod:`.cli` (``bgbench download
pug-imagenet``) and :mod:`.references`.
"""

from hf_bgbench.benchmarks.pug_imagenet.spec import PUG_IMAGENET

SPECS = (PUG_IMAGENET,)
