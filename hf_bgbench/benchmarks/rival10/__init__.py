"""RIVAL10 (Moayeri et al., CVPR 2022). Facts: SPEC §2."""

from hf_bgbench.benchmarks.rival10.spec import RIVAL10

SPECS = (RIVAL10,)
