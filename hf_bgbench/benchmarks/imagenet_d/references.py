"""ImageNet-D's report card, leaderboard tasks and citation, as data.

No published number is listed: the paper's tables (accuracy per model on ImageNet and on the
three subsets) could not be read from here, and a number without its source would be worse
than none. Add them as :class:`~hf_bgbench.spec.Reference` rows with their table once checked.
"""

from __future__ import annotations

from hf_bgbench.benchmarks.imagenet_d.facts import SUBSETS
from hf_bgbench.spec import Headline

IMAGENET_D_CITATION = """@inproceedings{zhang2024imagenet_d,
  title={ImageNet-D: Benchmarking Neural Network Robustness on Diffusion Synthetic Object},
  author={Zhang, Chenshuang and Pan, Fei and Kim, Junmo and Kweon, In So and Mao, Chengzhi},
  booktitle={Proceedings of the IEEE/CVF Conference on Computer Vision and Pattern
             Recognition (CVPR)},
  year={2024},
  url={https://arxiv.org/abs/2403.18775}
}"""

IMAGENET_D_REPORT = (
    *(
        Headline(
            "evaluate",
            f"accuracy/{subset}",
            f"{subset} accuracy",
            "%",
            0,
            description=f"top-1 accuracy on the {subset} subset",
        )
        for subset in SUBSETS
    ),
    Headline(
        "evaluate",
        "drop/",
        "Worst nuisance drop",
        "pts",
        1,
        worst=True,
        description="clean − subset accuracy (same classes), the nuisance that costs most",
        needs="the clean photos: a clean/ folder of ImageNet wnid class folders beside the "
        "subsets, or convert --clean",
    ),
)

IMAGENET_D_LEADERBOARD = tuple(
    Headline(
        "evaluate",
        f"accuracy/{subset}",
        f"ImageNet-D {subset} accuracy",
        "%",
        -1,
        description=f"top-1 accuracy on the generated images with a new {subset}",
    )
    for subset in SUBSETS
)
