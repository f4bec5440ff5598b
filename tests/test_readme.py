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
