# Written by `bgbench export lmms-eval` from bgbench's benchmark spec: do not edit.
"""lmms-eval functions of bgbench's IN-9 tasks."""

from hf_bgbench.harnesses.lmms_eval_tasks import (  # noqa: F401
    TaskFunctions,
    counted_mean,
    negated_counted_mean,
    sum_of_terms,
)

open_task = TaskFunctions("in9", "open")
open_doc_to_text = open_task.doc_to_text
open_original_results = open_task.results_of("original")
open_only_bg_b_results = open_task.results_of("only_bg_b")
open_only_bg_t_results = open_task.results_of("only_bg_t")
open_no_fg_results = open_task.results_of("no_fg")
open_only_fg_results = open_task.results_of("only_fg")
open_mixed_same_results = open_task.results_of("mixed_same")
open_mixed_rand_results = open_task.results_of("mixed_rand")
open_mixed_next_results = open_task.results_of("mixed_next")
choice_text_task = TaskFunctions("in9", "choice-text")
choice_text_doc_to_text = choice_text_task.doc_to_text
choice_text_original_results = choice_text_task.results_of("original")
choice_text_only_bg_b_results = choice_text_task.results_of("only_bg_b")
choice_text_only_bg_t_results = choice_text_task.results_of("only_bg_t")
choice_text_no_fg_results = choice_text_task.results_of("no_fg")
choice_text_only_fg_results = choice_text_task.results_of("only_fg")
choice_text_mixed_same_results = choice_text_task.results_of("mixed_same")
choice_text_mixed_rand_results = choice_text_task.results_of("mixed_rand")
choice_text_mixed_next_results = choice_text_task.results_of("mixed_next")
doc_to_visual = open_task.doc_to_visual
