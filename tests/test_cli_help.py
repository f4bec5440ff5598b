"""The command line explains itself: --version, and help (with its default) on every option
of every sub-command; one spelling of the shared options everywhere."""

from __future__ import annotations

import argparse

import pytest

from hf_bgbench import __version__
from hf_bgbench.cli import all_parsers, build_parser, main


def _options():
    for parser in all_parsers(build_parser()):
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            yield parser.prog, action


def test_version(capsys):
    assert main(["--version"]) == 0  # answered before the parser is built
    assert capsys.readouterr().out.strip() == f"bgbench {__version__}"
    with pytest.raises(SystemExit) as stop:  # the parser's own, with other words
        main(["--version", "list"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.strip() == f"bgbench {__version__}"


def _loads(code: str) -> list[str]:
    """The heavy libraries a fresh interpreter has imported after running ``code``."""
    import subprocess
    import sys

    code += "\nimport sys; print(*[m for m in HEAVY if m in sys.modules])"
    heavy = "HEAVY = ('torch', 'transformers', 'timm', 'open_clip', 'gradio', 'matplotlib')\n"
    out = subprocess.run(
        [sys.executable, "-c", heavy + code], capture_output=True, text=True, check=True
    )
    return out.stdout.splitlines()[-1].split()


def test_version_and_help_load_no_model_stack():
    """`bgbench --version` answers before the parser is built, and the parser -- every
    command's help and flag checks -- is built without torch: the task registry names its
    hooks, imported at their first call (2 s and 800 MB each otherwise; bench/startup.py)."""
    assert _loads("from hf_bgbench.cli import main; main(['--version'])") == []
    assert _loads("from hf_bgbench.cli import build_parser; build_parser()") == []
    # a --data that can be nothing is refused before the model stack loads
    nowhere = "main(['evaluate', 'tf_efficientnet_lite0', '--data', '/nowhere/x/y', '--quiet'])"
    assert _loads(f"from hf_bgbench.cli import main; assert {nowhere} == 2") == []
    # ... and so is a model id no accepted form can hold
    malformed = "main(['evaluate', 'resnet 50!', '--quiet'])"
    assert _loads(f"from hf_bgbench.cli import main; assert {malformed} == 2") == []


def test_every_option_has_help():
    missing = [f"{prog} {a.dest}" for prog, a in _options() if not (a.help or "").strip()]
    assert missing == []


def test_shared_options_have_one_spelling():
    spellings: dict[str, set[str]] = {}
    for _, action in _options():
        if action.dest in ("quiet", "workers", "variants", "seed", "output"):
            spellings.setdefault(action.dest, set()).add(tuple(action.option_strings))
    assert spellings["quiet"] == {("--quiet", "--no-progress")}
    assert {s[0] for s in spellings["workers"]} == {"--workers"}


def test_workers_zero_is_accepted_everywhere():
    refused = []
    for prog, action in _options():
        if action.dest == "workers":
            try:
                action.type("0") if action.type else 0
            except argparse.ArgumentTypeError:
                refused.append(prog)
    assert refused == []


def test_help_shows_defaults(capsys):
    with pytest.raises(SystemExit):
        main(["evaluate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "images per forward pass (default: 8 on a CPU, 32 on a GPU)" in text
    assert "mixed_rand" in text  # --variants lists the valid names
    for task, gpu in (("noise", 64), ("saliency", 32)):  # small batches are faster on a CPU
        with pytest.raises(SystemExit):
            main([task, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        assert f"(default: 8 on a CPU, {gpu} on a GPU)" in text, task


def test_variants_comma_or_space_separated():
    from hf_bgbench.cli import build_parser
    from hf_bgbench.cli._common import task_options

    args = build_parser().parse_args(["evaluate", "--variants", "original,mixed_rand", "only_bg_t"])
    assert task_options(args)["variants"] == ["original", "mixed_rand", "only_bg_t"]


def test_task_commands_are_generated_from_their_options():
    """Each task's sub-command has one argument per command-line option of its options class,
    and reading the defaults back gives the options' own defaults (the CLI's output folder and
    default benchmark excepted)."""
    from hf_bgbench.cli._common import task_options
    from hf_bgbench.tasks import all_tasks
    from hf_bgbench.tasks.options import default_benchmark, described

    parser = build_parser()
    for task in all_tasks():
        kwargs = task_options(parser.parse_args([task.name]))
        offered = [name for name, opt, _ in described(task.options) if opt.cli]
        assert list(kwargs) == offered, task.name
        defaults = task.options()
        for name, value in kwargs.items():
            if name == "output_dir":
                assert str(value) == f"bgbench_{task.stem}", task.name
            elif name == "benchmark":
                assert value == default_benchmark()
            else:
                assert value == getattr(defaults, name), (task.name, name)


def test_task_options_check_their_values_before_any_work():
    from hf_bgbench.tasks import get_task

    for name, bad, message in (
        ("saliency", {"target": "other"}, "--target 'other': choose one of predicted, true"),
        ("evaluate", {"label_map": "x"}, "--label-map 'x': choose one of auto, model"),
        ("challenge", {"batch_size": 0}, "--batch-size must be >= 1, got 0"),
    ):
        with pytest.raises(ValueError, match=message):
            get_task(name).options(**bad)
