"""Reproduce a Space result on your own machine: the exact ``bgbench`` command that gives the
same results document, and the files the command line writes, offered for download.

* :func:`task_command` -- ``bgbench <task> MODEL --benchmark … --data … [options]`` from what
  the Space passed to the task (the Space's caps included: a seeded subset is the same
  subset on the command line), read off the task's own option declarations, so a new
  option or cap needs no edit here; :func:`run_command` -- the same for an allow-listed
  dataset, and :func:`reproduce_section` -- it as a run's "Reproduce this" section;
* :func:`data_argument` -- what ``--data`` says: a Hub dataset's id as it is; a folder on the
  server by its allow-list name, with a note to put the path of one's own copy in its place
  (the results' data fingerprint says whether the copy holds the same images);
* :func:`report_command` -- ``bgbench report MODEL --data … --task-option …``: the Report
  card tab's report, its caps as the tasks' own flags;
* :func:`reproduce_markdown` -- the commands as a section of the page;
* :func:`cli_files` -- ``results.md`` and the per-image files the run wrote (``predictions/
  <variant>.parquet`` for ``evaluate``; any Parquet file among the task's declared outputs),
  as the command line writes them, with no server path in the Markdown.
"""

from __future__ import annotations

import shlex
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hf_bgbench.space.checks.allowlist import AllowedDataset
from hf_bgbench.space.views.display import public_text

# options that do not change the numbers, or that the command line sets by other means
_NOT_SHOWN = {"benchmark", "data", "output_dir", "progress", "device", "batch_size", "num_workers"}


def data_argument(entry: AllowedDataset) -> tuple[str, str]:
    """(``--data``'s text, a note on it; empty when none is needed) for an allow-listed
    dataset."""
    if entry.is_hub:
        return entry.target, ""
    return entry.name, (
        f"`{entry.name}` is this Space's own copy of the data: put the path of your copy in "
        "its place. The data fingerprint in results.json says whether your copy holds the "
        "same images."
    )


def _flag_value(value: Any) -> list[str]:
    if isinstance(value, list | tuple):
        return [str(v) for v in value]
    return [str(value)]


def _given(value: Any, opt: Any, default: Any) -> bool:
    """Whether an option's ``value`` differs from what the command line gives it when its
    flag is left out (a switch: its default; else the default the command line shows)."""
    if isinstance(default, bool):
        return bool(value) != default
    return value is not None and value != opt.command_line_default(default)


def task_command(
    task: str,
    model_id: str,
    benchmark: str,
    data: str,
    options: Mapping[str, Any],
    output: str | None = None,
) -> str:
    """The ``bgbench`` command that runs ``task`` as the Space did: ``options`` are the task's
    keyword arguments the Space passed (variants, caps, the class restriction); each that
    differs from the command line's default becomes its flag. ``output``: ``--output``'s
    folder (the command line's default when None)."""
    from hf_bgbench.tasks import get_task
    from hf_bgbench.tasks.options import described, flag

    words = ["bgbench", task, model_id, "--benchmark", benchmark, "--data", data]
    for name, opt, default in described(get_task(task).options):
        if name in _NOT_SHOWN or name not in options:
            continue
        value = options[name]
        if not opt.cli:
            raise ValueError(f"{task} option {name!r} has no command-line flag to reproduce it.")
        if not _given(value, opt, default):
            continue
        if isinstance(default, bool):
            words.append(flag(name, opt))
        else:
            words += [flag(name, opt), *_flag_value(value)]
    if output:
        words += ["--output", output]
    return " ".join(shlex.quote(w) for w in words)


def run_command(
    task: str, model_id: str, entry: AllowedDataset, options: dict[str, Any], output: str = ""
) -> str:
    """The exact ``bgbench`` command of a run (the data as :func:`data_argument` names it)."""
    data, _ = data_argument(entry)
    return task_command(task, model_id, options["benchmark"], data, options, output or None)


def reproduce_section(
    task: str, model_id: str, entry: AllowedDataset, options: dict[str, Any], output: str = ""
) -> str:
    """The "Reproduce this" section of a run: its exact ``bgbench`` command."""
    command = run_command(task, model_id, entry, options, output)
    return reproduce_markdown([command], [data_argument(entry)[1]])


