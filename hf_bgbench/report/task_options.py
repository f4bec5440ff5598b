"""``bgbench report --task-option TASK.FLAG=VALUE``: a task's own command-line option given to
the report (e.g. the Space's caps, ``noise.max-images=100``), read from the task's option
declarations -- so a task registered from outside the package gets its options too -- and
:func:`task_option_text`, its inverse (the Space's "Reproduce this" command)."""

from __future__ import annotations

import argparse
import difflib
import re
from collections.abc import Mapping, Sequence
from typing import Any

from hf_bgbench.builders.arguments import Option, declared, flag
from hf_bgbench.report.card import ReportError, report_specs
from hf_bgbench.tasks import get_task
from hf_bgbench.tasks.options import described

# The task options run_report sets on every task itself (by `common` and execute's
# arguments), each with the report's own flag that sets it: a --task-option may not.
REPORT_SET_OPTIONS = {
    "benchmark": "--benchmarks",
    "data": "--data",
    "output_dir": "--output",
    "seed": "--seed",
    "checkpoint": "--checkpoint",
    "device": "--device",
    "batch_size": "--batch-size",
    "num_workers": "--workers",
    "progress": "--quiet",
    "zero_shot_classes": "--zero-shot-classes",
    "templates": "--templates",
}


def _flag_word(text: str) -> str:
    """A flag as ``--task-option`` spells it: no leading dashes, underscores as dashes."""
    return text.lstrip("-").replace("_", "-")


def _refusal(name: str, opt: Option) -> str:
    """Why option ``name`` cannot be a ``--task-option`` ("" when it can)."""
    if name in REPORT_SET_OPTIONS:
        return f"the report sets it itself: give bgbench report {REPORT_SET_OPTIONS[name]}"
    if not opt.cli:
        return "it has no command-line flag (only run_report(task_options=...) sets it)"
    return ""


def task_option_flags(task: str) -> dict[str, tuple[str, Option, Any]]:
    """The flags a ``--task-option`` may give ``task`` (each of the task command's flags of
    an option, without its dashes) -> (the option's name, its declaration, its default):
    every command-line option of the task but those the report sets itself
    (:data:`REPORT_SET_OPTIONS`)."""
    options = get_task(task).options
    typed = {name: (opt, default) for name, opt, default in declared(options)}  # parse filled
    offered = {}
    for name, _, _ in described(options):  # the command's order: the task's own flags first
        opt, default = typed[name]
        if not _refusal(name, opt):
            for text in opt.flags or (flag(name, opt),):
                offered[_flag_word(text)] = (name, opt, default)
    return offered


def _close(word: str, known: Sequence[str]) -> str:
    match = difflib.get_close_matches(word, known, n=1)
    return f" (did you mean {match[0]}?)" if match else ""


def _option_value(
    pair: str,
    task: str,
    name: str,
    opt: Option,
    default: Any,
    text: str,
    given_as: str = "--task-option",
) -> Any:
    """``text`` read as the task command reads option ``name``'s flag (``given_as``: the
    report's flag that gave it, for the messages)."""
    shown = flag(name, opt)
    if isinstance(default, bool):  # a switch: true = the flag given
        if text.lower() not in ("true", "false"):
            raise ReportError(
                f"{given_as} {pair!r}: {shown} is a switch: give true or false "
                f"({task}.{_flag_word(shown)}=true is `bgbench {task} {shown}`)."
            )
        given = text.lower() == "true"
        return not given if opt.negated else given
    several = opt.many or opt.count is not None
    words = [w for w in re.split(r"[,\s]+", text) if w] if several else [text]
    if opt.count is not None and len(words) != opt.count:
        raise ReportError(
            f"{given_as} {pair!r}: {shown} takes {opt.count} values, comma-separated; "
            f"got {len(words)}."
        )
    values = []
    for word in words:
        try:
            value = opt.parse(word) if opt.parse else word
        except (ValueError, TypeError, argparse.ArgumentTypeError) as err:
            reason = (
                str(err)
                if isinstance(err, argparse.ArgumentTypeError)
                else f"invalid {getattr(opt.parse, '__name__', 'value')} value ({err})"
            )
            raise ReportError(
                f"{given_as} {pair!r}: {shown} {word!r}: {reason}; give a value "
                f"`bgbench {task} {shown}` takes (`bgbench {task} --help`)."
            ) from None
        if opt.choices is not None:
            by_text = {str(c): c for c in opt.choices}
            value = by_text.get(str(value), value)
            if value not in opt.choices:
                raise ReportError(
                    f"{given_as} {pair!r}: {shown} {word!r}: choose one of "
                    f"{', '.join(map(str, opt.choices))}."
                )
        values.append(value)
    return values if several else values[0]


