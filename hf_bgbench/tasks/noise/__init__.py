"""The ``noise`` task: RIVAL10's noise analysis and relative foreground sensitivity (Moayeri et
al., 2022; SPEC §2), on any benchmark with object masks (RIVAL10 ``ordinary``/``object_mask``,
IN-9 ``original``/``mask``).

For an image x in [0, 1] with binary object mask m and Gaussian noise n (i.i.d. per pixel and
channel), the model sees ``x_fg = clip(x + n ⊙ m)`` and ``x_bg = clip(x + n ⊙ (1 − m))`` --
the *same* n for both, as in the authors' ``compute_noise_robustness.py`` -- over ``trials``
draws per image and level: ``linf`` (the main setting) n ~ N(0, σ²), σ = level / 255;
``l2``: each region's noise scaled to ℓ2 norm ε = level. The noise of one image at one level
comes from its own seeded generator, so the numbers depend on neither the batch size nor the
order of the images (:mod:`hf_bgbench.tasks.noise.draw`); every number comes from
:mod:`hf_bgbench.metrics.noise` (:mod:`hf_bgbench.tasks.noise.summary`).

Hooks over the runner: prepare = the mask variant's test images (a seeded subset) at the size
the model takes; compute = each image decoded once, its noisy copies forwarded in full
batches; summarise = the numbers, the per-image table and the report.
"""

from __future__ import annotations

from hf_bgbench.tasks.entry import entry_point
from hf_bgbench.tasks.noise.levels import (
    NoiseError,
    NoiseSettings,
    check_levels,
)
from hf_bgbench.tasks.noise.options import PER_IMAGE_FILE, NoiseOptions
from hf_bgbench.tasks.noise.settings import NoiseProtocolSettings
from hf_bgbench.tasks.options import (
    REQUIRED,
)
from hf_bgbench.tasks.task import Task, folder_hooks

__all__ = ["NOISE_OUTPUTS", "NoiseError", "NoiseOptions", "NoiseSettings", "check_levels"]


ACCELERATOR_BATCH_SIZE = 64  # on a GPU when none is given (a CPU: devices.CPU_BATCH_SIZE)
PAIRED_SCORES = (("irfs", "mean iRFS (RFS per image)", "", -1),)
"""What ``bgbench compare`` pairs beyond the headlines: iRFS per image (:mod:`.paired`)."""


NOISE_OUTPUTS = (
    "noise.json",
    "noise.md",
    "noise_model_index.yaml",
    PER_IMAGE_FILE,
    "noise_accuracy.png",
    "noise_rfs.png",
    "noise_classes.png",
    "noise_irfs.png",
)


TASK = Task(
    name="noise",
    description="Noise analysis: Gaussian noise on the object vs the background (RFS, iRFS)",
    options=NoiseOptions,
    **folder_hooks(__name__, paired=True),
    outputs=NOISE_OUTPUTS,
    gpu_batch_size=ACCELERATOR_BATCH_SIZE,
    settings=NoiseProtocolSettings,
    command_help="noise analysis: Gaussian noise on the object vs the background (RFS, iRFS)",
    paired_scores=PAIRED_SCORES,
)


run_noise = entry_point(
    TASK,
    "run_noise",
    """Noise analysis of ``model`` (a model id or a loaded classifier) on the test images of
    the benchmark's mask variant, with the :class:`NoiseOptions` ``options``: a_fg, a_bg, RFS
    and iRFS per level, per class and overall. ``levels``: σ x 255 (linf) or ε (l2), default
    the published ones; ``max_images`` picks a seeded random subset (ids recorded). Returns
    the results document; with ``output_dir`` also writes noise.json, noise.md,
    noise_model_index.yaml, noise_images.parquet (one row per image and level) and the
    plots. ``batch_size`` defaults to 8 on a CPU and 64 on a GPU; the numbers do not depend
    on it.""",
    model=REQUIRED,
    data=None,
)
