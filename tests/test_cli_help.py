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
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.strip() == f"bgbench {__version__}"


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
    from hf_bgbench.cli._common import variant_list

    assert variant_list(["original,mixed_rand", "only_bg_t"]) == [
        "original",
        "mixed_rand",
        "only_bg_t",
    ]