def parse_task_options(
    pairs: Sequence[str] | None, benchmarks: Sequence[str] | None = None
) -> dict[str, dict[str, Any]]:
    """``--task-option TASK.FLAG=VALUE`` (repeatable) -> {task: {option name: value}}, the
    ``task_options`` of :func:`run_report`. FLAG is the task command's own flag without its
    dashes (``noise.max-images=200``; underscores for dashes too), VALUE read as that flag
    reads it (a switch: true or false; several values: comma-separated). Each is checked
    against the tasks of the report over ``benchmarks`` (default: every benchmark with
    headlines) and each task's option declarations, so a task registered from outside gets
    its options too; the options the report sets itself (:data:`REPORT_SET_OPTIONS`) are
    refused, as is an option given twice."""
    out: dict[str, dict[str, Any]] = {}
    if not pairs:
        return out
    tasks = list(dict.fromkeys(t for s in report_specs(benchmarks) for t in s.report_tasks))
    for pair in pairs:
        key, sep, text = pair.partition("=")
        task, dot, word = key.partition(".")
        if not (sep and dot and task and word and text):
            raise ReportError(
                f"--task-option {pair!r}: give TASK.FLAG=VALUE, FLAG a flag of "
                "`bgbench TASK --help` without its dashes, e.g. --task-option "
                "noise.max-images=200."
            )
        if task not in tasks:
            raise ReportError(
                f"--task-option {pair!r}: {task!r} is not a task of this report"
                f"{_close(task, tasks)}; its tasks: {', '.join(tasks)}."
            )
        offered = task_option_flags(task)
        word = _flag_word(word)
        if word not in offered:
            raise ReportError(f"--task-option {pair!r}: {_unknown_flag(task, word, offered)}")
        name, opt, default = offered[word]
        if name in out.setdefault(task, {}):
            raise ReportError(f"--task-option gives {task} {flag(name, opt)} twice; give it once.")
        out[task][name] = _option_value(pair, task, name, opt, default, text)
    return out


def _unknown_flag(task: str, word: str, offered: Mapping[str, Any]) -> str:
    """What to say of a ``--task-option`` flag ``word`` that ``task`` does not offer."""
    spelled: dict[str, str] = {}  # an option's name, dashed -> its flag (use-cache -> no-cache)
    for name, opt, _ in declared(get_task(task).options):
        first = _flag_word(flag(name, opt))
        refused = _refusal(name, opt)
        spellings = {_flag_word(name), *(_flag_word(f) for f in opt.flags or (first,))}
        if refused and word in spellings:
            return f"{task}'s --{first} cannot be a --task-option: {refused}."
        if not refused:
            spelled[_flag_word(name)] = first
    if word in spelled:
        hint = f" (did you mean {spelled[word]}?)"
    else:
        hint = _close(word, list(offered))
    return (
        f"bgbench {task} has no flag --{word}{hint}; its flags: "
        f"{', '.join(dict.fromkeys(offered))}."
    )


def task_option_text(task: str, name: str, value: Any) -> str:
    """``TASK.FLAG=VALUE``: the ``--task-option`` that :func:`parse_task_options` reads as
    ``task``'s option ``name`` set to ``value`` (its inverse)."""
    for word, (option_name, opt, default) in task_option_flags(task).items():
        if option_name != name:
            continue
        if isinstance(default, bool):
            text = str(bool(value) != opt.negated).lower()
        elif isinstance(value, list | tuple):
            text = ",".join(str(v) for v in value)
        else:
            text = str(value)
        return f"{task}.{word}={text}"
    refused = next(
        (_refusal(n, o) for n, o, _ in declared(get_task(task).options) if n == name), ""
    )
    raise ReportError(
        f"The {task} task's option {name!r} cannot be a --task-option: "
        f"{refused or 'the task has no such option'}."
    )


def parse_model_options(pairs: Sequence[str] | None) -> dict[str, Any]:
    """``--model-option FLAG=VALUE`` (repeatable) -> {option name: value}: how the model is
    reached and scored, given to every task of the report -- a generative VLM's rule
    (``vlm-protocol=open``, ``circular=4``) and a served model's endpoint
    (``api-base=http://host:8000/v1``, ``api-server=vllm``); read as ``bgbench evaluate``
    reads the flag. Any other flag is refused, naming those it takes, as is one given twice."""
    from hf_bgbench.tasks.options import SERVED_OPTIONS, VLM_OPTIONS, RunOptions

    typed = {name: (opt, default) for name, opt, default in declared(RunOptions)}
    offered = {
        _flag_word(flag(name, typed[name][0])): (name, *typed[name])
        for name in (*VLM_OPTIONS, *SERVED_OPTIONS)
    }
    out: dict[str, Any] = {}
    for pair in pairs or ():
        word, sep, text = pair.partition("=")
        word = _flag_word(word)
        if not (sep and word and text):
            raise ReportError(
                f"--model-option {pair!r}: give FLAG=VALUE, e.g. --model-option "
                "api-base=http://localhost:8000/v1."
            )
        if word.replace("_", "-") not in offered:
            raise ReportError(
                f"--model-option {pair!r}: {word} is not an option of the model; it takes "
                f"{', '.join(sorted(offered))}{_close(word, list(offered))}."
            )
        name, opt, default = offered[word.replace("_", "-")]
        if name in out:
            raise ReportError(f"--model-option {pair!r}: {word} is given twice.")
        out[name] = _option_value(pair, "<task>", name, opt, default, text, "--model-option")
    return out
