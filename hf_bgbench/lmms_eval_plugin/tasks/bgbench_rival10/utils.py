# Written by `bgbench export lmms-eval` from bgbench's benchmark spec: do not edit.
"""lmms-eval functions of bgbench's RIVAL10 tasks."""

from hf_bgbench.harnesses.lmms_eval_tasks import (  # noqa: F401
    TaskFunctions,
    counted_mean,
    negated_counted_mean,
    sum_of_terms,
)

open_task = TaskFunctions("rival10", "open")
open_doc_to_text = open_task.doc_to_text
open_ordinary_results = open_task.results_of("ordinary")
choice_text_task = TaskFunctions("rival10", "choice-text")
choice_text_doc_to_text = choice_text_task.doc_to_text
choice_text_ordinary_results = choice_text_task.results_of("ordinary")
doc_to_visual = open_task.doc_to_visual
