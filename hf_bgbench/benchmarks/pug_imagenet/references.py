"""PUG: ImageNet's report card, leaderboard tasks and citation, as data.

No published number is listed: the paper's per-factor accuracies are plotted, not tabled, and
a number read off a plot would be worse than none."""

from __future__ import annotations

from hf_bgbench.benchmarks.pug_imagenet.facts import WORLDS
from hf_bgbench.spec import Headline

PUG_CITATION = """@inproceedings{bordes2023pug,
  title={PUG: Photorealistic and Semantically Controllable Synthetic Data for Representation
         Learning},
  author={Bordes, Florian and Shekhar, Shashank and Ibrahim, Mark and Bouchacourt, Diane and
          Vincent, Pascal and Morcos, Ari S.},
  booktitle={Advances in Neural Information Processing Systems (NeurIPS), Datasets and
             Benchmarks Track},
  year={2023},
  url={https://arxiv.org/abs/2308.03977}
}"""

PUG_REPORT = (
    Headline(
        "evaluate",
        f"accuracy/{WORLDS}",
        "accuracy over the worlds",
        "%",
        0,
        description="top-1 accuracy on every asset in every world (only the world varies)",
    ),
    Headline(
        "evaluate",
        f"spread/{WORLDS}",
        "World spread",
        "pts",
        1,
        description="the best world's accuracy minus the worst's, over the same assets",
    ),
    Headline(
        "evaluate",
        f"changed/{WORLDS}",
        "Assets changed by the world",
        "%",
        1,
        description="the share of assets whose prediction is not the same in every world",
    ),
    Headline(
        "evaluate",
        f"worst/{WORLDS}",
        "worst-world accuracy",
        "%",
        0,
        description="accuracy in the world where the model does worst",
        config=WORLDS,
    ),
)

PUG_LEADERBOARD = (
    Headline(
        "evaluate",
        f"accuracy/{WORLDS}",
        "PUG: ImageNet accuracy over the worlds",
        "%",
        -1,
        description="top-1 accuracy on the rendered objects in 64 worlds",
    ),
)
