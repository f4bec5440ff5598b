"""ImageNet-9 and the Backgrounds Challenge (Xiao et al., 2020). Facts: SPEC §1."""

from __future__ import annotations

from hf_bgbench.benchmarks.in9.labels import imagenet_to_in9, in9_label_space
from hf_bgbench.scoring import PairedGap, PredictionCategories
from hf_bgbench.spec import BenchmarkSpec

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

# SPEC §1 "Metrics": BG-GAP first (the headline), then the two other gaps the paper reports,
# then the Table 3 buckets (full = original, foreground = mixed_rand, background = only_bg_t).
IN9_METRICS = (
    PairedGap(
        "bg_gap",
        "mixed_same",
        "mixed_rand",
        label="BG-GAP (mixed_same − mixed_rand)",
        short="BG-GAP",
        description=(
            "(accuracy on mixed_same minus mixed_rand; lower means less reliance on the "
            "background's correlation with the class)."
        ),
        headline=True,
    ),
    PairedGap("same_minus_next", "mixed_same", "mixed_next", label="mixed_same − mixed_next"),
    PairedGap("original_minus_only_fg", "original", "only_fg", label="original − only_fg"),
    PredictionCategories(
        {"full": "original", "foreground": "mixed_rand", "background": "only_bg_t"}
    ),
)
IN9_TASKS = ("evaluate", "challenge", "noise", "saliency")
IN9_READERS = ("hf_bgbench.benchmarks.in9.release:BackgroundsChallengeRelease",)

IN9 = BenchmarkSpec(
    name="in9",
    title="ImageNet-9 Backgrounds Challenge",
    label_space=in9_label_space(),
    variants=IN9_VARIANTS,
    reference_variant="original",
    hub_repo="bgbench/in9",
    label_maps={"imagenet-1k": imagenet_to_in9},
    metrics=IN9_METRICS,
    tasks=IN9_TASKS,
    readers=IN9_READERS,
    aligned_variants=IN9_VARIANTS,
    cached_download="hf_bgbench.benchmarks.in9.download:cached_in9_release",
    download_command="bgbench download in9",
    mask_variant="original",
    mask_column="mask",
    images_precropped=True,
    citation=IN9_CITATION,
    description=(
        "Nine coarse ImageNet classes; eight variants that separate foreground and "
        "background signal. BG-GAP = acc(mixed_same) - acc(mixed_rand)."
    ),
)
