"""ImageNet-9 and the Backgrounds Challenge (Xiao et al., 2020). Facts: SPEC §1.

The top of the folder: the spec names this folder's modules as hooks (the release reader,
the cached download, the ``bgbench build`` / ``convert`` / ``download`` sub-commands), so
those modules never import it; they are handed the spec, and share facts through
:mod:`.variants` and :mod:`.labels`.
"""

from __future__ import annotations

from hf_bgbench.benchmarks.in9.labels import imagenet_to_in9, in9_label_space
from hf_bgbench.benchmarks.in9.protocols import IN9_PROTOCOLS
from hf_bgbench.benchmarks.in9.references import IN9_LEADERBOARD, IN9_REFERENCES, IN9_REPORT
from hf_bgbench.benchmarks.in9.variants import IN9_LAYOUT, IN9_VARIANTS, VARIANT_TEXT
from hf_bgbench.scoring import PairedGap, PredictionCategories
from hf_bgbench.spec import BenchmarkSpec

__all__ = ["IN9", "IN9_CITATION", "IN9_METRICS", "IN9_TASKS", "IN9_VARIANTS"]

IN9_CITATION = """@inproceedings{xiao2021noise,
  title={Noise or Signal: The Role of Image Backgrounds in Object Recognition},
  author={Xiao, Kai Yuanqing and Engstrom, Logan and Ilyas, Andrew and Madry, Aleksander},
  booktitle={International Conference on Learning Representations},
  year={2021},
  note={arXiv:2006.09994}
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
IN9_TASKS = ("evaluate", "challenge", "noise", "saliency", "graying")
IN9_READERS = ("hf_bgbench.benchmarks.in9.release:BackgroundsChallengeRelease",)
IN9_HOOKS = {
    "cached_download": "hf_bgbench.benchmarks.in9.download:cached_in9_release",
    "cli_build": "hf_bgbench.benchmarks.in9.cli:BUILD",
    "cli_convert": "hf_bgbench.benchmarks.in9.cli:CONVERT",
    "cli_download": "hf_bgbench.benchmarks.in9.cli:DOWNLOAD",
    "cli_commands": "hf_bgbench.benchmarks.in9.demo:DEMO",
}
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
    download_command="bgbench download in9",
    build_commands=("bgbench build in9", "bgbench convert in9-release"),
    mask_variant="original",
    mask_column="mask",
    images_precropped=True,
    citation=IN9_CITATION,
    description=(
        "Nine coarse ImageNet classes; eight variants that separate foreground and "
        "background signal. BG-GAP = acc(mixed_same) - acc(mixed_rand)."
    ),
    short_name="IN-9",
    variant_text={v: VARIANT_TEXT[v] for v in IN9_VARIANTS},
    paper_url="https://arxiv.org/abs/2006.09994",
    homepage="https://github.com/MadryLab/backgrounds_challenge",
    evaluate_metrics=("bg_gap", "bg_challenge"),
    layout=IN9_LAYOUT,
    hooks=IN9_HOOKS,
    masked_source="an IN-9 build",
    report=IN9_REPORT,
    leaderboard=IN9_LEADERBOARD,
    references=IN9_REFERENCES,
    protocols=IN9_PROTOCOLS,
)
