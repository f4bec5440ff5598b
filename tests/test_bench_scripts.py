"""The benchmarks in bench/ are run by hand, so nothing else notices when a library change
breaks one: each must still import (names it takes from the library or from another bench
script) and answer ``--help``. One subprocess runs them all, as ``python bench/X.py --help``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench"

_RUN_ALL = """
import contextlib, io, json, runpy, sys
sys.path.insert(0, sys.argv[1])
out = {}
for script in sys.argv[2:]:
    sys.argv = [script, "--help"]
    text = io.StringIO()
    try:
        with contextlib.redirect_stdout(text):
            runpy.run_path(script, run_name="__main__")
        out[script] = "returned without --help output"
    except SystemExit as stop:
        out[script] = text.getvalue() if stop.code in (0, None) else f"exit {stop.code}"
    except Exception as err:
        out[script] = f"{type(err).__name__}: {err}"
print(json.dumps(out))
"""


def test_every_bench_script_imports_and_answers_help():
    scripts = sorted(str(p) for p in BENCH.glob("*.py"))
    assert len(scripts) >= 9
    proc = subprocess.run(
        [sys.executable, "-c", _RUN_ALL, str(BENCH), *scripts],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    answers = json.loads(proc.stdout.strip().splitlines()[-1])
    broken = {Path(s).name: a for s, a in answers.items() if not a.startswith("usage:")}
    assert not broken, broken
