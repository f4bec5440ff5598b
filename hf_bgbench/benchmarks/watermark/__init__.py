"""ImageNet-W-style watermark reliance (Li et al., "A Whac-A-Mole Dilemma", CVPR 2023).

Any ImageNet photos, twice: ``original`` (resized to 256, centre-cropped to 224) and
``watermark`` (the same pixels with the ImageNet-W text watermark drawn by the ``imagenet-w``
package). The headline is the paired accuracy drop; the carton measures show the shortcut
(the watermark pulls predictions towards ImageNet's "carton" class).

This folder is the whole benchmark: :mod:`.spec` (the spec and its metrics), :mod:`.metrics`
(two metric kinds of its own), :mod:`.transform` (the crop and the package's watermark),
:mod:`.build` + :mod:`.cli` (``bgbench build watermark``), :mod:`.card` (the dataset card)
and :mod:`.validate` (its layout and row checks for ``bgbench validate``).
"""

from hf_bgbench.benchmarks.watermark.spec import WATERMARK

SPECS = (WATERMARK,)
