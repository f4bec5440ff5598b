# Written by `bgbench export lmms-eval` from bgbench's benchmark spec: do not edit.
"""lmms-eval functions of bgbench's ImageNet-W tasks."""

from hf_bgbench.harnesses.lmms_eval_tasks import (  # noqa: F401
    TaskFunctions,
    counted_mean,
    negated_counted_mean,
    sum_of_terms,
)

open_task = TaskFunctions("watermark", "open")
open_doc_to_text = open_task.doc_to_text
open_original_results = open_task.results_of("original")
open_watermark_results = open_task.results_of("watermark")
doc_to_visual = open_task.doc_to_visual
