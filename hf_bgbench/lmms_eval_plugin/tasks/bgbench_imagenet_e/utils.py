# Written by `bgbench export lmms-eval` from bgbench's benchmark spec: do not edit.
"""lmms-eval functions of bgbench's ImageNet-E tasks."""

from hf_bgbench.harnesses.lmms_eval_tasks import (  # noqa: F401
    TaskFunctions,
    counted_mean,
    negated_counted_mean,
    sum_of_terms,
)

open_task = TaskFunctions("imagenet-e", "open")
open_doc_to_text = open_task.doc_to_text
open_original_results = open_task.results_of("original")
open_bg_inversion_results = open_task.results_of("bg_inversion")
open_bg_simpler_results = open_task.results_of("bg_simpler")
open_bg_complex_results = open_task.results_of("bg_complex")
open_bg_complex_adv_results = open_task.results_of("bg_complex_adv")
open_bg_random_results = open_task.results_of("bg_random")
open_bg_texture_results = open_task.results_of("bg_texture")
open_size_full_results = open_task.results_of("size_full")
open_size_0_1_results = open_task.results_of("size_0.1")
open_size_0_08_results = open_task.results_of("size_0.08")
open_size_0_05_results = open_task.results_of("size_0.05")
open_position_results = open_task.results_of("position")
open_rotation_results = open_task.results_of("rotation")
doc_to_visual = open_task.doc_to_visual