def report_command(
    model_id: str,
    data: Mapping[str, AllowedDataset],
    caps: Mapping[str, Mapping[str, Any]],
) -> str:
    """The ``bgbench report`` command that makes the report card as the Space did: ``data``:
    benchmark -> the allow-listed dataset it was scored on (``--data``, as
    :func:`data_argument` gives it; ``--benchmarks`` when they are not every benchmark with
    headlines); ``caps``: task -> the options the Space passed it
    (:func:`hf_bgbench.space.views.report_card.report_caps`), each that differs from the task
    command's default as a ``--task-option`` (which
    :func:`hf_bgbench.report.task_options.parse_task_options` reads back)."""
    from hf_bgbench.benchmarks import all_specs
    from hf_bgbench.builders.arguments import declared
    from hf_bgbench.report.task_options import task_option_text
    from hf_bgbench.tasks import get_task

    words = ["bgbench", "report", model_id]
    if data and set(data) != {s.name for s in all_specs() if s.report}:
        words += ["--benchmarks", *data]
    for benchmark, entry in data.items():
        words += ["--data", f"{benchmark}={data_argument(entry)[0]}"]
    for task, options in caps.items():
        defaults = {name: (opt, d) for name, opt, d in declared(get_task(task).options)}
        for name, value in options.items():
            # (an unknown one is left to task_option_text, which says so)
            if name in defaults and not _given(value, *defaults[name]):
                continue
            words += ["--task-option", task_option_text(task, name, value)]
    return " ".join(shlex.quote(w) for w in words)


def install_hint() -> str:
    """How a visitor installs what this Space runs: hf-bgbench is on no package index, so
    the wheel this Space carries (``bgbench publish-space`` uploads it under ``wheels/``), by
    its address on the Hub; outside a Space, from a checkout of the source."""
    import os

    from hf_bgbench import __version__

    space = os.environ.get("SPACE_ID")
    if not space:
        return "install hf-bgbench from its source: `pip install -e .` in a checkout"
    wheel = f"hf_bgbench-{__version__}-py3-none-any.whl"
    return f"`pip install https://huggingface.co/spaces/{space}/resolve/main/wheels/{wheel}`"


def reproduce_markdown(
    commands: Sequence[str], notes: Sequence[str] = (), document: str = "results.json"
) -> str:
    """The commands as a "Reproduce this" section: run them (installed as
    :func:`install_hint` says) and the results document (``document``: its file name)
    holds the same numbers."""
    block = "\n".join(commands)
    lines = [
        "### Reproduce this",
        "",
        f"The same {document} on your machine ({install_hint()}), with this Space's caps and data:",
        "",
        f"```bash\n{block}\n```",
    ]
    lines += [f"\n{note}" for note in notes if note]
    return "\n".join(lines)


def cli_files(folder: Path, results: Mapping[str, Any], hide: Mapping[str, str]) -> list[Path]:
    """The task's Markdown report (``results.md`` for ``evaluate``; no server path in it) and
    the run's per-image files, copied into ``folder/download`` under the names the command
    line gives them (``predictions/mixed_same.parquet`` is offered as ``mixed_same.parquet``)."""
    from hf_bgbench.tasks import get_task

    out = folder / "download"
    files = []
    name = f"{get_task(results['task']).stem}.md"
    markdown = folder / name
    if markdown.is_file():
        target = out / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(public_text(markdown.read_text(encoding="utf-8"), hide), encoding="utf-8")
        files.append(target)
    for source in per_image_paths(folder, results["task"]):
        target = out / source.relative_to(folder)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        files.append(target)
    return files


def per_image_paths(folder: Path, task: str) -> list[Path]:
    """The per-image tables ``task`` wrote into ``folder``: each Parquet file among the
    task's declared outputs, and those of a declared folder (``predictions/``)."""
    from hf_bgbench.tasks import get_task

    found: list[Path] = []
    for output in get_task(task).outputs:
        if output.endswith("/"):
            found += sorted((folder / output).glob("*.parquet"))
        elif output.endswith(".parquet") and (folder / output).is_file():
            found.append(folder / output)
    return found
