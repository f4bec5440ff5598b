"""The front door and the rooms: the README stays short and its links lead somewhere; the
docs site builds in strict mode (a broken link, a missing anchor or a page left out of the
navigation fails it), its API reference generated from the docstrings."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README_MAX_LINES = 300


def test_the_readme_is_a_front_door():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme.count("\n") <= README_MAX_LINES
    for benchmark in ("ImageNet-9", "RIVAL10", "ImageNet-E", "ImageNet-D", "ImageNet-W"):
        assert benchmark in readme
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme)
    local = [t for t in targets if "://" not in t]
    assert local and all((ROOT / t).exists() for t in local), [
        t for t in local if not (ROOT / t).exists()
    ]


@pytest.mark.slow  # a subprocess building the whole site
def test_the_docs_site_builds_strictly(tmp_path):
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent))
    argv = [mkdocs] if mkdocs else [sys.executable, "-m", "mkdocs"]
    done = subprocess.run(
        [*argv, "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**__import__("os").environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    api = (tmp_path / "site" / "api" / "index.html").read_text(encoding="utf-8")
    assert "evaluate_model" in api and "load_classifier" in api  # from the docstrings
