"""The ``saliency`` task: does the model look at the object? (RIVAL10; Moayeri et al., 2022;
SPEC §2 "Saliency alignment").

For every image of the benchmark's mask variant (IN-9 ``original`` + ``mask``; RIVAL10
``ordinary`` + ``object_mask``), Grad-CAM on the predicted class -- or the true class --
gives a saliency map at the mask's size, compared with the object mask by the RIVAL10
authors' scores (:mod:`hf_bgbench.metrics.saliency`): IoU after max-normalising and
binarising at 0.5, the share of saliency inside the mask (saliency precision), delta density
(mean saliency on the object minus on the background), the average precision of the map as a
ranking of the mask's pixels, and the mask coverage of the most salient pixels holding 25,
50 and 75 % of the saliency (at 25 %: the saliency recall); where the data has attribute
masks (RIVAL10), also the share of saliency on each present attribute's mask.

Hooks over the runner: prepare = the mask variant (a seeded subset) at the size the model
takes (IN-9's 224x224 images as they are, RIVAL10's photos through the model's eval resize +
centre crop applied alike to image and masks); compute = the maps per batch
(:mod:`hf_bgbench.tasks.saliency.maps`); summarise = the protocol's ``aggregation``, by
default the authors' (``class-mean``: per predicted class a NaN-skipping mean, then the mean
over classes), with seeded percentile-bootstrap intervals, and the other aggregation (the
plain mean over images) as a secondary value (:mod:`hf_bgbench.tasks.saliency.summary`; the
report section: :mod:`hf_bgbench.tasks.saliency.report`).
"""

from __future__ import annotations

from hf_bgbench.tasks.entry import entry_point
from hf_bgbench.tasks.options import (
    REQUIRED,
)
from hf_bgbench.tasks.saliency.options import PER_IMAGE_FILE, SaliencyOptions
from hf_bgbench.tasks.saliency.settings import SaliencyProtocolSettings
from hf_bgbench.tasks.task import Task, folder_hooks

ACCELERATOR_BATCH_SIZE = 32  # on a GPU when none is given (a CPU: devices.CPU_BATCH_SIZE)


SALIENCY_OUTPUTS = (
    "saliency.json",
    "saliency.md",
    "saliency_model_index.yaml",
    "saliency.png",
    "saliency_gallery.png",
    PER_IMAGE_FILE,
)


TASK = Task(
    name="saliency",
    # a gradient map of the decision: a generative VLM decides by text, with none
    model_kinds=("trained", "zero-shot"),
    description="saliency alignment: Grad-CAM vs the object mask (IoU, share inside, "
    "delta density, average precision, saliency recall)",
    options=SaliencyOptions,
    **folder_hooks(__name__, paired=True),
    outputs=SALIENCY_OUTPUTS,
    gpu_batch_size=ACCELERATOR_BATCH_SIZE,
    settings=SaliencyProtocolSettings,
    command_help="saliency alignment: does the model's Grad-CAM sit on the object?",
)


run_saliency = entry_point(
    TASK,
    "run_saliency",
    """Saliency alignment of ``model`` (a model id or a loaded classifier) with the object
    masks of the benchmark, with the :class:`SaliencyOptions` ``options``. ``max_images``
    takes a seeded random subset (``seed``; the ids are recorded). Returns the results
    document (each score averaged per predicted class, then over classes, as the published
    protocol does, unless the protocol's ``aggregation`` is ``image-pooled``; the other
    aggregation as ``<score>_image_mean`` / ``<score>_class_mean``); with ``output_dir`` also
    writes saliency.json, saliency.md, saliency_model_index.yaml, saliency.png, the gallery of the
    ``gallery`` images with the lowest delta density (saliency_gallery.png) and the
    per-image values (saliency_per_image.parquet). ``batch_size`` defaults to 8 on a CPU and
    32 on a GPU; the numbers do not depend on it.""",
    model=REQUIRED,
    data=None,
)
