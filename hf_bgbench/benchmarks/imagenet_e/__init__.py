"""ImageNet-E (Li et al., CVPR 2023). Facts: SPEC §3."""

from hf_bgbench.benchmarks.imagenet_e.spec import IMAGENET_E

SPECS = (IMAGENET_E,)
