"""RIVAL10's report card, as data (:class:`~hf_bgbench.spec.Headline`).

No reference rows: Moayeri et al. (CVPR 2022) show RFS and saliency alignment only in
figures (Figs. 4-7), with no table of values to cite, and the report never invents a number
read off a plot. The report says so where the published range would be drawn.
"""

from __future__ import annotations

from hf_bgbench.spec import Headline

RIVAL10_REPORT = (
    Headline(
        "noise",
        "rfs",
        "RFS",
        "",
        -1,
        description="relative foreground sensitivity: > 0 means noise on the object hurts more",
    ),
    Headline(
        "saliency",
        "delta_density",
        "Saliency delta density",
        "",
        -1,
        description="mean Grad-CAM saliency on the object minus on the background",
    ),
    Headline(
        "saliency",
        "saliency_fraction_inside",
        "Saliency inside the object",
        "%",
        -1,
        description="share of the Grad-CAM saliency inside the object mask",
    ),
)

RIVAL10_LEADERBOARD = (RIVAL10_REPORT[0],)
"""The Hub leaderboard's task: RFS (higher = the object matters more). The saliency numbers
depend on the CAM method and layer chosen, so they stay in the report."""
