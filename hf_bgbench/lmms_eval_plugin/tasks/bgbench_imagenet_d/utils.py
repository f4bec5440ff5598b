# Written by `bgbench export lmms-eval` from bgbench's benchmark spec: do not edit.
"""lmms-eval functions of bgbench's ImageNet-D tasks."""

from hf_bgbench.harnesses.lmms_eval_tasks import (  # noqa: F401
    TaskFunctions,
    counted_mean,
    negated_counted_mean,
    sum_of_terms,
)

pair_task = TaskFunctions("imagenet-d", "pair")
pair_doc_to_text = pair_task.doc_to_text
pair_background_results = pair_task.results_of("background")
pair_texture_results = pair_task.results_of("texture")
pair_material_results = pair_task.results_of("material")
pair_clean_results = pair_task.results_of("clean")
doc_to_visual = pair_task.doc_to_visual
