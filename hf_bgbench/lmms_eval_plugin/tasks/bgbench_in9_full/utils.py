# Written by `bgbench export lmms-eval` from bgbench's benchmark spec: do not edit.
"""lmms-eval's functions of the tasks in this folder: bgbench's rules on the benchmark its
_default_template_yaml names (:func:`hf_bgbench.harnesses.lmms_eval_tasks.task_function`)."""

from hf_bgbench.harnesses.lmms_eval_tasks import task_function


def __getattr__(name: str):
    return task_function(__file__, name)
