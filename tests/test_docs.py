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


@pytest.mark.slow  # builds IN-9 from the shared photos (GrabCut) and scores it: about a minute
def test_the_readmes_try_it_now_commands_print_the_readmes_numbers(tmp_path, monkeypatch):
    """The README's numbers are measured: its two "try it" commands, run as written (in a
    scratch folder beside the shared data), give the accuracies its table shows."""
    import json
    import shlex

    from hf_bgbench.cli import main

    shared = ROOT.parent / "shared" / "data" / "in9_samples"
    if not shared.is_dir():
        pytest.skip(f"no shared sample photos at {shared}")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = next(
        b for b in re.findall(r"```bash\n(.*?)```", readme, flags=re.S) if "bgbench build" in b
    )
    work = tmp_path / "work"  # ../shared resolves beside the repository, as in the README
    work.mkdir()
    (tmp_path / "shared").symlink_to(ROOT.parent / "shared")
    monkeypatch.chdir(work)
    for line in block.strip().splitlines():
        words = shlex.split(line)
        assert words[0] == "bgbench"
        assert main([*words[1:], "--quiet"]) == 0
    doc = json.loads((work / "results" / "results.json").read_text())
    header = next(line for line in readme.splitlines() if line.startswith("| variant | original"))
    row = next(line for line in readme.splitlines() if line.startswith("| accuracy (%) |"))
    names = [c.strip() for c in header.strip("|").split("|")][1:]
    values = [c.strip().split()[0] for c in row.strip("|").split("|")][1:]
    measured = {v: f"{100 * r['accuracy']:.1f}" for v, r in doc["variants"].items()}
    measured["BG-GAP"] = f"{100 * doc['bg_gap']:.1f}"
    assert dict(zip(names, values, strict=True)) == {n: measured[n] for n in names}
