"""CI proves the README: .ci/run runs the README's two set-up commands word for word."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _setup_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Set up", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 1, "the Set up section has exactly one command block"
    return [line for line in blocks[0].splitlines() if line.strip()]


def test_readme_has_exactly_two_setup_commands_and_ci_runs_them():
    commands = _setup_commands()
    assert len(commands) == 2
    assert commands[0].startswith("pip install") and "pytest" in commands[1]
    ci = [
        line.strip()
        for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    for command in commands:
        assert command in ci, f".ci/run does not run the README command {command!r}"


def _readme_commands(page: str = "README.md") -> list[str]:
    """Every ``bgbench`` command in the bash blocks of ``page`` (continuation lines joined,
    comments and environment assignments dropped)."""
    import shlex

    readme = (ROOT / page).read_text(encoding="utf-8")
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", readme, flags=re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = re.sub(r"<[^<>\n]+>", "PLACEHOLDER", line)  # <path>, <release or folder>
            for part in re.split(r"\s(?:&&|\|\||\||;)\s", line):  # each command of a chain
                words = shlex.split(part, comments=True)
                while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]):
                    words = words[1:]
                if words and words[0] == "bgbench":
                    commands.append(shlex.join(words[1:]))
    return commands


def test_every_readme_bgbench_command_parses():
    """A README or docs command the CLI no longer takes (a renamed option, a gone choice)
    fails here."""
    import shlex

    import pytest

    from hf_bgbench.cli import build_parser

    commands = _readme_commands()
    assert len(commands) >= 3  # the main command and the try-it-now pair
    for page in sorted((ROOT / "docs").glob("*.md")):
        commands += _readme_commands(str(page.relative_to(ROOT)))
    assert len(commands) > 20
    parser = build_parser()
    broken = []
    for command in commands:
        try:
            parser.parse_args(shlex.split(command))
        except SystemExit:
            broken.append(command)
    if broken:
        pytest.fail("README commands that do not parse:\n" + "\n".join(broken))
