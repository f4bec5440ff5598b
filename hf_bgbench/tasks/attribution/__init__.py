"""The ``attribution`` task: which penultimate-layer feature localises each attribute, and does
it still do so on unseen images? (Moayeri et al., 2022, Sec. 5, Fig. 10; SPEC §2 "Other
analyses").

For each class c and each examined feature f: the ``top_k`` training images of class c with
the highest activation of f; Grad-CAM with respect to f on each of them, binarised at ``tau``
of its maximum; IoU with each attribute's mask (0 on an image without the attribute),
averaged over the top-k images. Per (class, attribute), the feature with the highest mean
IoU is its best candidate; on the test split, the same rule (top-k test images of class c by
that feature, the same IoU) says whether it generalises.

Hooks: prepare = both splits of the mask variant with attribute masks, at the protocol's
size; compute = feature and Grad-CAM passes (:mod:`~hf_bgbench.tasks.attribution.cam`);
summarise = the numbers (:mod:`~hf_bgbench.tasks.attribution.summary`) and the report section
(:mod:`~hf_bgbench.tasks.attribution.report`).
"""

from __future__ import annotations

from hf_bgbench.tasks.attribution.options import OUTPUTS, AttributionOptions
from hf_bgbench.tasks.attribution.settings import AttributionProtocolSettings
from hf_bgbench.tasks.entry import entry_point
from hf_bgbench.tasks.options import REQUIRED
from hf_bgbench.tasks.task import Task, folder_hooks

ACCELERATOR_BATCH_SIZE = 32  # on a GPU when none is given (a CPU: devices.CPU_BATCH_SIZE)


TASK = Task(
    name="attribution",
    # a gradient map of the decision: a generative VLM decides by text, with none
    model_kinds=("trained", "zero-shot"),
    description="neural-feature attribution: the feature whose Grad-CAM best matches each "
    "attribute's mask, on train and test",
    options=AttributionOptions,
    **folder_hooks(__name__),
    outputs=OUTPUTS,
    gpu_batch_size=ACCELERATOR_BATCH_SIZE,
    settings=AttributionProtocolSettings,
    command_help="neural-feature attribution: best feature per attribute, train vs test",
)


run_attribution = entry_point(
    TASK,
    "run_attribution",
    """Neural-feature attribution of ``model`` (a model id or a loaded classifier) with the
    :class:`AttributionOptions` ``options``. Returns the results document; with
    ``output_dir`` also writes attribution.json, attribution.md,
    attribution_model_index.yaml, attribution.png and attribution_gallery.png.""",
    model=REQUIRED,
    data=None,
)
