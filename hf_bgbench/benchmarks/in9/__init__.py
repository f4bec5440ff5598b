"""ImageNet-9 and the Backgrounds Challenge (Xiao et al., ICLR 2021), and Full-IN: the same
eight variants over all 1000 ImageNet classes. Facts: SPEC §1."""

from hf_bgbench.benchmarks.in9.full_spec import IN9_FULL
from hf_bgbench.benchmarks.in9.spec import IN9

SPECS = (IN9, IN9_FULL)
