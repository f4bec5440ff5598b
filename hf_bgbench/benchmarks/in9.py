"""ImageNet-9 and the Backgrounds Challenge (Xiao et al., 2020). Facts: SPEC §1."""

from __future__ import annotations

from hf_bgbench.benchmarks import BenchmarkSpec, register
from hf_bgbench.labels import imagenet_to_in9, in9_label_space

IN9_VARIANTS = (
    "original",
    "only_bg_b",
    "only_bg_t",
    "no_fg",
    "only_fg",
    "mixed_same",
    "mixed_rand",
    "mixed_next",
)

IN9_CITATION = """@article{xiao2020noise,
  title={Noise or Signal: The Role of Image Backgrounds in Object Recognition},
  author={Xiao, Kai and Engstrom, Logan and Ilyas, Andrew and Madry, Aleksander},
  journal={arXiv preprint arXiv:2006.09994},
  year={2020}
}"""

IN9 = register(
    BenchmarkSpec(
        name="in9",
        title="ImageNet-9 Backgrounds Challenge",
        label_space=in9_label_space(),
        variants=IN9_VARIANTS,
        reference_variant="original",
        hub_repo="bgbench/in9",
        label_maps={"imagenet-1k": imagenet_to_in9},
        metrics=("accuracy", "bg_gap", "categories"),
        images_precropped=True,
        citation=IN9_CITATION,
        description=(
            "Nine coarse ImageNet classes; eight variants that separate foreground and "
            "background signal. BG-GAP = acc(mixed_same) - acc(mixed_rand)."
        ),
    )
)
