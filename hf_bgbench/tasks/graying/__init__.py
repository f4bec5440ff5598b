"""The ``graying`` task: background ablation by graying (Moayeri et al., 2022, Fig. 8;
SPEC §2 "Other analyses").

Every background pixel of an image of the benchmark's mask variant is set to a flat grey
(0.5 in [0, 1], the paper's), the object kept: ``x_gray = x ⊙ m + 0.5 (1 − m)`` with the
binary object mask m. The model sees the clean and the grayed image; the drop in accuracy
says how much of its accuracy the background carried. Accuracies follow the protocol's
aggregation (the paper's: per class, then the mean over the classes).

Hooks over the runner: prepare = the mask variant's test images (a seeded subset) at the
protocol's size; compute = clean and grayed copies per batch through the model step;
summarise = the numbers and per-image table (:mod:`hf_bgbench.tasks.graying.summary`) and the
report (:func:`hf_bgbench.tasks.graying.report.build_report`).

Fig. 8 has a second number: the accuracy on the grayed test images of a linear head
re-fitted on grey-background train images (the authors' ``finetuner.py``
``FineTuner(mtype, fg_only=True, epochs=20)``, read by ``attr_importance.py``
``plot_model_accs_bg_ablation``). When the model is scored through a linear head on frozen
features (the probe label map) of the ``adam-augmented-v1`` recipe, prepare fits that head
too -- the same recipe, seed and normalisation as the scoring head, with
``gray_background`` (:func:`hf_bgbench.probe.features.probed_classifier`; cached like it)
-- and compute scores every grayed test image through it as well
(``accuracy_grayed_refit``). ``--no-refit-head`` skips it; a model scored through its own
classes has no head to re-fit. Either way the result says so.
"""

from __future__ import annotations

from hf_bgbench.tasks.entry import entry_point
from hf_bgbench.tasks.graying.options import PER_IMAGE_FILE, GrayingOptions
from hf_bgbench.tasks.graying.settings import GrayingProtocolSettings
from hf_bgbench.tasks.options import REQUIRED
from hf_bgbench.tasks.task import Task, folder_hooks

ACCELERATOR_BATCH_SIZE = 64  # on a GPU when none is given (a CPU: devices.CPU_BATCH_SIZE)


GRAYING_OUTPUTS = (
    "graying.json",
    "graying.md",
    "graying_model_index.yaml",
    "graying.png",
    PER_IMAGE_FILE,
)


TASK = Task(
    name="graying",
    description="Background ablation: accuracy with every background pixel set to grey",
    options=GrayingOptions,
    **folder_hooks(__name__),
    outputs=GRAYING_OUTPUTS,
    gpu_batch_size=ACCELERATOR_BATCH_SIZE,
    settings=GrayingProtocolSettings,
    command_help="background ablation: accuracy with the background grayed",
)


run_graying = entry_point(
    TASK,
    "run_graying",
    """Background ablation by graying of ``model`` (a model id or a loaded classifier) with
    the :class:`GrayingOptions` ``options``: accuracy on clean and background-grayed test
    images and the drop, per class and overall. Returns the results document; with
    ``output_dir`` also writes graying.json, graying.md, graying_model_index.yaml and
    graying_images.parquet.""",
    model=REQUIRED,
    data=None,
)
